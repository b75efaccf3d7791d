"""A run's learning curve on the fixed Elo scale: every evaluated generation's ladder rating.

`minigo ladder rate` (the workflow's `ladder_rating` rule) writes `eval/genGGGG/ladder.json` for each
evaluated generation when the run's board size has a calibrated ladder (`config/ladder/NxN.json`), and
before it (the `ladder_first_rating` rule) a first, quick rating `ladder_first.json` of a few games; a
generation's rating here is its full one, else its first one (marked `"first": True`). This
module reads them back, with two x axes for the curve: the model file's time and the self-play positions
recorded before the model was trained (the games-complete markers of generations 0 .. g-1: a
compute-independent axis). `plots.plot_learning_curve` draws it (the run's `learning_curve.png`),
`progress` and `status` show the newest and each generation's rating, `format_summary` the table `minigo
run` ends with.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence

from minigo_core.data import layout
from minigo_core.data.games_complete import read_marker
from minigo_core.rating.ladder import LadderError, read_ladder

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


def generation_rating(root: str, generation: int) -> dict | None:
    """`generation`'s full ladder rating (`ladder.json`), else its first one (`ladder_first.json`, returned
    with `"first": True`), else None."""
    full = read_rating(layout.ladder_rating_path(root, generation))
    if full is not None:
        return full
    first = read_rating(layout.ladder_first_rating_path(root, generation))
    return None if first is None else {**first, "first": True}


def read_ratings(root: str) -> dict[int, dict]:
    """generation -> its ladder rating (`generation_rating`), for every generation folder of `eval/` that
    has one."""
    try:
        names = os.listdir(layout.evals_dir(root))
    except OSError:
        return {}
    ratings = {}
    for name in names:
        m = _GEN_DIR.match(name)
        if m and (rating := generation_rating(root, int(m.group(1)))) is not None:
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
                "first": bool(r.get("first")),
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


def generation_label(rating: dict, generation: int) -> str:
    """`gen 40`, or `gen 40, first rating` for a first rating (a few games; its full one comes later)."""
    return f"gen {generation}, first rating" if rating.get("first") else f"gen {generation}"


def rating_text(rating: dict, generation: int) -> str:
    """`Elo 1230 [1180, 1280], between uct:4096 and gnugo:1 (gen 40)`: the live line's strength part."""
    lo, hi = rating["ci95"]
    where = between(rating)
    label = generation_label(rating, generation)
    return f"Elo {rating['elo']:.0f} [{lo:.0f}, {hi:.0f}]{', ' + where if where else ''} ({label})"


def games_of(rating: dict) -> int | None:
    """The games a rating file rests on (the sum over its rungs), or None when it does not say."""
    if isinstance(rating.get("games"), int):
        return rating["games"]
    rungs = rating.get("rungs") if isinstance(rating.get("rungs"), dict) else {}
    counts = [v.get("games") for v in rungs.values() if isinstance(v, dict)]
    return sum(counts) if counts and all(isinstance(n, int) for n in counts) else None


def format_summary(
    ratings: dict[int, dict],
    rungs: list[tuple[str, float]] | None,
    board_size: int,
    against: Sequence[str] = (),
) -> str:
    """The end-of-run strength table on the fixed Elo ladder: one line per rated generation (Elo, 95%
    interval, games, bracketing rungs), then the newest against each rung named in `against` (the GNU Go
    levels the run played: `GNU Go 1: 1707 on the table; generation 15: 1160 [1060, 1257]`)."""
    n = f"{board_size}x{board_size}"
    if rungs is None:
        return f"strength on the fixed Elo ladder: no ladder for {n} (config/ladder/{n}.json)"
    top = f"{rungs[-1][0]} = {rungs[-1][1]:.0f}" if rungs else "no rungs"
    lines = [f"strength on the fixed Elo ladder ({n} table, {top}; eval/gen*/ladder.json):"]
    if not ratings:
        return "\n".join([*lines, "  no rating yet"])
    lines.append(f"  {'gen':>4} {'Elo':>6} {'95% interval':>16} {'games':>6}  where")
    for g, r in ratings.items():
        lo, hi = r["ci95"]
        games = games_of(r)
        where = between(r) + (" (first rating)" if r.get("first") else "")
        interval = f"[{lo:.0f}, {hi:.0f}]"
        lines.append(
            f"  {g:>4} {r['elo']:>6.0f} {interval:>16} {'-' if games is None else games:>6}  {where}"
        )
    g, r = max(ratings.items())
    table = dict(rungs)
    for name in against:
        if name in table:
            label = f"GNU Go {name[6:]}" if name.startswith("gnugo:") else name
            lo, hi = r["ci95"]
            newest = f"generation {g}: {r['elo']:.0f} [{lo:.0f}, {hi:.0f}]"
            lines.append(f"  {label}: {table[name]:.0f} on the table; {newest}")
    return "\n".join(lines)
