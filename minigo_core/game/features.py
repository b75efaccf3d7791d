"""Input feature planes for the network, relative to the side to move (MiniGo's `agz` and `mlperf07` sets,
`ladders`: mlperf07's with two ladder planes, `tactics`: ladders' with two planes of liberties after a move,
and `passalive`: ladders' with the two sides' pass-alive areas).

- `agz` (17 planes): for the current board and the 7 before it (the oldest repeated when history runs out),
  interleaved [stones of the side to move, stones of the opponent] x 8; then all ones if Black is to move.
- `mlperf07` (13 planes): the same stone planes for the last 4 boards (8 planes); the colour-to-play plane;
  3 planes one-hot of the liberty count (1, 2, 3) of the group on each point (both colours; empty points and
  groups with 4+ liberties are 0 in all three); 1 plane marking the last liberty of every opponent group in
  atari (points where the side to move would capture).
- `ladders` (15 planes): mlperf07's 13, then `ladders.ladder_planes`: the stones a ladder captures, and the
  points where the side to move starts a ladder that captures (KataGo's ladder features, simplified).
- `tactics` (17 planes): ladders' 15, then the points where the side to move's new stone would have 1
  liberty (a self-atari), and 2, after its captures (`Position.liberties_after_moves`; AlphaGo's "liberties
  after move" and "self-atari" features in two planes).
- `passalive` (17 planes): ladders' 15, then the side to move's pass-alive area and the opponent's
  (`benson.pass_alive_planes`: unconditionally alive chains by Benson's algorithm and the regions they
  enclose; KataGo's pass-alive area planes).

Planes are `uint8` `(P, N, N)`; `extract_batch` stacks them to `(B, P, N, N)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minigo_core.game import benson, ladders
from minigo_core.game.go import BLACK, Position

# name -> (number of boards of history in the stone planes, total planes)
FEATURE_SETS: dict[str, tuple[int, int]] = {
    "agz": (8, 17),
    "mlperf07": (4, 13),
    "ladders": (4, 15),
    "tactics": (4, 17),
    "passalive": (4, 17),
}


def _spec(feature_set: str) -> tuple[int, int]:
    try:
        return FEATURE_SETS[feature_set]
    except KeyError:
        raise ValueError(
            f"unknown feature set {feature_set!r}: use one of {sorted(FEATURE_SETS)} (config key features)"
        ) from None


def num_planes(feature_set: str) -> int:
    """Number of input planes of a feature set (agz 17, mlperf07 13, ladders 15, tactics 17, passalive
    17)."""
    return _spec(feature_set)[1]


def _fill(position: Position, feature_set: str, out: np.ndarray) -> None:
    boards_needed, _ = _spec(feature_set)
    to_play = position.to_play
    boards = [position.board]
    boards.extend(reversed(position.board_history[-(boards_needed - 1) :]))  # most recent first
    boards.extend([boards[-1]] * (boards_needed - len(boards)))
    stack = np.stack(boards)
    k = 2 * boards_needed
    np.equal(stack, to_play, out=out[0:k:2])
    np.equal(stack, -to_play, out=out[1:k:2])
    out[k] = 1 if to_play == BLACK else 0
    if feature_set in ("mlperf07", "ladders", "tactics", "passalive"):
        libs = position.liberty_counts()
        np.equal(libs, 1, out=out[k + 1])
        np.equal(libs, 2, out=out[k + 2])
        np.equal(libs, 3, out=out[k + 3])
        out[k + 4] = position.atari_liberties(-to_play)
    if feature_set in ("ladders", "tactics", "passalive"):
        out[k + 5], out[k + 6] = ladders.ladder_planes(position)
    if feature_set == "tactics":
        after = position.liberties_after_moves()
        np.equal(after, 1, out=out[k + 7])
        np.equal(after, 2, out=out[k + 8])
    if feature_set == "passalive":
        out[k + 7], out[k + 8] = benson.pass_alive_planes(position)


def extract(position: Position, feature_set: str) -> np.ndarray:
    """Feature planes of one position: `uint8 (P, N, N)`."""
    n = position.board_size
    out = np.empty((num_planes(feature_set), n, n), dtype=np.uint8)
    _fill(position, feature_set, out)
    return out


def extract_batch(positions: Sequence[Position], feature_set: str) -> np.ndarray:
    """Feature planes of several positions of one board size: `uint8 (B, P, N, N)`."""
    planes = num_planes(feature_set)
    if not positions:
        raise ValueError("extract_batch needs at least one position")
    n = positions[0].board_size
    out = np.empty((len(positions), planes, n, n), dtype=np.uint8)
    for i, position in enumerate(positions):
        if position.board_size != n:
            raise ValueError(
                f"extract_batch: position {i} is {position.board_size}x{position.board_size}, "
                f"position 0 is {n}x{n}"
            )
        _fill(position, feature_set, out[i])
    return out
