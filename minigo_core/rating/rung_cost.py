"""What a game against a reference player costs: the rough CPU seconds of one side of a game, by kind and
level, scaled by the board's area (measured on 9x9). The adaptive calibration weighs its pairs with it before
they have games of their own; a rating chooses cheap rungs with it (`ladder._most_informative`).
"""

from __future__ import annotations

from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError

# typical CPU seconds one side of a 9x9 game costs (uct:N: per playout), scaled by the board's area
_SIDE_COST = {"random": 0.001, "gnugo": 1.0, "gtp": 1.0}
UCT_SIDE_COST_PER_PLAYOUT = 0.00074
PACHI_SIDE_COST_PER_PLAYOUT = 0.01  # measured: ~5 s a 9x9 game side at pachi:500 (it rarely resigns)
RATED_SIDE_COST = 0.5  # a rated player's own side of a game (a model at evaluate.readouts), the same guess
MAX_CHOICE_GAP = 400.0  # Elo: rungs further from a player's rating are never chosen for their cheapness


def side_cost(name: str, board_size: int) -> float:
    """A rough CPU cost (seconds) of one side of a game for a reference player: uct:N scales with N, a
    mixture `SPEC+rP` pays for its base's moves only; a komi shift `SPEC+kP` costs what SPEC does."""
    scale = (board_size / 9.0) ** 2
    try:
        spec = PlayerSpec.parse(name)
    except PlayerSpecError:
        return _SIDE_COST["gtp"] * scale
    share = 1.0 - (spec.random_percent or 0.0) / 100.0
    if spec.kind == "uct":
        return UCT_SIDE_COST_PER_PLAYOUT * float(spec.playouts or 0) * scale * share
    if spec.kind == "gnugo":  # measured: 0.3-0.8 s (levels 1-3), ~1 (4-6), 2-3.5 (8-10)
        level = spec.level or 0
        return (0.3 if level <= 3 else 1.0 if level <= 6 else 2.5) * scale * share
    if spec.kind == "pachi":
        return PACHI_SIDE_COST_PER_PLAYOUT * float(spec.playouts or 0) * scale
    return _SIDE_COST.get(spec.kind, 1.0) * scale
