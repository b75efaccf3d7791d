"""Ratings of a run: Bradley-Terry maximum likelihood on the Elo scale, and the time to target.

Every evaluation game of a run (`{root}/eval/gen*/vs_*.json`, written by `minigo evaluate`) goes into one fit,
all pairings together. The model: player i scores against player j with probability

    P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j) / 400))

(a draw counts half a win to each side). Generation 0 is the anchor at Elo 0; GNU Go levels, the random
player and outside GTP engines are rated on the same scale whenever they took part.

Prior (so that a pairing that went 20-0 still has a finite rating): every pair of players that met gets
`prior_draws` virtual drawn games (default 1, i.e. half a win each way), the "virtual draws" prior of Rémi
Coulom's BayesElo. It pulls ratings of lopsided pairings towards each other by a bounded amount (one extra
drawn game out of E) and vanishes relative to the data as games accumulate. Intervals are the usual Wald
intervals from the curvature of the log-posterior at its maximum, relative to the anchor.

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
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from minigo_core.base.elo import ELO_PER_NAT, Z95, wilson_interval
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import layout, storage
from minigo_core.data.matchfile import MatchSummary, find_matches, read_match

ANCHOR = "gen0000"
_GEN_NAME = re.compile(r"^gen(\d+)$")

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------- statistics


@dataclass
class Ratings:
    """A fitted rating list: Elo and its standard error per player (relative to `anchor`), and the data."""

    anchor: str
    prior_draws: float
    elo: dict[str, float] = field(default_factory=dict)
    stderr: dict[str, float] = field(default_factory=dict)
    # each player's standard error with every other player held at its fitted rating (BayesElo's default
    # intervals): from its own games only, 1 / sqrt(its diagonal entry of the information matrix)
    held_stderr: dict[str, float] = field(default_factory=dict)
    games: dict[str, int] = field(default_factory=dict)
    score: dict[str, float] = field(default_factory=dict)
    unrated: list[str] = field(default_factory=list)  # players not connected to the anchor by any games
    iterations: int = 0

    def interval(self, name: str) -> tuple[float, float]:
        e, s = self.elo[name], self.stderr[name]
        return (e - Z95 * s, e + Z95 * s)


def _aggregate(results: Iterable[tuple[str, str, float]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(players, W, N): W[i, j] = points i scored against j, N[i, j] = games between them (symmetric)."""
    index: dict[str, int] = {}
    triples = []
    for a, b, s in results:
        if a == b:
            continue  # a player against itself says nothing about ratings
        if not 0.0 <= s <= 1.0:
            raise ValueError(
                f"game score must be in [0, 1] (1 win, 0.5 draw, 0 loss), got {s!r} for {a} vs {b}"
            )
        for name in (a, b):
            index.setdefault(name, len(index))
        triples.append((index[a], index[b], float(s)))
    k = len(index)
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    for i, j, s in triples:
        wins[i, j] += s
        wins[j, i] += 1.0 - s
        games[i, j] += 1.0
        games[j, i] += 1.0
    return list(index), wins, games


def _component(start: int, games: np.ndarray) -> list[int]:
    seen = {start}
    stack = [start]
    while stack:
        i = stack.pop()
        for j in np.nonzero(games[i])[0]:
            if int(j) not in seen:
                seen.add(int(j))
                stack.append(int(j))
    return sorted(seen)


def log_posterior(theta: np.ndarray, wins: np.ndarray) -> float:
    """sum_ij W_ij log sigmoid(theta_i - theta_j): the Bradley-Terry log-likelihood of the (prior-padded)
    win matrix `wins` at ratings `theta` (natural-log odds)."""
    d = theta[:, None] - theta[None, :]
    return float(-(wins * np.logaddexp(0.0, -d)).sum())


def information(theta: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The negative Hessian of `log_posterior` at `theta`, for `n` games between each pair."""
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    curv = n * p * (1.0 - p)
    return np.diag(curv.sum(axis=1)) - curv


def maximise(
    theta: np.ndarray,
    wins: np.ndarray,
    free: list[int],
    tol: float = 1e-10,
    max_iterations: int = 200,
    max_step: float | None = None,
) -> tuple[np.ndarray, float, int]:
    """Newton's method with step halving on the `free` coordinates of the concave `log_posterior` (the others
    held where they are): (theta, its log-posterior, iterations). `max_step` caps each coordinate's Newton
    step (nats), for starts far from the optimum."""
    theta = theta.copy()
    objective = log_posterior(theta, wins)
    iterations = 0
    if not free:
        return theta, objective, iterations
    n = wins + wins.T
    while iterations < max_iterations:
        iterations += 1
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (wins - n * p).sum(axis=1)
        step = np.zeros(len(theta))
        step[free] = np.linalg.solve(information(theta, n)[np.ix_(free, free)], grad[free])
        if max_step is not None:
            step = np.clip(step, -max_step, max_step)
        t = 1.0
        while True:
            candidate = theta + t * step
            value = log_posterior(candidate, wins)
            if value >= objective - 1e-12 or t < 1e-8:
                break
            t *= 0.5
        theta, objective = candidate, value
        if np.max(np.abs(t * step)) < tol:
            break
    return theta, objective, iterations


def fit_bradley_terry(
    results: Iterable[tuple[str, str, float]],
    anchor: str | None = ANCHOR,
    prior_draws: float = 1.0,
    tol: float = 1e-9,
    max_iterations: int = 200,
) -> Ratings:
    """Maximum a-posteriori Bradley-Terry ratings on the Elo scale from (player, opponent, score) games.

    `score` is 1 for a win of `player`, 0.5 for a draw, 0 for a loss. `anchor` gets Elo 0 (when it is absent,
    the first player of `sorted_players` order does). Players not connected to the anchor through games cannot
    be placed on its scale and are listed in `Ratings.unrated`. Newton's method on the concave log-posterior,
    with step halving.
    """
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws}")
    names, wins, games = _aggregate(results)
    if not names:
        return Ratings(anchor=anchor or "", prior_draws=prior_draws)
    if anchor not in names:
        anchor = sorted_players(names)[0]
    a = names.index(anchor)
    comp = _component(a, games)
    sub_names = [names[i] for i in comp]
    w = wins[np.ix_(comp, comp)] + 0.5 * prior_draws * (games[np.ix_(comp, comp)] > 0)
    n = w + w.T
    k = len(comp)
    anchor_pos = comp.index(a)
    free = [i for i in range(k) if i != anchor_pos]
    theta, iterations = np.zeros(k), 0
    if free and w.sum() > 0:
        theta, _, iterations = maximise(theta, w, free, tol, max_iterations)
    info = information(theta, n)
    se = np.zeros(k)
    if free:
        cov = np.linalg.inv(info[np.ix_(free, free)])
        se[free] = np.sqrt(np.maximum(np.diag(cov), 0.0))
    out = Ratings(anchor=anchor, prior_draws=prior_draws, iterations=iterations)
    for pos, name in enumerate(sub_names):
        out.elo[name] = float(theta[pos] * ELO_PER_NAT)
        out.stderr[name] = float(se[pos] * ELO_PER_NAT)
        own = info[pos, pos]
        out.held_stderr[name] = float(ELO_PER_NAT / np.sqrt(own)) if own > 0 else math.inf
    for i, name in enumerate(names):
        out.games[name] = int(games[i].sum())
        out.score[name] = float(wins[i].sum())
        if name not in out.elo:
            out.unrated.append(name)
    return out


# ------------------------------------------------------------------------------------------ players' names


def generation_of(name: str) -> int | None:
    """`gen0007` -> 7; None for players that are not a generation of the run."""
    m = _GEN_NAME.match(name)
    return int(m.group(1)) if m else None


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


def sorted_players(names: Iterable[str]) -> list[str]:
    """Generations in order, then GNU Go levels, then `uct:N` by playouts, then everything else by name."""

    def key(name: str) -> tuple:
        g = generation_of(name)
        if g is not None:
            return (0, g, name)
        if name.startswith("gnugo:") and name[6:].isdigit():
            return (1, int(name[6:]), name)
        if name.startswith("uct:") and name[4:].isdigit():
            return (2, int(name[4:]), name)
        return (3, 0, name)

    return sorted(set(names), key=key)


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


def gnugo_anchor(rows: Sequence[dict]) -> dict | None:
    """The rated GNU Go player of the lowest level (the learning curve's zero), or None."""
    levels = [r for r in rows if r["kind"] == "gnugo" and r["elo"] is not None]
    return min(levels, key=lambda r: int(r["player"].split(":")[1])) if levels else None


def read_matches(root: str) -> tuple[list[MatchSummary], list[str]]:
    """Every readable results file of a run, and why the others were skipped (each logged as a warning)."""
    matches, skipped = [], []
    for url in find_matches(root):
        try:
            matches.append(read_match(url))
        except ValueError as exc:
            skipped.append(str(exc))
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
