"""Bradley-Terry ratings on the Elo scale: the one fit every rating of the package makes.

The model: player i scores against player j with probability

    P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j) / 400))

(a draw counts half a win to each side). Internally ratings are in nats (natural-log odds; `ELO_PER_NAT`
converts). `fit_bradley_terry` rates every player of a set of games relative to one anchor (a run's
generation 0 by default: `report.ratings` fits a run's evaluation games; `rating.ladder` the ladder's
calibration games); `maximise` and `information` are the Newton steps and the curvature it is made of,
which the ladder's fits with rungs held fixed and the adaptive calibration use too.

Prior (so that a pairing that went 20-0 still has a finite rating): every pair of players that met gets
`prior_draws` virtual drawn games (default 1, i.e. half a win each way), the "virtual draws" prior of Rémi
Coulom's BayesElo. It pulls ratings of lopsided pairings towards each other by a bounded amount (one extra
drawn game out of E) and vanishes relative to the data as games accumulate. Intervals are the usual Wald
intervals from the curvature of the log-posterior at its maximum, relative to the anchor.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from minigo_core.base.elo import ELO_PER_NAT, Z95

ANCHOR = "gen0000"  # a run's fit: generation 0 at Elo 0
_GEN_NAME = re.compile(r"^gen(\d+)$")


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
