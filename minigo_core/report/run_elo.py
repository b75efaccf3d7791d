"""Ratings of a run: Bradley-Terry maximum likelihood on the Elo scale, and the time to target.

Every evaluation game of a run (`{root}/eval/gen*/vs_*.json`, written by `minigo evaluate`) goes into one fit,
all pairings together. The model: player i scores against player j with probability

    P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j) / 400))

(a draw counts half a win to each side). Generation 0 is the anchor at Elo 0; GNU Go levels, the random
player and outside GTP programs are rated on the same scale whenever they took part. The fit and its prior
(virtual draws) are `minigo_core.rating.bradley_terry`'s; this module reads a run's files into it. Matches
at a time budget per move (`move_time_ms` set: the last generation's `vs_*_equal-time.json`) are left out:
the ratings compare the models at the config's fixed readouts, and a model at another budget is another
player under the same name.

Time to target (MLPerf's headline): wall time from the run's start (the timestamp of the generation-0 model,
the first artifact a run writes) to the creation of the first model whose win rate against the configured
target (`evaluate.target`) passes 50%. The time its evaluation finished is reported too.

The tables (`elo.csv`, `elo.json`, `time_to_target.json`) are built here; the plots are
`minigo_core.report.plots`'s, the command `minigo ratings` is `minigo_core.jobs.ratings`.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from minigo_core.base.elo import wilson_interval
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import layout, storage
from minigo_core.data.matchfile import MatchSummary, find_matches, read_match
from minigo_core.rating.bradley_terry import ANCHOR, Ratings, fit_bradley_terry, generation_of, sorted_players

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------ players' names


def player_kind(name: str) -> str:
    if generation_of(name) is not None:
        return "generation"
    if re.fullmatch(r"gnugo:\d+", name):  # a GNU Go level (gnugo:L+rP, mixed with random, is "other")
        return "gnugo"
    if name == "random":
        return "random"
    if re.fullmatch(r"uct:\d+", name):  # plain UCT (uct:N+rP, with random moves, is "other")
        return "uct"
    return "other"


# ------------------------------------------------------------------------------------------ run artifacts


def artifact_time(url: str) -> float | None:
    """Modification time (unix seconds) of a file through fsspec, or None if the filesystem does not say."""
    fs, path = storage.fs_and_path(url)
    try:
        info = fs.info(path)
    except (OSError, ValueError):
        return None
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return None


def model_times(root: str) -> dict[int, float]:
    """generation -> the time its model file was written (file timestamps on the shared filesystem)."""
    times = {}
    for url in storage.list_files(layout.models_dir(root), layout.MODEL_SUFFIX):
        m = re.match(r"^gen(\d+)\.safetensors$", os.path.basename(url))
        if not m:
            continue
        t = artifact_time(url)
        if t is not None:
            times[int(m.group(1))] = t
    return times


def target_name(target_spec: str, generation: int) -> str | None:
    """The results-file name of the target for a generation: gen0 -> gen0000, previous -> gen(g-1), ..."""
    return PlayerSpec.parse(target_spec).rating_name(generation)


@dataclass
class TargetPoint:
    generation: int
    games: int
    win_rate: float
    ci95: tuple[float, float]
    model_time_s: float | None
    evaluated_time_s: float | None


def time_to_target(matches: Sequence[MatchSummary], times: dict[int, float], target_spec: str) -> dict:
    """Win rate of each generation against the target, and the first one that passes 50%."""
    start = times.get(0, min(times.values()) if times else None)
    points: dict[int, TargetPoint] = {}
    for m in matches:
        g = generation_of(m.player)
        if g is None or m.opponent != target_name(target_spec, g) or not m.games:
            continue
        prev = points.get(g)
        scores_total = sum(m.scores) + (prev.win_rate * prev.games if prev else 0.0)
        games = m.games + (prev.games if prev else 0)
        finished = m.finished_unix
        points[g] = TargetPoint(
            generation=g,
            games=games,
            win_rate=scores_total / games,
            ci95=wilson_interval(scores_total, games),
            model_time_s=(times[g] - start) if (g in times and start is not None) else None,
            evaluated_time_s=(finished - start) if (finished is not None and start is not None) else None,
        )
    ordered = [points[g] for g in sorted(points)]
    reached = next((p for p in ordered if p.win_rate > 0.5), None)
    return {
        "target": target_spec,
        "run_start_unix": start,
        "reached": reached is not None,
        "generation": reached.generation if reached else None,
        "seconds": reached.model_time_s if reached else None,
        "hours": reached.model_time_s / 3600.0 if reached and reached.model_time_s is not None else None,
        "evaluated_seconds": reached.evaluated_time_s if reached else None,
        "win_rate": reached.win_rate if reached else None,
        "ci95": list(reached.ci95) if reached else None,
        "per_generation": [
            {
                "generation": p.generation,
                "games": p.games,
                "win_rate": p.win_rate,
                "ci95": list(p.ci95),
                "model_time_s": p.model_time_s,
                "evaluated_time_s": p.evaluated_time_s,
            }
            for p in ordered
        ],
        "definition": "wall time from the generation-0 model file to the first model file whose win rate "
        "against the target passes 50% (evaluated_seconds: when that evaluation finished)",
    }


# ----------------------------------------------------------------------------------------------- outputs


def rating_rows(ratings: Ratings, times: dict[int, float] | None = None) -> list[dict]:
    """The Elo table, one row per player (generations first), intervals included."""
    times = times or {}
    start = times.get(0)
    rows = []
    for name in sorted_players(list(ratings.elo) + ratings.unrated):
        g = generation_of(name)
        row = {"player": name, "kind": player_kind(name), "generation": g}
        if name in ratings.elo:
            lo, hi = ratings.interval(name)
            row.update(elo=ratings.elo[name], elo_low95=lo, elo_high95=hi, stderr=ratings.stderr[name])
        else:
            row.update(elo=None, elo_low95=None, elo_high95=None, stderr=None)
        row["games"] = ratings.games.get(name, 0)
        row["score"] = ratings.score.get(name, 0.0)
        known = g is not None and g in times and start is not None
        row["model_time_s"] = (times[g] - start) if known else None
        rows.append(row)
    return rows


def format_table(rows: Sequence[dict]) -> str:
    lines = [f"{'player':<14} {'Elo':>8} {'95% interval':>19} {'games':>6} {'score':>7}"]
    for r in rows:
        if r["elo"] is None:
            lines.append(f"{r['player']:<14} {'unrated (no games linking it to the anchor)':>42}")
            continue
        interval = f"[{r['elo_low95']:.0f}, {r['elo_high95']:.0f}]"
        lines.append(f"{r['player']:<14} {r['elo']:8.0f} {interval:>19} {r['games']:6d} {r['score']:7.1f}")
    return "\n".join(lines)


def rows_to_csv(rows: Sequence[dict]) -> str:
    buf = io.StringIO()
    fields = [
        "player",
        "kind",
        "generation",
        "elo",
        "elo_low95",
        "elo_high95",
        "stderr",
        "games",
        "score",
        "model_time_s",
    ]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(
            {k: ("" if r[k] is None else round(r[k], 3) if isinstance(r[k], float) else r[k]) for k in fields}
        )
    return buf.getvalue()


def read_matches(root: str) -> tuple[list[MatchSummary], list[str]]:
    """Every readable results file of a run at fixed readouts (those of matches at a time budget per move are
    left out: see the module docstring), and why the unreadable ones were skipped (each logged as a
    warning)."""
    matches, skipped = [], []
    for url in find_matches(root):
        try:
            match = read_match(url)
        except ValueError as exc:
            skipped.append(str(exc))
            continue
        if not match.timed:
            matches.append(match)
    for message in skipped:
        log.warning("skipped: %s", message)
    return matches, skipped


def summarise_run(
    root: str,
    target_spec: str,
    prior_draws: float = 1.0,
    read: tuple[list[MatchSummary], list[str]] | None = None,
) -> tuple[Ratings, list[dict], dict]:
    """Read a run's evaluation files (or take `read_matches(root)` already read): (ratings, table rows,
    time-to-target record)."""
    matches, skipped = read if read is not None else read_matches(root)
    results = [(m.player, m.opponent, s) for m in matches for s in m.scores]
    ratings = fit_bradley_terry(results, anchor=ANCHOR, prior_draws=prior_draws)
    times = model_times(root)
    rows = rating_rows(ratings, times)
    ttt = time_to_target(matches, times, target_spec)
    ttt["matches"] = len(matches)
    ttt["skipped_files"] = skipped
    return ratings, rows, ttt


def ratings_record(ratings: Ratings, rows: Sequence[dict]) -> dict:
    """What `elo.json` holds: the anchor, the prior, the scale, the table rows and the unrated players."""
    return {
        "anchor": ratings.anchor,
        "prior_draws": ratings.prior_draws,
        "scale": "Elo (400 log10 odds)",
        "players": rows,
        "unrated": ratings.unrated,
    }


def format_time_to_target(ttt: dict, target: str) -> str:
    """The time-to-target line `minigo ratings` prints under the table."""
    if ttt["reached"] and ttt["seconds"] is None:
        return f"time to target ({target}): generation {ttt['generation']} (no model timestamps)"
    if ttt["reached"]:
        lo, hi = ttt["ci95"]
        return (
            f"time to target ({target}): {ttt['seconds']:.0f} s ({ttt['hours']:.2f} h), generation "
            f"{ttt['generation']}, win rate {ttt['win_rate']:.2f} [{lo:.2f}, {hi:.2f}]"
        )
    return f"time to target ({target}): not reached in {len(ttt['per_generation'])} evaluated generations"
