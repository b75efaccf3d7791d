"""The 8 dihedral symmetries of the board, for feature planes and policy vectors (pass stays last).

Symmetry `s` (0..7) is: flip left-right if `s >= 4`, then rotate by `(s % 4) * 90` degrees counter-clockwise
(`np.rot90`). Symmetry 0 is the identity; `invert(s)` undoes `s`.
"""

from __future__ import annotations

import functools

import numpy as np

NUM_SYMMETRIES = 8


def _check(sym: int) -> int:
    sym = int(sym)
    if not 0 <= sym < NUM_SYMMETRIES:
        raise ValueError(f"symmetry must be 0..{NUM_SYMMETRIES - 1}, got {sym}")
    return sym


def apply_planes(sym: int, x: np.ndarray) -> np.ndarray:
    """Transform an array `(..., N, N)` (feature planes, boards) by `sym`; returns a new contiguous array."""
    sym = _check(sym)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"apply_planes needs an array (..., N, N), got shape {x.shape}")
    if sym >= 4:
        x = x[..., :, ::-1]
    return np.ascontiguousarray(np.rot90(x, sym % 4, axes=(-2, -1)))


def invert(sym: int) -> int:
    """The symmetry that undoes `sym` (rotations: the opposite rotation; flips are their own inverse)."""
    sym = _check(sym)
    return (4 - sym) % 4 if sym < 4 else sym


@functools.lru_cache(maxsize=64)
def _source_index(sym: int, board_size: int) -> np.ndarray:
    """`src[j]`: the flat index (pass included) whose value lands at flat index `j` under `sym`."""
    n2 = board_size * board_size
    board = apply_planes(sym, np.arange(n2).reshape(board_size, board_size)).reshape(-1)
    src = np.append(board, n2)
    src.flags.writeable = False
    return src


def apply_policy(sym: int, pi: np.ndarray, board_size: int) -> np.ndarray:
    """Transform policy vectors `(..., N*N+1)` (flat index, pass last) by `sym`, as `apply_planes` does."""
    sym = _check(sym)
    if pi.shape[-1] != board_size * board_size + 1:
        raise ValueError(
            f"apply_policy needs vectors of length {board_size * board_size + 1} for board size "
            f"{board_size}, "
            f"got shape {pi.shape}"
        )
    return pi[..., _source_index(sym, board_size)]


def apply_move(sym: int, move: tuple[int, int] | None, board_size: int) -> tuple[int, int] | None:
    """Where the point `move` (or a pass, `None`) goes under `sym`."""
    if move is None:
        return None
    src = _source_index(_check(sym), board_size)
    j = int(np.flatnonzero(src == move[0] * board_size + move[1])[0])
    return divmod(j, board_size)
