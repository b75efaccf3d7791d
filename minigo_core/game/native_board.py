"""The compiled rules' board, `minigo_core/game/_rules*.so` (`csrc/rules_capi.h`), from Python.

`NativeBoard` wraps one C++ `Board` (`csrc/board.h`) through the library's `mg_board_*` functions (ctypes):
the same rules, feature planes and symmetries as `minigo_core.game` (tests/unit/test_engine_rules.py
compares them move by move). Unlike `go.Position` it is mutable: `play` changes it in place; `copy` gives an
independent one. Points are flat indices `row * N + col`; the pass is `N * N`.

Tests and the rules benchmark drive a board with it; the searcher (`minigo_core.search.engine`) plays on
the same board.cpp compiled into its own library, and the window replays games through `native_replay`.
"""

from __future__ import annotations

import ctypes

import numpy as np

from minigo_core.base import native
from minigo_core.game import coords, go, native_replay

_P = ctypes.c_void_p
_I = ctypes.c_int
_F64 = ctypes.c_double
# The board's C functions of csrc/rules_capi.h, in its order: (restype, argtypes). Keep the two in step.
RULES_FUNCTIONS: dict[str, native.Signature] = {
    "mg_board_create": (_P, [_I, _F64]),
    "mg_board_destroy": (None, [_P]),
    "mg_board_copy": (_P, [_P]),
    "mg_board_legal": (_I, [_P, _I]),
    "mg_board_play": (_I, [_P, _I]),
    "mg_board_legal_mask": (None, [_P, _P]),
    "mg_board_search_moves": (None, [_P, _P]),
    "mg_board_score": (_F64, [_P]),
    "mg_board_game_over": (_I, [_P]),
    "mg_board_to_play": (_I, [_P]),
    "mg_board_ko": (_I, [_P]),
    "mg_board_n": (_I, [_P]),
    "mg_board_size": (_I, [_P]),
    "mg_board_komi": (_F64, [_P]),
    "mg_board_last_move": (_I, [_P]),
    "mg_board_history_len": (_I, [_P]),
    "mg_board_check": (_I, [_P]),
    "mg_board_caps": (None, [_P, _P]),
    "mg_board_board": (None, [_P, _P]),
    "mg_board_board_back": (None, [_P, _I, _P]),
    "mg_board_liberties": (None, [_P, _P]),
    "mg_board_eyeish": (None, [_P, _I, _P]),
    "mg_board_num_planes": (_I, [_I]),
    "mg_board_features": (_I, [_P, _I, _I, _P]),
    "mg_board_symmetry_source": (_I, [_I, _I, _P]),
    "mg_board_random_playouts": (ctypes.c_int64, [_I, _I, ctypes.c_uint64, _P]),
}
LIBRARY = native.Library("minigo_core.game", "_rules", RULES_FUNCTIONS)


def lib() -> ctypes.CDLL:
    """The loaded rules library (loaded on first use)."""
    return native.load(LIBRARY)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


class NativeBoard:
    """A Go position on the compiled board: `play` (a flat point, in place); queries as `go.Position`'s."""

    __slots__ = ("_h", "_lib", "board_size", "n2")

    def __init__(self, board_size: int = 9, komi: float = 7.5) -> None:
        self._lib = lib()
        handle = self._lib.mg_board_create(int(board_size), float(komi))
        if not handle:
            raise ValueError(f"board_size {board_size} is not supported: use 2..{coords.MAX_BOARD_SIZE}")
        self._h = handle
        self.board_size = int(board_size)
        self.n2 = self.board_size * self.board_size

    def __del__(self) -> None:
        handle = getattr(self, "_h", None)
        if handle:
            self._lib.mg_board_destroy(handle)
            self._h = None

    def copy(self) -> NativeBoard:
        other = NativeBoard.__new__(NativeBoard)
        other._lib = self._lib
        other._h = self._lib.mg_board_copy(self._h)
        other.board_size, other.n2 = self.board_size, self.n2
        return other

    # --------------------------------------------------------------------------------------------- moves

    def is_legal(self, flat: int) -> bool:
        """Legal for the side to move (the pass `N * N` always; off the board never)."""
        return bool(self._lib.mg_board_legal(self._h, int(flat)))

    def try_play(self, flat: int) -> bool:
        """Plays `flat` if it is legal (True); else changes nothing (False)."""
        return self._lib.mg_board_play(self._h, int(flat)) == 0

    def play(self, flat: int) -> NativeBoard:
        """Plays `flat` in place (returns self); raises `go.IllegalMove` if it is illegal."""
        if not self.try_play(flat):
            raise go.IllegalMove(
                f"flat point {flat} is illegal on this {self.board_size}x{self.board_size} board"
            )
        return self

    def play_move(self, move: go.Move) -> NativeBoard:
        """`play` with a `(row, col)` move or `None` for a pass."""
        return self.play(self.n2 if move is None else coords.to_flat(move, self.board_size))

    # ------------------------------------------------------------------------------------------- queries

    def _buffer(self, dtype: type, length: int | None = None) -> np.ndarray:
        return np.empty(self.n2 if length is None else length, dtype=dtype)

    def legal_mask(self) -> np.ndarray:
        """`Position.all_legal_moves()`: bool N*N+1, pass last."""
        out = self._buffer(np.uint8, self.n2 + 1)
        self._lib.mg_board_legal_mask(self._h, _ptr(out))
        return out.view(bool)

    def search_moves(self) -> np.ndarray:
        """`mcts.search_moves(position)`: bool N*N+1, pass last."""
        out = self._buffer(np.uint8, self.n2 + 1)
        self._lib.mg_board_search_moves(self._h, _ptr(out))
        return out.view(bool)

    def board(self) -> np.ndarray:
        """int8 `(N, N)`: 1 black, -1 white, 0 empty."""
        out = self._buffer(np.int8)
        self._lib.mg_board_board(self._h, _ptr(out))
        return out.reshape(self.board_size, self.board_size)

    def board_back(self, i: int) -> np.ndarray:
        """The board `i` moves ago (0: now; past the 7 kept, the oldest kept), int8 `(N, N)`."""
        out = self._buffer(np.int8)
        self._lib.mg_board_board_back(self._h, int(i), _ptr(out))
        return out.reshape(self.board_size, self.board_size)

    def liberty_counts(self) -> np.ndarray:
        """int16 `(N, N)`: liberties of the group on each point, 0 where empty."""
        out = self._buffer(np.int16)
        self._lib.mg_board_liberties(self._h, _ptr(out))
        return out.reshape(self.board_size, self.board_size)

    def eyeish(self, color: int) -> np.ndarray:
        """bool `(N, N)`: empty points whose every on-board neighbour is of `color`."""
        out = self._buffer(np.uint8)
        self._lib.mg_board_eyeish(self._h, int(color), _ptr(out))
        return out.view(bool).reshape(self.board_size, self.board_size)

    def atari_liberties(self, color: int) -> np.ndarray:
        """bool `(N, N)`: empty points that are the last liberty of a group of `color`."""
        board = np.pad(self.board(), 1, constant_values=2)  # off the board: neither colour
        libs = np.pad(self.liberty_counts(), 1)
        hit = np.zeros((self.board_size, self.board_size), dtype=bool)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            rows = slice(1 + dr, 1 + dr + self.board_size)
            cols = slice(1 + dc, 1 + dc + self.board_size)
            hit |= (board[rows, cols] == color) & (libs[rows, cols] == 1)
        return hit & (board[1:-1, 1:-1] == go.EMPTY)

    def features(self, feature_set: str, sym: int = 0) -> np.ndarray:
        """uint8 `(P, N, N)`: `symmetries.apply_planes(sym, features.extract(position, feature_set))`."""
        fs = native_replay.feature_set_id(feature_set)
        out = self._buffer(np.uint8, self._lib.mg_board_num_planes(fs) * self.n2)
        if self._lib.mg_board_features(self._h, fs, int(sym), _ptr(out)) < 0:
            raise ValueError(f"symmetry must be 0..7, got {sym}")
        return out.reshape(-1, self.board_size, self.board_size)

    def score(self) -> float:
        """Tromp-Taylor: Black's area minus White's, minus komi."""
        return float(self._lib.mg_board_score(self._h))

    def is_game_over(self) -> bool:
        return bool(self._lib.mg_board_game_over(self._h))

    def check_invariants(self) -> None:
        """Recompute the groups from the stones and compare with the incremental tracker (raises)."""
        code = self._lib.mg_board_check(self._h)
        if code:
            raise AssertionError(f"native board invariants broken (code {code})")

    @property
    def to_play(self) -> int:
        return int(self._lib.mg_board_to_play(self._h))

    @property
    def n(self) -> int:
        return int(self._lib.mg_board_n(self._h))

    @property
    def komi(self) -> float:
        return float(self._lib.mg_board_komi(self._h))

    @property
    def ko_flat(self) -> int:
        """The ko point as a flat index, -1 when there is none."""
        return int(self._lib.mg_board_ko(self._h))

    @property
    def ko(self) -> go.Move:
        """The ko point as `(row, col)`, None when there is none (as `Position.ko`)."""
        k = self.ko_flat
        return None if k < 0 else divmod(k, self.board_size)

    @property
    def last_move(self) -> int:
        """The move just played (flat, `N * N` a pass), -1 at the start."""
        return int(self._lib.mg_board_last_move(self._h))

    @property
    def history_len(self) -> int:
        return int(self._lib.mg_board_history_len(self._h))

    @property
    def caps(self) -> tuple[int, int]:
        out = np.zeros(2, dtype=np.int32)
        self._lib.mg_board_caps(self._h, _ptr(out))
        return int(out[0]), int(out[1])

    def __repr__(self) -> str:
        return f"NativeBoard(board_size={self.board_size}, n={self.n}, to_play={self.to_play})"


def symmetry_source(sym: int, board_size: int) -> np.ndarray:
    """int16 N*N+1: the compiled `symmetries._source_index(sym, board_size)`."""
    out = np.empty(board_size * board_size + 1, dtype=np.int16)
    if lib().mg_board_symmetry_source(int(sym), int(board_size), _ptr(out)) < 0:
        raise ValueError(f"no symmetry table for sym {sym}, board size {board_size}")
    return out


def random_playouts(board_size: int, games: int, seed: int = 0) -> tuple[int, float, float]:
    """Random games played entirely in C++ (rules benchmark): (moves, playout seconds, replay seconds)."""
    seconds = np.zeros(2, dtype=np.float64)
    moves = lib().mg_board_random_playouts(
        int(board_size), int(games), int(seed) & (2**64 - 1), _ptr(seconds)
    )
    if moves < 0:
        raise ValueError(f"bad board size {board_size} or games {games}")
    return int(moves), float(seconds[0]), float(seconds[1])
