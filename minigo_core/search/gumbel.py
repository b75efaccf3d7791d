"""Gumbel AlphaZero's search (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR 2022) on
the reference tree of `minigo_core.search.mcts`, as the compiled engine runs it (`csrc/search.cpp`):

- at the root, Gumbel-top-m: the `gumbel_considered` moves with the largest g(a) + logits(a) (g: Gumbel noise,
  drawn on full searches only; 0 otherwise), then sequential halving over the budget of simulations, each
  phase keeping the better half by g(a) + logits(a) + sigma(completed Q(a)); the move played is the best
  remaining one by the same score (no softpick);
- below the root, the deterministic selection argmax_a pi'(a) - N(a) / (1 + sum_b N(b));
- the training target of a position is the improved policy pi' = softmax(logits + sigma(completed Q)).

sigma(q) = (c_visit + max_b N(b)) * c_scale * (q - min q) / (max q - min q) over the legal moves, where an
unvisited move's completed Q is v_mix, the network value mixed with the prior-weighted Q of the visited moves.
With the score utility on (`selfplay.score_utility`), Q and the network value here are the search's utilities
(`mcts.leaf_utility`), so sigma, the move chosen and the improved policy prefer larger predicted margins.
The arithmetic follows search.cpp term by term (sums in move order, libm's exp and log), so a position
searched without noise gives the compiled engine's visit counts (tests/unit/test_gumbel.py).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

LOGIT_OF_ZERO = -1e9  # log(0) of a legal move with no prior, as search.cpp takes it


def _running_sum(values: np.ndarray) -> float:
    """The sum in index order, one addition at a time (C++'s loop; numpy's sum adds pairwise)."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def _logits(prior: np.ndarray, legal: np.ndarray) -> np.ndarray:
    out = np.full(prior.shape, -math.inf)
    for a in np.flatnonzero(legal):
        p = float(prior[a])
        out[a] = math.log(p) if p > 0 else LOGIT_OF_ZERO
    return out


class ChildStatistics(NamedTuple):
    """What the improved policy reads of a node and its children."""

    prior: np.ndarray  # masked to the legal moves
    n: np.ndarray  # the children's visit counts N
    q_mover: np.ndarray  # the children's mean values Q, the mover's view
    legal: np.ndarray  # the legal mask
    raw_value: float  # the node's network value, the mover's view


def sigma_q(stats: ChildStatistics, c_visit: float, c_scale: float) -> np.ndarray:
    """sigma(completed Q) of each move (-inf where illegal); `c_visit`, `c_scale`: `gumbel_c_visit`,
    `gumbel_c_scale`."""
    prior, n, q_mover, legal, raw_value = stats
    visited = legal & (n > 0)
    sum_n = _running_sum(np.where(visited, n, 0.0))
    max_n = float(n[visited].max()) if visited.any() else 0.0
    pi_visited = _running_sum(np.where(visited, prior, 0.0))
    pi_q = _running_sum(np.where(visited, prior * q_mover, 0.0))
    v_mix = raw_value
    if sum_n > 0 and pi_visited > 0:
        v_mix = (raw_value + sum_n * (pi_q / pi_visited)) / (1.0 + sum_n)
    completed = np.where(n > 0, q_mover, v_mix)
    lo, hi = float(completed[legal].min()), float(completed[legal].max())
    value_range = max(hi - lo, 1e-8)
    scale = (c_visit + max_n) * c_scale
    return np.where(legal, scale * ((completed - lo) / value_range), -math.inf)


def improved_policy(stats: ChildStatistics, c_visit: float, c_scale: float) -> np.ndarray:
    """pi' = softmax(logits + sigma(completed Q)) over the legal moves, 0 elsewhere (float64); the arguments
    are `sigma_q`'s."""
    prior, legal = stats.prior, stats.legal
    score = _logits(prior, legal) + sigma_q(stats, c_visit, c_scale)
    top = float(score[legal].max())
    out = np.zeros(prior.shape)
    for a in np.flatnonzero(legal):
        out[a] = math.exp(float(score[a]) - top)
    return out / _running_sum(out)


def node_statistics(node: Any) -> ChildStatistics:
    """The statistics of an expanded `mcts.MCTSNode` with its vectors: the search's values (`child_U`, the
    node's `utility`: with the score utility off, the win/loss values `child_W` and the network's `value`)."""
    n = node.child_N
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(n > 0, node.child_U / n * node.to_play, 0.0)
    return ChildStatistics(node.original_prior, n, q, ~node.illegal, node.utility)


def node_improved_policy(node: Any, c_visit: float, c_scale: float) -> np.ndarray:
    """`improved_policy` of an expanded node of the reference tree."""
    return improved_policy(node_statistics(node), c_visit, c_scale)


def select_child(node: Any, c_visit: float, c_scale: float) -> int:
    """The move a simulation takes below the root: argmax_a pi'(a) - N(a) / (1 + sum_b N(b)), legal only."""
    pi = node_improved_policy(node, c_visit, c_scale)
    n = node.child_N
    score = np.where(node.illegal, -math.inf, pi - n / (1.0 + _running_sum(n)))
    return int(np.argmax(score))


class GumbelRoot:
    """The root of one Gumbel search: the considered moves and the sequential-halving schedule of its budget.

    Args: the expanded root (`mcts.MCTSNode`), the generator of the Gumbel noise (None: no noise), the
    budget of simulations, `gumbel_considered` (m), `gumbel_c_visit`, `gumbel_c_scale`.
    """

    def __init__(
        self, root: Any, rng: np.random.Generator | None, budget: int, considered: int, c_visit: float,
        c_scale: float,
    ) -> None:  # fmt: skip
        self.c_visit, self.c_scale = c_visit, c_scale
        legal = np.flatnonzero(~root.illegal)
        self.logits = _logits(root.original_prior, ~root.illegal)
        self.g = np.zeros(root.original_prior.shape)
        if rng is not None:
            self.g[legal] = rng.gumbel(size=legal.size)
        self.budget, self.done = int(budget), 0
        m = max(1, min(self.budget, int(considered), int(legal.size)))
        by_score = sorted(legal.tolist(), key=lambda a: -(self.g[a] + self.logits[a]))  # stable: ties lower
        self.remaining: list[int] = by_score[:m]
        self.phases = 1
        while (1 << self.phases) < m:
            self.phases += 1
        self.schedule: list[int] = []
        self.next = 0
        if self.budget > 0 and self.remaining:
            self._plan_phase()

    def _plan_phase(self) -> None:
        """Each remaining move gets max(1, budget // (phases * remaining)) simulations, in turn."""
        per = max(1, self.budget // (self.phases * len(self.remaining)))
        self.schedule = self.remaining * per
        self.next = 0

    def _scores(self, root: Any) -> np.ndarray:
        sigma = sigma_q(node_statistics(root), self.c_visit, self.c_scale)
        return self.g + self.logits + sigma

    def next_action(self, root: Any) -> int:
        """The root move of the next simulation; -1 when the budget is spent."""
        if self.done >= self.budget or not self.remaining:
            return -1
        if self.next >= len(self.schedule):
            if len(self.remaining) > 1:  # halve: keep the better half
                score = self._scores(root)
                self.remaining.sort(key=lambda a: -score[a])
                self.remaining = self.remaining[: (len(self.remaining) + 1) // 2]
            self._plan_phase()
        self.done += 1
        self.next += 1
        return self.schedule[self.next - 1]

    def chosen(self, root: Any) -> int:
        """The move the search plays: the best remaining by g + logits + sigma(completed Q); pass if none."""
        if not self.remaining:
            return root.original_prior.shape[0] - 1
        score = self._scores(root)
        best = self.remaining[0]
        for a in self.remaining:
            if score[a] > score[best]:
                best = a
        return best
