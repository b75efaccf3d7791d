"""The adaptive calibration: play the games that narrow the widest interval most per CPU-second.

`minigo ladder calibrate --target-ci H` plays until every rung's 95% interval (the table's `ci95`: the other
rungs held at their ratings, `ladder.calibrate_fit`) is within +-H Elo, or until `--max-cpu-hours`. Each
round:

1. every pair of neighbouring rungs has at least `games_per_pair` games (a first estimate of each gap);
2. one fit of every stored game (`ladder.calibrate_fit`, the same fit the table is written from), then the
   table is written, so a stopped calibration leaves its current table;
3. where two neighbouring `uct:N` rungs are fitted more than `MAX_GAP` Elo apart a rung between them is added
   (`uct:` the geometric mean of their playouts), so neighbours stay <= 250 Elo apart;
4. otherwise, if some rung's interval is wider than the target, `jobs` pairs get `batch` more games each: the
   pairs (any two rungs fitted at most `MAX_PAIR_GAP` apart) whose games would shrink the rungs' excess
   variance (the sum over rungs of the variance above the target's) most per CPU-second. The gain of a pair
   is computed from the Fisher information of Bradley-Terry at the fitted ratings: a game between rungs
   i and j adds p (1 - p) (ln 10 / 400)^2 to each one's own information (p: i's expected score), and a
   rung's variance with the others held fixed is 1 / its own information. Its cost is the CPU seconds its
   stored games took (or the rungs' typical costs before it has any).

Why: a fixed number of games per pair spends most of its CPU where it narrows least: the costly rungs
(strong `uct:N`, GNU Go) need their own few hundred games, the cheap ones get theirs for nothing.

The intervals relative to the anchor (`ci95_anchor`) add up every link of the chain down from the anchor:
+-50 at the bottom of the 9x9 ladder (~3,500 Elo below GNU Go 10, >= 14 links) needs each link near +-13,
~40,000-60,000 games, about half of them between the costly upper rungs (20-50 CPU-hours). `half_widths`
computes them (and `--target-ci` could aim at them with `anchor_relative=True`), but the default aims at
the intervals the table is used with.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context

import numpy as np

from minigo_core.base.elo import NATS_PER_ELO, Z95, expected_score
from minigo_core.rating import calibration as cal
from minigo_core.rating.bradley_terry import information
from minigo_core.rating.ladder import Ladder, LadderError, write_ladder
from minigo_core.rating.ladder_walk import side_cost

MAX_GAP = 250.0  # neighbours' largest fitted distance (Elo) before a uct:N rung is added between them
MAX_PAIR_GAP = 600.0  # pairs further apart than this (fitted) carry too little per game to be chosen
MAX_ROUND_GAMES = 2000  # games a chosen pair plays in a round at most


@dataclass(frozen=True)
class AdaptiveSettings:
    """What the adaptive calibration aims at and how it spends: every rung's 95% half-width within +-`target`
    Elo, `batch` games a chosen pair a round (more of a cheap pair: `round_cpu_s` CPU-seconds' worth), and at
    most `max_cpu_s` CPU-seconds of new games (None: no limit)."""

    target: float
    batch: int = 20
    max_cpu_s: float | None = None
    round_cpu_s: float = 60.0


def pair_costs(design: cal.CalibrationDesign) -> dict[tuple[str, str], float]:
    """Mean CPU seconds per stored game of each pair that has at least 3 games."""
    out = {}
    for lower, upper in candidate_pairs(design.rungs):
        data = cal.read_pair(design.pair_file(lower, upper))
        games = (data or {}).get("games", [])
        if len(games) >= 3:
            out[(lower, upper)] = sum(float(g.get("cpu_seconds", 0.0)) for g in games) / len(games)
    return out


def candidate_pairs(rungs: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every pair of rungs whose games go into the fit (`calibration.comparable`)."""
    n = len(rungs)
    return [
        (rungs[i], rungs[j]) for i in range(n) for j in range(i + 1, n) if cal.comparable(rungs[i], rungs[j])
    ]


def game_counts(design: cal.CalibrationDesign) -> dict[tuple[str, str], int]:
    counts = {}
    for lower, upper in candidate_pairs(design.rungs):
        data = cal.read_pair(design.pair_file(lower, upper))
        if data and data["games"]:
            counts[(lower, upper)] = len(data["games"])
    return counts


def half_widths(
    rungs: tuple[str, ...], elos: dict[str, float], counts: dict[tuple[str, str], int], anchor: str,
    prior_draws: float = 1.0,
) -> dict[str, float]:  # fmt: skip
    """Each rung's 95% half-width relative to the anchor, from the Fisher information at `elos`."""
    cov, index = _covariance(rungs, elos, counts, anchor, prior_draws)
    return {r: Z95 * math.sqrt(max(cov[index[r], index[r]], 0.0)) / NATS_PER_ELO for r in index}


def held_information(
    rungs: tuple[str, ...], elos: dict[str, float], counts: dict[tuple[str, str], float], prior_draws: float
) -> dict[str, float]:
    """Each rung's own Fisher information (nats^-2) at `elos`: the sum over its games of p (1 - p), the
    inverse of its variance with the other rungs held fixed."""
    own = dict.fromkeys(rungs, 0.0)
    for (a, b), games in counts.items():
        p = expected_score(elos[a], elos[b])
        own[a] += (games + prior_draws) * p * (1 - p)
        own[b] += (games + prior_draws) * p * (1 - p)
    return {r: max(v, 1e-12) for r, v in own.items()}


def _covariance(
    rungs: tuple[str, ...], elos: dict[str, float], counts: dict[tuple[str, str], float], anchor: str,
    prior_draws: float,
) -> tuple[np.ndarray, dict[str, int]]:  # fmt: skip
    pos = {r: i for i, r in enumerate(rungs)}
    n = np.zeros((len(rungs), len(rungs)))
    for (a, b), games in counts.items():
        n[pos[a], pos[b]] = n[pos[b], pos[a]] = games + prior_draws
    theta = np.array([elos[r] * NATS_PER_ELO for r in rungs])
    info = information(theta, n)
    free = [i for i, r in enumerate(rungs) if r != anchor]
    cov = np.linalg.inv(info[np.ix_(free, free)] + 1e-12 * np.eye(len(free)))
    return cov, {rungs[i]: k for k, i in enumerate(free)}


def best_pairs(
    design: cal.CalibrationDesign, elos: dict[str, float], counts: dict[tuple[str, str], int],
    costs: dict[tuple[str, str], float], anchor: str, aim: AdaptiveSettings, how_many: int,
    anchor_relative: bool = False,
) -> list[tuple[str, str]]:  # fmt: skip
    """The `how_many` pairs of the design's rungs whose next `aim.batch` games cut the rungs' variance above
    `aim.target` most per CPU-second: the variance with the other rungs held fixed, or with `anchor_relative`
    that relative to the anchor."""
    rungs, board_size, batch = design.rungs, design.board_size, aim.batch
    limit = (aim.target / Z95 * NATS_PER_ELO) ** 2
    if anchor_relative:
        cov, index = _covariance(rungs, elos, counts, anchor, 1.0)
        var = np.diag(cov)
    else:
        own = held_information(rungs, elos, counts, 1.0)
        index = {r: i for i, r in enumerate(r for r in rungs if r != anchor)}
        var = np.array([1.0 / own[r] for r in index])
    base = np.maximum(var - limit, 0.0).sum()
    scored = []
    for a, b in candidate_pairs(rungs):
        gap = elos[b] - elos[a]
        if abs(gap) > MAX_PAIR_GAP:
            continue
        p = expected_score(elos[b], elos[a])
        weight = batch * p * (1 - p)
        if anchor_relative:
            u = np.zeros(len(index))
            if a in index:
                u[index[a]] = 1.0
            if b in index:
                u[index[b]] = -1.0
            su = cov @ u
            new = var - weight * su * su / (1.0 + weight * (u @ su))
        else:
            new = var.copy()
            for r in (a, b):
                if r in index:
                    new[index[r]] = 1.0 / (own[r] + weight)
        gain = base - np.maximum(new - limit, 0.0).sum()
        cost = costs.get((a, b), side_cost(a, board_size) + side_cost(b, board_size))
        if gain > 0:
            scored.append((gain / (batch * max(cost, 1e-4)), (a, b)))
    scored.sort(reverse=True)
    return [pair for _, pair in scored[:how_many]]


def split_wide_gaps(
    rungs: tuple[str, ...], elos: dict[str, float], counts: dict[tuple[str, str], int], anchor: str
) -> tuple[str, ...]:
    """The rungs with a uct:N rung added between neighbouring uct rungs whose fitted gap is more than
    MAX_GAP beyond doubt (its 95% interval lies above it: early estimates of few games split nothing)."""
    cov, index = _covariance(rungs, elos, counts, anchor, 1.0)
    out = [rungs[0]]
    for lower, upper in zip(rungs, rungs[1:], strict=False):
        u = np.zeros(len(index))
        for name, sign in ((lower, -1.0), (upper, 1.0)):
            if name in index:
                u[index[name]] = sign
        se = math.sqrt(max(float(u @ cov @ u), 0.0)) / NATS_PER_ELO
        gap = elos[upper] - elos[lower]
        plain = all(re.fullmatch(r"uct:\d+", name) for name in (lower, upper))
        if gap - Z95 * se > MAX_GAP and plain:
            a, b = int(lower[4:]), int(upper[4:])
            middle = round(math.sqrt(a * b))
            if a < middle < b and f"uct:{middle}" not in rungs:
                out.append(f"uct:{middle}")
        out.append(upper)
    return tuple(out)


def round_games(cost: float, batch: int, round_cpu_s: float = 60.0) -> int:
    """Games a chosen pair plays in a round: `batch`, or more of a cheap pair (`round_cpu_s` worth, at most
    MAX_ROUND_GAMES), so that the fits between rounds do not cost more than the games."""
    return int(min(MAX_ROUND_GAMES, max(batch, round_cpu_s / max(cost, 1e-6))))


def _play(
    design: cal.CalibrationDesign, pairs: list[tuple[str, str]], targets: dict, jobs: int, progress: bool
) -> int:
    if jobs <= 1 or len(pairs) <= 1:
        return sum(cal.play_pair(design, a, b, progress=progress, target=targets[(a, b)]) for a, b in pairs)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(cal.play_pair, design, a, b, None, progress, targets[(a, b)]) for a, b in pairs
        ]
        return sum(f.result() for f in futures)


def run_adaptive(
    design: cal.CalibrationDesign, fit_settings: cal.FitSettings, aim: AdaptiveSettings, *, jobs: int,
    log: Callable[[str], None], progress: bool = False,
) -> tuple[Ladder | None, int]:  # fmt: skip
    """Rounds of (neighbours' first games, fit, write the table, add a rung or play the best pairs) until
    every rung is within +-`aim.target` or `aim.max_cpu_s` CPU-seconds of new games are spent."""
    anchor, target, max_cpu_s = fit_settings.anchor, aim.target, aim.max_cpu_s
    played, spent0 = 0, cal.stored_games(design)[1]
    ladder = None
    while True:
        counts = game_counts(design)
        first = {
            p: design.games_per_pair for p in replace(design, reach=1).pairs()
        }  # each and the next above
        short = [p for p, n in first.items() if counts.get(p, 0) < n]
        if short:
            played += _play(design, short, first, jobs, progress)
            continue
        ladder = cal.fit(design, fit_settings)
        ladder.provenance.update(target_ci=target, design="adaptive")
        try:
            write_ladder(ladder, design.ladder_file)
        except LadderError as exc:  # e.g. two rungs tied so far: more games will part them
            log(f"table not written this round: {exc}")
        elos = {r.player: r.elo for r in ladder.rungs}
        wider = split_wide_gaps(design.rungs, elos, counts, anchor)
        if wider != design.rungs:
            added = ", ".join(sorted(set(wider) - set(design.rungs)))
            log(f"added rung(s) {added}: neighbours more than {MAX_GAP:g} Elo apart")
            design = replace(design, rungs=wider)
            continue
        worst = max((r.ci95[1] - r.ci95[0]) / 2 for r in ladder.rungs)
        spent = cal.stored_games(design)[1] - spent0
        log(f"widest interval +-{worst:.0f} Elo (target {target:g}); {spent / 3600:.2f} CPU-h spent")
        if worst <= target or (max_cpu_s is not None and spent >= max_cpu_s):
            return ladder, played
        costs = pair_costs(design)
        pairs = best_pairs(design, elos, counts, costs, anchor, aim, max(1, jobs))
        if not pairs:
            return ladder, played
        more = {
            p: round_games(
                costs.get(p, sum(side_cost(r, design.board_size) for r in p)), aim.batch, aim.round_cpu_s
            )
            for p in pairs
        }
        log("next: " + ", ".join(f"{a} vs {b} (+{more[(a, b)]})" for a, b in pairs))
        played += _play(design, pairs, {p: counts.get(p, 0) + more[p] for p in pairs}, jobs, progress)
