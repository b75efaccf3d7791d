"""The compiled self-play engine, `minigo_core/search/_engine*.so`, through its plain C interface (ctypes).

The library holds the Go rules, the feature planes and symmetries, the PUCT and Gumbel searches and the
scheduler that plays many games in one process, with the fused inference engine inside (no Python between
readouts). `MINIGO_ENGINE_LIB` may name another build of the library (tests of a work in progress).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from minigo_core.base.config import RunConfig, SelfplaySettings
from minigo_core.nn import fused, modelfile

_LIB: ctypes.CDLL | None = None
_LOCK = threading.Lock()


class EngineUnavailable(ImportError):
    """The compiled engine library is not built."""


def library_path() -> str:
    override = os.environ.get("MINIGO_ENGINE_LIB")
    if override:
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    path = fused.find_library(here, "_engine")
    if path is not None:
        return path
    raise EngineUnavailable(
        f"the compiled self-play engine minigo_core/search/_engine*.so is not built in {here}; run "
        "`make setup` (or `.venv/bin/pip install --no-build-isolation -e .`) in the repository"
    )


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use)."""
    global _LIB
    with _LOCK:
        if _LIB is None:
            handle = ctypes.CDLL(library_path())
            if hasattr(handle, "mg_selfplay_create"):  # (a rules-only test build has none of these)
                fused.declare(handle)
                _declare(handle)
                handle.mg_set_num_threads(fused.default_num_threads())
            _LIB = handle
        return _LIB


# ------------------------------------------------------------------------------------------- the C interface
_i32, _f64, _vp = ctypes.c_int32, ctypes.c_double, ctypes.c_void_p
SEARCHES = {"puct": 0, "gumbel": 1}
FEATURE_SET_IDS = {"agz": 0, "mlperf07": 1}


class SearchSettings(ctypes.Structure):
    """search.h's `SearchSettings`, field for field."""

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
    ]


def _declare(handle: ctypes.CDLL) -> None:
    i32p = ctypes.POINTER(ctypes.c_int32)
    f32p = ctypes.POINTER(ctypes.c_float)
    f64p = ctypes.POINTER(ctypes.c_double)
    i64p = ctypes.POINTER(ctypes.c_int64)
    i8p = ctypes.POINTER(ctypes.c_int8)
    u8p = ctypes.POINTER(ctypes.c_uint8)
    settings_p = ctypes.POINTER(SearchSettings)
    i, i64, cp = ctypes.c_int, ctypes.c_int64, ctypes.c_char_p
    for name, res, args in (
        ("mg_engine_settings_size", i, []),
        ("mg_selfplay_create", _vp, [_vp, settings_p, i, _f64, i64, i, i, i, cp, i]),
        ("mg_selfplay_run", i, [_vp, ctypes.POINTER(ctypes.c_int), i]),
        ("mg_selfplay_game_info", i, [_vp, i, i64p, f64p]),
        ("mg_selfplay_game_moves", i, [_vp, i, i32p]),
        ("mg_selfplay_game_rows", i, [_vp, i, i32p, i32p, f32p, f32p, i8p]),
        ("mg_selfplay_skip", i, [_vp, i]),
        ("mg_selfplay_game_release", None, [_vp, i]),
        ("mg_selfplay_stats", None, [_vp, f64p]),
        ("mg_selfplay_destroy", None, [_vp]),
        ("mg_searcher_create", _vp, [_vp, settings_p, i, _f64, i64, cp, i]),
        ("mg_searcher_search", i, [_vp, i32p, i, i, i, i32p, f32p, f64p, ctypes.POINTER(ctypes.c_int)]),
        ("mg_searcher_destroy", None, [_vp]),
        ("mg_gumbel_improved_policy", None, [i, f64p, i32p, f64p, u8p, _f64, _f64, _f64, f64p]),
        ("mg_numpy_sum", _f64, [f64p, i]),
    ):
        fn = getattr(handle, name)
        fn.restype = res
        fn.argtypes = args
    if handle.mg_engine_settings_size() != ctypes.sizeof(SearchSettings):
        raise EngineUnavailable(
            f"the engine library {library_path()} does not match minigo_core/search/engine.py "
            "(SearchSettings differs); rebuild it with `make setup`"
        )


def _ptr(a: np.ndarray, ctype: type) -> Any:
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def set_num_threads(n: int) -> None:
    """DSP cores (worker threads) of the engine's network."""
    if int(n) < 1:
        raise ValueError(f"the number of DSP cores must be at least 1, got {n}")
    lib().mg_set_num_threads(int(n))


def load_network(url: str, threads: int | None = None) -> fused.FusedModel:
    """The model file at `url` as a fused network inside the engine library (`threads` DSP cores)."""
    handle = lib()
    if threads is not None:
        set_num_threads(threads)
    f = modelfile.read(url)
    return fused.FusedModel(f.config, f.tensors, f.provenance, library=handle)


def settings_for(
    run_cfg: RunConfig,
    feature_set: str,
    *,
    selfplay: SelfplaySettings | None = None,
    softpick_moves: int | None = None,
    random_symmetry: bool = True,
) -> SearchSettings:
    """The engine's settings from the run config's `selfplay` section (or `selfplay`), read as MCTSPlayer
    reads them: softpick moves and the Dirichlet alpha from the run config's rules for the board size."""
    s = selfplay or run_cfg.selfplay
    search = getattr(s, "search", "puct")
    if search not in SEARCHES:
        raise ValueError(f"selfplay.search {search!r} is not one of {', '.join(SEARCHES)}")
    if feature_set not in FEATURE_SET_IDS:
        raise ValueError(f"unknown feature set {feature_set!r}: use one of {', '.join(FEATURE_SET_IDS)}")
    return SearchSettings(
        search=SEARCHES[search],
        readouts=int(s.readouts),
        fast_readouts=int(s.fast_readouts),
        parallel_readouts=int(s.parallel_readouts),
        full_search_fraction=float(s.full_search_fraction),
        c_base=float(s.c_base),
        c_init=float(s.c_init),
        dirichlet_weight=float(s.dirichlet_weight),
        dirichlet_alpha=float(run_cfg.dirichlet_alpha),
        softpick_moves=int(run_cfg.softpick_moves if softpick_moves is None else softpick_moves),
        init_unvisited_loss=int(s.init_unvisited == "loss"),
        resign_threshold=float(s.resign_threshold),
        resign_disabled_fraction=float(s.resign_disabled_fraction),
        gumbel_considered=int(getattr(s, "gumbel_considered", 16)),
        random_symmetry=int(bool(random_symmetry)),
        gumbel_c_visit=float(getattr(s, "gumbel_c_visit", 50.0)),
        gumbel_c_scale=float(getattr(s, "gumbel_c_scale", 1.0)),
        feature_set=FEATURE_SET_IDS[feature_set],
        max_game_length=0,
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
        settings: SearchSettings,
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
        lib_.mg_selfplay_game_rows(
            h, game, _ptr(move_index, ctypes.c_int32), _ptr(visits, ctypes.c_int32),
            _ptr(policy, ctypes.c_float), _ptr(root_value, ctypes.c_float), _ptr(to_play, ctypes.c_int8),
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
        self, net: fused.FusedModel, settings: SearchSettings, *, board_size: int, komi: float, seed: int = 0
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

    def search(self, moves: list[int], *, full_search: bool = True, noise: bool = False) -> SearchOutcome:
        """Search the position after `moves` (flat, pass = N*N) from the empty board."""
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
        if code <= -1000000:
            raise RuntimeError("the engine's search failed")
        if code < 0:
            i = -1 - code
            if i < len(arr):
                raise ValueError(f"move {i + 1} ({int(arr[i])}) of the position is illegal")
            raise ValueError("the position is a finished game: nothing to search")
        return SearchOutcome(visits.astype(np.int64), policy, float(value.value), int(move.value))


def gumbel_improved_policy(
    prior: np.ndarray,
    visits: np.ndarray,
    q_mover: np.ndarray,
    legal: np.ndarray,
    raw_value: float,
    c_visit: float = 50.0,
    c_scale: float = 1.0,
) -> np.ndarray:
    """The engine's Gumbel improved policy softmax(logits + sigma(completed Q)) (see search.h), for tests."""
    a = len(prior)
    prior = np.ascontiguousarray(prior, np.float64)
    visits = np.ascontiguousarray(visits, np.int32)
    q = np.ascontiguousarray(q_mover, np.float64)
    legal_u8 = np.ascontiguousarray(legal, np.uint8)
    out = np.zeros(a, np.float64)
    lib().mg_gumbel_improved_policy(
        a, _ptr(prior, ctypes.c_double), _ptr(visits, ctypes.c_int32), _ptr(q, ctypes.c_double),
        _ptr(legal_u8, ctypes.c_uint8), raw_value, c_visit, c_scale, _ptr(out, ctypes.c_double),
    )  # fmt: skip
    return out
