"""A game's moves replayed on the compiled board: the feature planes and final-position targets that
`go.replay` + `features.extract_batch` + `Position.ownership`/`score` give, from one C call.

`replay_examples` calls `mg_replay_examples` of the compiled rules library `minigo_core/game/_rules*.so`
(`game/csrc/replay.cpp`, declared in `game/csrc/rules_capi.h`), loaded by `minigo_core.base.native` with the
table `REPLAY_FUNCTIONS`. The bytes are those of the Python rules (tests/unit/test_replay.py checks them).
`minigo window` rebuilds its sampled positions with it (`GameRecord.replayed_examples`), well ahead of a
replay in Python (figures: docs/BENCHMARKS.md).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from minigo_core.base import native
from minigo_core.game import coords, go
from minigo_core.game.features import num_planes

# The feature sets by the number the C side knows them by (board.h's kFeaturesAgz, kFeaturesMlperf07,
# kFeaturesLadders).
FEATURE_SET_IDS = {"agz": 0, "mlperf07": 1, "ladders": 2, "tactics": 3, "passalive": 4}
BAD_ARGUMENTS = -1000000  # mg_replay_examples returns this or less for bad arguments

_I, _F64 = ctypes.c_int, ctypes.c_double
_I32P, _I8P = ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int8)
_U8P, _F64P = ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_double)
# rules_capi.h's mg_replay_examples: (restype, argtypes)
REPLAY_FUNCTIONS: dict[str, native.Signature] = {
    "mg_replay_examples": (_I, [_I, _F64, _I, _I32P, _I, _I32P, _I, _U8P, _I8P, _I8P, _F64P]),
}
LIBRARY = native.Library("minigo_core.game", "_rules", REPLAY_FUNCTIONS)


def feature_set_id(feature_set: str) -> int:
    """The C side's number of a feature set; ValueError for an unknown one."""
    try:
        return FEATURE_SET_IDS[feature_set]
    except KeyError:
        raise ValueError(
            f"unknown feature set {feature_set!r}: use one of {', '.join(FEATURE_SET_IDS)}"
        ) from None


@dataclass(frozen=True)
class Replayed:
    """What one replay gives: per requested position its planes and colour to move; the final position's
    Tromp-Taylor ownership and score."""

    planes: np.ndarray  # uint8 (k, P, N, N): features.extract_batch of the requested positions
    to_play: np.ndarray  # int8 (k,): 1 Black, -1 White (Position.to_play)
    ownership: np.ndarray  # int8 (N*N,): the final position's Position.ownership()
    score: float  # the final position's Position.score(): Black's area minus White's, minus komi


def flat_moves(moves: Sequence[coords.Move], board_size: int) -> np.ndarray:
    """Moves `(row, col)` / None as int32 flat points `row * N + col`, the pass `N * N`."""
    n = int(board_size)
    return np.array([n * n if m is None else m[0] * n + m[1] for m in moves], dtype=np.int32)


def replay_examples(
    moves: Sequence[coords.Move], board_size: int, komi: float, feature_set: str, at: Sequence[int]
) -> Replayed:
    """Replay `moves` from the empty board; the planes and colour to move of the positions `at` (move
    numbers 0 .. len(moves), any order, repeats allowed: the position before that move, `len(moves)` the final
    one), and the final position's ownership and score.

    An illegal move raises `go.IllegalMove` naming it as `go.replay` does ("move 12: D4 (black) is illegal:
    ..."); a move number out of range, ValueError. NativeUnavailable when the engine library is not built.
    """
    n = int(board_size)
    flat = flat_moves(moves, n)
    at = np.asarray(at, dtype=np.int64).reshape(-1)
    if at.size and (at.min() < 0 or at.max() > flat.size):
        raise ValueError(f"positions {at.min()}..{at.max()} asked of a game of {flat.size} moves")
    order = np.argsort(at, kind="stable")
    sorted_at = np.ascontiguousarray(at[order], dtype=np.int32)
    p = num_planes(feature_set)
    planes = np.empty((at.size, p, n, n), dtype=np.uint8)
    to_play = np.empty(at.size, dtype=np.int8)
    ownership = np.empty(n * n, dtype=np.int8)
    score = ctypes.c_double()
    code = native.load(LIBRARY).mg_replay_examples(
        n, float(komi), feature_set_id(feature_set), flat.ctypes.data_as(_I32P), int(flat.size),
        sorted_at.ctypes.data_as(_I32P), int(at.size), planes.ctypes.data_as(_U8P),
        to_play.ctypes.data_as(_I8P), ownership.ctypes.data_as(_I8P), ctypes.byref(score),
    )  # fmt: skip
    if code <= BAD_ARGUMENTS:
        raise ValueError(f"mg_replay_examples refused its arguments: board size {n}, {flat.size} moves")
    if code < 0:
        _raise_illegal(moves, n, komi, -1 - code)
    if at.size and not np.array_equal(order, np.arange(at.size)):  # back in the order asked
        unsorted = np.empty_like(order)
        unsorted[order] = np.arange(at.size)
        planes, to_play = planes[unsorted], to_play[unsorted]
    return Replayed(planes, to_play, ownership, float(score.value))


def _raise_illegal(moves: Sequence[coords.Move], board_size: int, komi: float, index: int) -> None:
    """Raise go.replay's IllegalMove for move `index`, which the compiled board refused (the Python rules
    say why; the error path only)."""
    go.replay(moves[: index + 1], board_size, komi)  # raises "move {index + 1}: ... is illegal: why"
    raise go.IllegalMove(f"move {index + 1}: {moves[index]!r} is illegal on the compiled board")
