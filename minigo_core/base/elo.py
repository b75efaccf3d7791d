"""The Elo scale and win-rate intervals: the arithmetic every match, rating and report shares.

A win rate p and an Elo difference d are two names for one number under the logistic (Bradley-Terry)
model: p = 1 / (1 + 10^(-d/400)). Intervals of a win rate are Wilson score intervals (draws count half).
"""

from __future__ import annotations

import math

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of the natural-log odds scale
NATS_PER_ELO = math.log(10.0) / 400.0  # its inverse: natural-log odds per Elo point
Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a win rate (`score` wins out of `n`, draws as halves); (0, 1) when n = 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = score / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo_difference(win_rate: float) -> float:
    """The Elo difference that gives `win_rate` under the logistic model (+-inf at 1 and 0)."""
    if win_rate <= 0.0:
        return -math.inf
    if win_rate >= 1.0:
        return math.inf
    return ELO_PER_NAT * math.log(win_rate / (1.0 - win_rate))


def expected_score(elo_a: float, elo_b: float) -> float:
    """P(a beats b) under the Elo-scale Bradley-Terry model."""
    return 1.0 / (1.0 + 10.0 ** (-(elo_a - elo_b) / 400.0))
