"""A run's learning curve on the fixed Elo scale: every evaluated generation's ladder rating.

`minigo ladder rate` (the workflow's `ladder_rating` rule) writes `eval/genGGGG/ladder.json` for each
evaluated generation when the run's board size has a calibrated ladder (`config/ladder/NxN.json`). This
module reads them back, with two x axes for the curve: the model file's time (as the run's own learning curve
uses) and the self-play positions recorded before the model was trained (the games-complete markers of
generations 0 .. g-1: a compute-independent axis). `plots.plot_ladder_curve` draws it, `progress` and
`status` show the newest and each generation's rating.
"""

from __future__ import annotations

import json
import math
import os
import re

from minigo_core.data import layout
from minigo_core.data.games_complete import read_marker
from minigo_core.report.ladder import LadderError, read_ladder

_GEN_DIR = re.compile(r"^gen(\d{4,})$")


def read_rating(path: str) -> dict | None:
    """One `ladder.json` (None when missing, unreadable or without a finite rating and interval)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    elo, ci = data.get("elo"), data.get("ci95")
    numbers = [elo, *(ci if isinstance(ci, list) and len(ci) == 2 else [None, None])]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in numbers):
        return None
    return data


def read_ratings(root: str) -> dict[int, dict]:
    """generation -> its ladder rating, for every `eval/gen*/ladder.json` of the run that reads."""
    try:
        names = os.listdir(layout.evals_dir(root))
    except OSError:
        return {}
    ratings = {}
    for name in names:
        m = _GEN_DIR.match(name)
        if m and (rating := read_rating(layout.ladder_rating_path(root, int(m.group(1))))) is not None:
            ratings[int(m.group(1))] = rating
    return dict(sorted(ratings.items()))


def positions_before(root: str, generations: list[int]) -> dict[int, int]:
    """generation g -> self-play positions recorded by generations 0 .. g-1 (their games-complete markers);
    only while every one of those markers reads."""
    out: dict[int, int] = {}
    total, g_done = 0, 0
    for g in sorted(generations):
        while g_done < g:
            marker = read_marker(root, g_done)
            if marker is None or not isinstance(marker.get("positions"), int):
                return out
            total += marker["positions"]
            g_done += 1
        out[g] = total
    return out


def curve(root: str, times: dict[int, float]) -> list[dict]:
    """The points of the fixed-scale curve: generation, Elo, 95% interval, minutes since generation 0's
    model (None without model times) and self-play positions before it (None when a marker is missing)."""
    ratings = read_ratings(root)
    positions = positions_before(root, list(ratings))
    start = times.get(0, min(times.values(), default=None))
    points = []
    for g, r in ratings.items():
        minutes = (times[g] - start) / 60.0 if g in times and start is not None else None
        points.append(
            {
                "generation": g,
                "elo": float(r["elo"]),
                "ci95": [float(r["ci95"][0]), float(r["ci95"][1])],
                "minutes": minutes,
                "positions": positions.get(g),
                "bracket": r.get("bracket"),
            }
        )
    return points


def ladder_rungs(board_size: int) -> list[tuple[str, float]] | None:
    """The rungs (name, Elo; increasing) of the board size's ladder, or None when it has none (or it is
    unreadable: the plot then says there is no ladder)."""
    try:
        ladder = read_ladder(board_size)
    except LadderError:
        return None
    return [(r.player, r.elo) for r in ladder.rungs]


def rungs_around(rungs: list[tuple[str, float]], low: float, high: float) -> list[tuple[str, float]]:
    """The rungs (name, Elo; increasing) within [low, high], plus the nearest below and the nearest above."""
    inside = [r for r in rungs if low <= r[1] <= high]
    below = [r for r in rungs if r[1] < low][-1:]
    above = [r for r in rungs if r[1] > high][:1]
    return below + inside + above


def rung_labels(rungs: list[tuple[str, float]], min_gap: float) -> list[tuple[str, float]]:
    """One label per group of rungs (name, Elo; increasing) closer than `min_gap` Elo to the group's lowest:
    `uct:4096 / gnugo:1+r14` at the lowest one's Elo, so that labels of near-equal rungs do not overlap."""
    groups: list[tuple[list[str], float]] = []
    for name, elo in rungs:
        if groups and elo - groups[-1][1] < min_gap:
            groups[-1][0].append(name)
        else:
            groups.append(([name], elo))
    return [(" / ".join(names), elo) for names, elo in groups]


def between(rating: dict) -> str:
    """`between uct:4096 and gnugo:1`: the bracketing rungs of a rating file, else the played rungs around it
    (`above X` / `below Y` off the ends), else ''."""
    if rating.get("bracket"):
        low, high = rating["bracket"]
        return f"between {low} and {high}"
    rungs = rating.get("rungs") if isinstance(rating.get("rungs"), dict) else {}
    elos = sorted(
        (float(v["rung_elo"]), k) for k, v in rungs.items() if isinstance(v, dict) and "rung_elo" in v
    )
    lower = [k for e, k in elos if e <= rating["elo"]]
    upper = [k for e, k in elos if e > rating["elo"]]
    if lower and upper:
        return f"between {lower[-1]} and {upper[0]}"
    if lower:
        return f"above {lower[-1]}"
    return f"below {upper[0]}" if upper else ""


def rating_text(rating: dict, generation: int) -> str:
    """`Elo 1230 [1180, 1280], between uct:4096 and gnugo:1 (gen 40)`: the live line's strength part."""
    lo, hi = rating["ci95"]
    where = between(rating)
    return f"Elo {rating['elo']:.0f} [{lo:.0f}, {hi:.0f}]{', ' + where if where else ''} (gen {generation})"
