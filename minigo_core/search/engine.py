"""The compiled self-play engine, `minigo_core/search/_engine*.so`, through its plain C interface (ctypes).

The library holds the feature planes and symmetries, the PUCT and Gumbel searches and the scheduler that
plays many games in one process, on the rules' board (`game/csrc/board.cpp`, compiled in), with the fused
inference engine inside (no Python between readouts), and the `uct:N` reference player's search
(`uct_genmove`: UCT with random playouts, no network). Its C interface is `csrc/engine_capi.h`;
`minigo_core.base.native` loads it.
`MINIGO_ENGINE_LIB` may name another build of the library (tests of a work in progress).
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from minigo_core.base import native
from minigo_core.base.config import SearchSettings
from minigo_core.base.runtime import DEFAULT_RUNTIME, Runtime
from minigo_core.game import native_replay
from minigo_core.nn import fused, modelfile

_i32, _f64, _vp = ctypes.c_int32, ctypes.c_double, ctypes.c_void_p
SEARCHES = {"puct": 0, "gumbel": 1}
# The feature sets by the number the C side knows them by (board.h's kFeatures*).
FEATURE_SET_IDS = native_replay.FEATURE_SET_IDS
feature_set_id = native_replay.feature_set_id


class EngineSettings(ctypes.Structure):
    """engine_capi.h's `MgEngineSettings` (the engine's search settings), field for field.

    The C side of `config.SearchSettings` (the one type of a search's settings, self-play's and a player's),
    built from it by `settings_for` and nowhere else.
    """

    _fields_ = [
        ("search", _i32),
        ("readouts", _i32),
        ("fast_readouts", _i32),
        ("parallel_readouts", _i32),
        ("full_search_fraction", _f64),
        ("c_base", _f64),
        ("c_init", _f64),
        ("dirichlet_weight", _f64),
        ("dirichlet_alpha", _f64),
        ("softpick_moves", _i32),
        ("init_unvisited_loss", _i32),
        ("resign_threshold", _f64),
        ("resign_disabled_fraction", _f64),
        ("gumbel_considered", _i32),
        ("random_symmetry", _i32),
        ("gumbel_c_visit", _f64),
        ("gumbel_c_scale", _f64),
        ("feature_set", _i32),
        ("max_game_length", _i32),
        ("stop_after_moves", _i32),
        ("score_utility", _f64),
        ("score_utility_scale", _f64),
    ]


_I32P, _F32P, _F64P = ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_float), ctypes.POINTER(_f64)
_I8P = ctypes.POINTER(ctypes.c_int8)
_I, _I64, _CP, _SETTINGS_P = ctypes.c_int, ctypes.c_int64, ctypes.c_char_p, ctypes.POINTER(EngineSettings)
# The C functions of csrc/engine_capi.h, in its order: (restype, argtypes). Keep the two in step. The library
# also exports the fused inference network (infer_capi.h, which engine_capi.h includes): fused's table first.
ENGINE_FUNCTIONS: dict[str, native.Signature] = {
    **fused.INFER_FUNCTIONS,
    "mg_engine_sizeof_EngineSettings": (ctypes.c_size_t, []),
    "mg_selfplay_create": (_vp, [_vp, _SETTINGS_P, _I, _f64, _I64, _I, _I, _I, _CP, _I]),
    "mg_selfplay_run": (_I, [_vp, ctypes.POINTER(_I), _I]),
    "mg_selfplay_game_info": (_I, [_vp, _I, ctypes.POINTER(ctypes.c_int64), _F64P]),
    "mg_selfplay_game_moves": (_I, [_vp, _I, _I32P]),
    "mg_selfplay_game_rows": (
        _I,
        [_vp, _I, _I32P, _I32P, _F32P, _F32P, ctypes.POINTER(ctypes.c_int8), _F32P],
    ),
    "mg_selfplay_skip": (_I, [_vp, _I]),
    "mg_selfplay_game_release": (None, [_vp, _I]),
    "mg_selfplay_stats": (None, [_vp, _F64P]),
    "mg_selfplay_destroy": (None, [_vp]),
    "mg_searcher_create": (_vp, [_vp, _SETTINGS_P, _I, _f64, _I64, _CP, _I]),
    "mg_searcher_search": (_I, [_vp, _I32P, _I, _I, _I, _I32P, _F32P, _F64P, ctypes.POINTER(_I)]),
    "mg_searcher_search_many": (_I, [_vp, _I, _I32P, _I32P, _I, _I, _I32P]),
    "mg_searcher_result": (_I, [_vp, _I, _I32P, _F32P, _F64P, ctypes.POINTER(_I)]),
    "mg_searcher_root_stats": (_I, [_vp, _I, _I32P, _F64P, _F32P, ctypes.POINTER(ctypes.c_uint8), _F64P]),
    "mg_searcher_pv": (_I, [_vp, _I, _I, _I32P, _I32P, _I]),
    "mg_searcher_set_avoid": (_I, [_vp, _I, ctypes.POINTER(ctypes.c_uint8)]),
    "mg_searcher_set_readouts": (_I, [_vp, _I]),
    "mg_searcher_destroy": (None, [_vp]),
    "mg_uct_genmove": (_i32, [_I, _f64, _I32P, _I, _I64, ctypes.c_uint64, _f64, _F64P, _I32P]),
}


LIBRARY = native.Library(
    "minigo_core.search",
    "_engine",
    ENGINE_FUNCTIONS,
    structs=(EngineSettings,),
    sizeof_prefix="mg_engine",
    env="MINIGO_ENGINE_LIB",
)


def lib() -> ctypes.CDLL:
    """The loaded `_engine` library (loaded on first use)."""
    return native.load(LIBRARY)


def _ptr(a: np.ndarray, ctype: type) -> Any:
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def load_network(url: str, runtime: Runtime = DEFAULT_RUNTIME) -> fused.FusedModel:
    """The model file at `url` as a fused network inside the engine library, run as `runtime` says (its
    `threads` DSP cores, `isa`, `winograd`)."""
    handle = lib()
    f = modelfile.read(url)
    return fused.FusedModel(f.config, f.tensors, f.provenance, library=handle, runtime=runtime)


def settings_for(search: SearchSettings, feature_set: str, board_size: int) -> EngineSettings:
    """`search` as the engine's C struct, for a network of `feature_set` on a `board_size` board: the one
    place a search's settings cross into the engine (the Dirichlet alpha resolved for the board size)."""
    if search.search not in SEARCHES:
        raise ValueError(f"selfplay.search {search.search!r} is not one of {', '.join(SEARCHES)}")
    feature_set_number = feature_set_id(feature_set)
    return EngineSettings(
        search=SEARCHES[search.search],
        readouts=int(search.readouts),
        fast_readouts=int(search.fast_readouts),
        parallel_readouts=int(search.parallel_readouts),
        full_search_fraction=float(search.full_search_fraction),
        c_base=float(search.c_base),
        c_init=float(search.c_init),
        dirichlet_weight=float(search.dirichlet_weight),
        dirichlet_alpha=float(search.noise_alpha(board_size)),
        softpick_moves=int(search.softpick_moves),
        init_unvisited_loss=int(search.init_unvisited == "loss"),
        resign_threshold=float(search.resign_threshold),
        resign_disabled_fraction=float(search.resign_disabled_fraction),
        gumbel_considered=int(search.gumbel_considered),
        random_symmetry=int(bool(search.random_symmetry)),
        gumbel_c_visit=float(search.gumbel_c_visit),
        gumbel_c_scale=float(search.gumbel_c_scale),
        feature_set=feature_set_number,
        max_game_length=0,
        stop_after_moves=0,
        score_utility=float(search.score_utility),
        score_utility_scale=float(search.score_utility_scale),
    )


@dataclasses.dataclass
class FinishedGame:
    """A game the engine finished: its moves and the targets of its fully searched positions."""

    index: int
    moves: np.ndarray  # int32 flat moves (pass = N*N)
    move_index: np.ndarray  # int64 (rows,)
    visits: np.ndarray  # int64 (rows, N*N+1)
    policy: np.ndarray | None  # float32 (rows, N*N+1): Gumbel's improved policy; None for PUCT
    root_value: np.ndarray  # float32 (rows,)
    to_play: np.ndarray  # int8 (rows,)
    surprise: np.ndarray  # float32 (rows,): KL(the policy target || the network's prior) at the root, nats
    resigned_by: int
    would_resign: tuple[int, int] | None
    resign_enabled: bool
    score: float
    readouts: int


@dataclasses.dataclass
class EngineStats:
    total_s: float
    network_s: float
    features_s: float
    batches: int
    leaves: int
    readouts: int
    max_batch: int
    nodes: int  # tree nodes held now, all games
    blocks: int  # children's statistics blocks held now, all games

    @property
    def mean_batch(self) -> float:
        return self.leaves / self.batches if self.batches else 0.0


class SelfplayGames:
    """Games first_game .. first_game+count-1 of a generation, played concurrently by the compiled engine.

    `for game in games.finished(): ...` yields each game the moment it ends (in the order they end).
    """

    def __init__(
        self,
        net: fused.FusedModel,
        settings: EngineSettings,
        *,
        board_size: int,
        komi: float,
        seed: int,
        generation: int,
        first_game: int,
        count: int,
    ) -> None:
        self._lib = lib()
        self._net = net  # kept alive: the engine holds a pointer to its weights
        self._settings = settings
        self.board_size = board_size
        err = ctypes.create_string_buffer(512)
        handle = self._lib.mg_selfplay_create(
            net.handle,
            ctypes.byref(settings),
            board_size,
            komi,
            seed,
            generation,
            first_game,
            count,
            err,
            512,
        )
        if not handle:
            raise ValueError(f"cannot start the self-play engine: {err.value.decode(errors='replace')}")
        self._handle = ctypes.c_void_p(handle)
        self.search = "gumbel" if settings.search == 1 else "puct"

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.mg_selfplay_destroy(handle)
            self._handle = None

    def skip(self, game: int) -> None:
        """Leave game `game` out (before the first `finished()`): an earlier attempt already wrote its file.
        The other games are the same as without the skip (each game's moves depend on its own random stream,
        not on the games that share its batches)."""
        if self._lib.mg_selfplay_skip(self._handle, int(game)) != 0:
            raise ValueError(f"game {game} is not one of this engine's games")

    def finished(self) -> Iterator[FinishedGame]:
        out = (ctypes.c_int * 64)()
        while True:
            n = self._lib.mg_selfplay_run(self._handle, out, 64)
            if n < 0:
                raise RuntimeError("the self-play engine failed")
            if n == 0:
                return
            for k in range(n):
                yield self._take(int(out[k]))

    def _take(self, game: int) -> FinishedGame:
        lib_, h = self._lib, self._handle
        info = np.zeros(8, np.int64)
        score = ctypes.c_double()
        if lib_.mg_selfplay_game_info(h, game, _ptr(info, ctypes.c_int64), ctypes.byref(score)) != 0:
            raise RuntimeError(f"the engine has no finished game {game}")
        num_moves, rows = int(info[0]), int(info[1])
        a = self.board_size * self.board_size + 1
        moves = np.zeros(num_moves, np.int32)
        lib_.mg_selfplay_game_moves(h, game, _ptr(moves, ctypes.c_int32))
        move_index = np.zeros(rows, np.int32)
        visits = np.zeros((rows, a), np.int32)
        policy = np.zeros((rows, a), np.float32)
        root_value = np.zeros(rows, np.float32)
        to_play = np.zeros(rows, np.int8)
        surprise = np.zeros(rows, np.float32)
        lib_.mg_selfplay_game_rows(
            h, game, _ptr(move_index, ctypes.c_int32), _ptr(visits, ctypes.c_int32),
            _ptr(policy, ctypes.c_float), _ptr(root_value, ctypes.c_float), _ptr(to_play, ctypes.c_int8),
            _ptr(surprise, ctypes.c_float),
        )  # fmt: skip
        lib_.mg_selfplay_game_release(h, game)
        return FinishedGame(
            index=game,
            moves=moves,
            move_index=move_index.astype(np.int64),
            visits=visits.astype(np.int64),
            policy=policy if self.search == "gumbel" else None,
            root_value=root_value,
            to_play=to_play,
            surprise=surprise,
            resigned_by=int(info[2]),
            would_resign=None if info[3] < 0 else (int(info[3]), int(info[4])),
            resign_enabled=bool(info[5]),
            score=float(score.value),
            readouts=int(info[6]),
        )

    def stats(self) -> EngineStats:
        out = np.zeros(9, np.float64)
        self._lib.mg_selfplay_stats(self._handle, _ptr(out, ctypes.c_double))
        return EngineStats(*(float(v) for v in out[:3]), *(int(v) for v in out[3:]))


@dataclasses.dataclass
class SearchOutcome:
    visits: np.ndarray  # int64 (N*N+1,)
    policy: np.ndarray  # float32 (N*N+1,): Gumbel's improved policy at the root (whatever the search)
    root_value: float  # mover's view
    move: int  # flat


class Searcher:
    """One search of one position at a time, keeping its tree between calls (as mcts.MCTSPlayer does)."""

    def __init__(
        self, net: fused.FusedModel, settings: EngineSettings, *, board_size: int, komi: float, seed: int = 0
    ) -> None:
        self._lib = lib()
        self._net = net
        self._settings = settings
        self.board_size = board_size
        err = ctypes.create_string_buffer(512)
        handle = self._lib.mg_searcher_create(
            net.handle, ctypes.byref(settings), board_size, komi, seed, err, 512
        )
        if not handle:
            raise ValueError(f"cannot start the searcher: {err.value.decode(errors='replace')}")
        self._handle = ctypes.c_void_p(handle)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.mg_searcher_destroy(handle)
            self._handle = None

    def set_avoid(self, slot: int, avoid: np.ndarray | None) -> None:
        """Root moves `slot`'s searches must not try (bool (N*N+1,), or None: none) until set again; a change
        starts the slot's tree afresh. Keep at least one legal move out of it."""
        mask = None if avoid is None else np.ascontiguousarray(avoid, dtype=np.uint8)
        if mask is not None and mask.shape != (self.board_size**2 + 1,):
            raise ValueError(f"avoid must hold {self.board_size**2 + 1} entries, not {mask.shape}")
        ptr = None if mask is None else _ptr(mask, ctypes.c_uint8)
        if self._lib.mg_searcher_set_avoid(self._handle, int(slot), ptr) != 0:
            raise ValueError(f"cannot set the moves to avoid of slot {slot}")

    def set_readouts(self, readouts: int) -> None:
        """The readouts of the next full searches (the tree is kept: a search by time grows its chunks)."""
        if readouts < 1 or self._lib.mg_searcher_set_readouts(self._handle, int(readouts)) != 0:
            raise ValueError(f"readouts must be >= 1, not {readouts}")

    def search(self, moves: list[int], *, full_search: bool = True, noise: bool = False) -> SearchOutcome:
        """Search the position after `moves` (flat, pass = N*N) from the empty board (slot 0)."""
        a = self.board_size * self.board_size + 1
        arr = np.asarray(moves, dtype=np.int32)
        visits = np.zeros(a, np.int32)
        policy = np.zeros(a, np.float32)
        value = ctypes.c_double()
        move = ctypes.c_int()
        code = self._lib.mg_searcher_search(
            self._handle, _ptr(arr, ctypes.c_int32), len(arr), int(full_search), int(noise),
            _ptr(visits, ctypes.c_int32), _ptr(policy, ctypes.c_float), ctypes.byref(value),
            ctypes.byref(move),
        )  # fmt: skip
        _raise_for(code, arr)
        return SearchOutcome(visits.astype(np.int64), policy, float(value.value), int(move.value))

    def search_many(
        self, positions: list[list[int] | None], *, full_search: bool = True, noise: bool = False
    ) -> list[str | None]:
        """Search several positions at once, slot k the position after `positions[k]` (flat moves from the
        empty board; None: slot k is left alone this time), each on its own kept tree, the network batched
        across them. Returns, per slot, None (searched, or left alone: `result(k)`, `root_stats(k)`,
        `pv(move, k)`) or why it was not searched."""
        if not positions:
            return []
        positions = [[-1] if p is None else p for p in positions]
        flat = np.asarray([m for p in positions for m in p], dtype=np.int32)
        offsets = np.cumsum([0] + [len(p) for p in positions]).astype(np.int32)
        codes = np.zeros(len(positions), np.int32)
        code = self._lib.mg_searcher_search_many(
            self._handle, len(positions), _ptr(flat, ctypes.c_int32), _ptr(offsets, ctypes.c_int32),
            int(full_search), int(noise), _ptr(codes, ctypes.c_int32),
        )  # fmt: skip
        if code != 0:
            raise RuntimeError("the engine's search failed")
        out: list[str | None] = []
        for k, c in enumerate(codes):
            if c == 1:
                out.append(None)
                continue
            try:
                _raise_for(int(c), np.asarray(positions[k], dtype=np.int32))
                out.append(None)
            except ValueError as exc:
                out.append(str(exc))
        return out

    def result(self, slot: int = 0) -> SearchOutcome:
        """The last search of `slot`."""
        a = self.board_size * self.board_size + 1
        visits = np.zeros(a, np.int32)
        policy = np.zeros(a, np.float32)
        value = ctypes.c_double()
        move = ctypes.c_int()
        code = self._lib.mg_searcher_result(
            self._handle, int(slot), _ptr(visits, ctypes.c_int32), _ptr(policy, ctypes.c_float),
            ctypes.byref(value), ctypes.byref(move),
        )  # fmt: skip
        if code != 0:
            raise ValueError(f"slot {slot} has not been searched")
        return SearchOutcome(visits.astype(np.int64), policy, float(value.value), int(move.value))

    def root_stats(self, slot: int = 0) -> RootStats:
        """The root of `slot`'s tree after its last search (what analysis shows)."""
        a = self.board_size * self.board_size + 1
        visits = np.zeros(a, np.int32)
        q = np.zeros(a, np.float64)
        prior = np.zeros(a, np.float32)
        legal = np.zeros(a, np.uint8)
        info = np.zeros(4, np.float64)
        code = self._lib.mg_searcher_root_stats(
            self._handle, int(slot), _ptr(visits, ctypes.c_int32), _ptr(q, ctypes.c_double),
            _ptr(prior, ctypes.c_float), _ptr(legal, ctypes.c_uint8), _ptr(info, ctypes.c_double),
        )  # fmt: skip
        if code != 0:
            raise ValueError(f"slot {slot} has not been searched")
        return RootStats(
            visits.astype(np.int64), q, prior, legal.astype(bool), int(info[0]), float(info[1]),
            float(info[2]), int(info[3]),
        )  # fmt: skip

    def pv(self, first: int, slot: int = 0, max_len: int = 15) -> list[int]:
        """The principal variation of `slot`'s root move `first` (flat): `first`, then the most visited
        child at each node; [] when `first` has no visits."""
        return self.pv_visits(first, slot, max_len)[0]

    def pv_visits(self, first: int, slot: int = 0, max_len: int = 15) -> tuple[list[int], list[int]]:
        """`pv` and the visits of each of its moves."""
        out = np.zeros(max(1, max_len), np.int32)
        visits = np.zeros(max(1, max_len), np.int32)
        n = self._lib.mg_searcher_pv(
            self._handle, int(slot), int(first), _ptr(out, ctypes.c_int32), _ptr(visits, ctypes.c_int32),
            len(out),
        )  # fmt: skip
        if n < 0:
            raise ValueError(f"no principal variation for move {first} of slot {slot}")
        return [int(m) for m in out[:n]], [int(v) for v in visits[:n]]


@dataclasses.dataclass(frozen=True)
class RootStats:
    """A searched root: per move (N*N + 1, pass last) visits, Q (mover's view; the root's for unvisited
    moves), the prior before noise and legality; the root's visits, Q and network value (mover's view) and
    the nodes of the tree."""

    visits: np.ndarray
    q: np.ndarray
    prior: np.ndarray
    legal: np.ndarray
    root_visits: int
    root_q: float
    net_value: float
    tree_nodes: int


def _raise_for(code: int, moves: np.ndarray) -> None:
    """A search's return code as the error it stands for (0: none)."""
    if code <= -1000000:
        raise RuntimeError("the engine's search failed")
    if code < 0:
        i = -1 - code
        if i < len(moves):
            raise ValueError(f"move {i + 1} ({int(moves[i])}) of the position is illegal")
        raise ValueError("the position is a finished game: nothing to search")


@dataclasses.dataclass(frozen=True)
class UCTMove:
    """What the `uct:N` search chose: the move (flat, pass = N*N), its win rate for the player to move, and
    the root's visits per move (N*N + 1, pass last)."""

    move: int
    winrate: float
    visits: np.ndarray


def uct_genmove(
    board_size: int, komi: float, moves: list[int], playouts: int, seed: int, exploration: float = 0.0
) -> UCTMove:
    """The `uct:N` reference player's move after `moves` (flat, pass = N*N) from the empty board: plain UCT
    with `playouts` random playouts (csrc/uct.cpp), deterministic for the same arguments. `exploration`:
    UCB1's constant (0: uct.cpp's default). ValueError for bad arguments, an illegal move, a finished game."""
    n2 = int(board_size) ** 2
    flat = np.ascontiguousarray(moves, dtype=np.int32)
    visits = np.zeros(n2 + 1, dtype=np.int32)
    winrate = _f64(0.0)
    move = lib().mg_uct_genmove(
        int(board_size),
        float(komi),
        _ptr(flat, ctypes.c_int32),
        len(flat),
        int(playouts),
        int(seed) & (2**64 - 1),
        float(exploration),
        ctypes.byref(winrate),
        _ptr(visits, ctypes.c_int32),
    )
    if move < 0:
        raise ValueError(
            f"uct search refused: board size {board_size}, {len(flat)} moves, {playouts} playouts (board "
            "size 2..19, playouts >= 1, the moves legal from the empty board and the game not over)"
        )
    return UCTMove(int(move), float(winrate.value), visits)
