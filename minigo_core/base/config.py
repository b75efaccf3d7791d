"""Typed run configuration: every setting of a run, validated, with errors that name the key.

`load_config(path_or_dict)` returns a `RunConfig`; every part of the library takes the section it needs
(`cfg.model`, `cfg.selfplay`, ...). The same dataclasses travel inside model files and game files, so any
artifact can be inspected on its own.

The dataclasses' defaults are `config.yaml`'s values, key for key (tests/unit/test_config.py checks it): a key
left out of a config means what the default run says. So a config that must not change when `config.yaml` does
(every file under config/, an ablation's base) states every key: `unstated_keys` lists those it leaves out
(tests/unit/test_derived_configs.py). Every range check lives in `validate()`; the workflow's schema
(workflow/schemas/config.schema.yaml) checks only keys, types and enums.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError

FEATURE_SETS = ("agz", "mlperf07", "ladders", "tactics", "passalive")
BACKENDS = ("dsp", "torch")
SEARCHES = ("puct", "gumbel")
LR_UNITS = ("step", "run_fraction")  # what `train.learning_rate`'s boundaries count (`learning_rate_for`)
# leaves a player's search sends to the network at once (`evaluate.parallel_readouts`; Gumbel: the considered
# moves of a phase, the same search as one at a time; `python -m minigo_core.bench play_batch`)
PLAY_PARALLEL_READOUTS = 8


class ConfigError(ValueError):
    """A config value is missing, of the wrong type or out of range; the message names the key."""


@dataclass(frozen=True)
class ModelSettings:
    blocks: int = 4
    filters: int = 32
    fc_width: int = 64
    backend: str = "dsp"
    aux_heads: bool = True
    global_pooling: bool = False
    reply_head: bool = False  # KataGo's opponent-reply policy head (trained only; the search never reads it)
    value_pool: bool = False  # KataGo's pooled value head (filters/2 channels), not AGZ's 1-channel map


@dataclass(frozen=True)
class SelfplaySettings:
    games: int = 896
    games_per_job: int = 448
    readouts: int = 4
    fast_readouts: int = 4
    readouts_schedule: tuple | None = None  # ((generation, readouts), ...): progressive simulations
    full_search_fraction: float = 1.0
    parallel_readouts: int = 1
    c_base: float = 19652.0
    c_init: float = 1.25
    dirichlet_weight: float = 0.25
    softpick_moves: int = -1
    resign_threshold: float = -0.9
    resign_disabled_fraction: float = 0.05
    init_unvisited: str = "parent"
    search: str = "gumbel"
    gumbel_considered: int = 4
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0
    threads: int = 1
    model_lag: int = 1
    # KataGo's score utility: the search backs up v + score_utility * (2/pi) atan(score / score_utility_scale)
    # (the score head's margin in points, the mover's view); 0: off (the value head alone)
    score_utility: float = 0.0
    score_utility_scale: float = 9.0  # points


@dataclass(frozen=True)
class SearchSettings:
    """How one tree search plays: the one type of a search's settings, whoever searches.

    Self-play's search and a model player's (a match, GTP, analysis) are two values of it: self-play's is the
    run config's `selfplay` section as a generation plays it (`search_settings`), a player's the same search
    by fixed readouts a move, every move a full search and no root noise (`play_settings`, `for_play`), or by
    a time budget a move (`move_time`). The reference search (`mcts.MCTSPlayer`) reads it as it is; the
    compiled engine gets it as its C struct, converted in one place (`search.engine.settings_for`).

    The defaults are a model player's without a run config: config.yaml's search at 32 readouts a move, no
    root noise, no softpick.
    """

    search: str = SelfplaySettings.search  # the root search: puct or gumbel
    readouts: int = 32  # a full search's readouts (a player's: a move's)
    fast_readouts: int = 32  # a fast search's (playout-cap randomisation: self-play only)
    full_search_fraction: float = 1.0  # the share of moves given a full search
    parallel_readouts: int = PLAY_PARALLEL_READOUTS  # leaves sent to the network at once
    c_base: float = SelfplaySettings.c_base
    c_init: float = SelfplaySettings.c_init
    dirichlet_weight: float = 0.0  # root noise's share of the prior (0: none)
    dirichlet_alpha: float | None = None  # root noise's alpha; None: the board size's (`noise_alpha`)
    softpick_moves: int = 0  # moves (from the start of the game) chosen in proportion to visits
    # resign below this root value (mover's view), except in this share of self-play games
    resign_threshold: float = SelfplaySettings.resign_threshold
    resign_disabled_fraction: float = SelfplaySettings.resign_disabled_fraction
    init_unvisited: str = SelfplaySettings.init_unvisited
    gumbel_considered: int = SelfplaySettings.gumbel_considered
    gumbel_c_visit: float = SelfplaySettings.gumbel_c_visit
    gumbel_c_scale: float = SelfplaySettings.gumbel_c_scale
    # the weight of the score utility in the value a leaf backs up (0: off) and its scale in points; what is
    # recorded and reported (root values, resignation, win rates) stays the value head's win/loss value
    score_utility: float = SelfplaySettings.score_utility
    score_utility_scale: float = SelfplaySettings.score_utility_scale
    random_symmetry: bool = True  # each network batch under a random one of the 8 symmetries
    move_time: float | None = None  # seconds a move may search (None: by readouts)
    move_clock: str = "wall"  # move_time's clock: wall, or cpu (this process's CPU time: the same under load)
    max_readouts: int | None = None  # the ceiling of a timed search (None: `readouts`)
    chunk_readouts: int = 8  # a timed search reads the clock after every chunk of this many readouts

    def noise_alpha(self, board_size: int) -> float:
        """The Dirichlet alpha of root noise: `dirichlet_alpha`, or the board size's rule."""
        return board_dirichlet_alpha(board_size) if self.dirichlet_alpha is None else self.dirichlet_alpha

    def for_play(self, readouts: int) -> SearchSettings:
        """This search as a player plays a move: `readouts` readouts, every move a full search, no root
        noise."""
        return dataclasses.replace(
            self, readouts=readouts, fast_readouts=readouts, full_search_fraction=1.0, dirichlet_weight=0.0
        )


def board_dirichlet_alpha(board_size: int) -> float:
    """Root noise's Dirichlet alpha on an N x N board: MiniGo's 0.03 on 19x19, scaled by the legal moves."""
    return 0.03 * 361 / board_size**2


@dataclass(frozen=True)
class WindowSettings:
    generations: int = 3
    generations_schedule: tuple | None = None  # ((generation, window size), ...): a window that grows
    sample_fraction: float = 0.25
    max_bad_fraction: float = 0.05
    read_threads: int = 1
    # the value target (1 - w) z + w G, z the result, G the root values' lambda-return (the root value q at 0)
    value_root_mix: float = 0.5  # w: 0 the result alone (AlphaZero), 0.5 (z + q) / 2 at lambda 0
    value_root_lambda: float = 0.0  # lambda: G_i = (1 - lambda) q_i + lambda G_(i+1), past the last z
    # s: positions drawn with weight (1 - s) + s KL / mean KL (policy surprise, data/sampling); 0 uniform
    policy_surprise_weight: float = 0.0
    parts: bool = True  # sample a generation's games once for every window that reads them (data/parts.py)


@dataclass(frozen=True)
class TrainSettings:
    ranks: int = 1
    batch_per_rank: int = 128
    learning_rate: tuple = ((0, 0.03), (5000, 0.01), (10000, 0.003))
    learning_rate_unit: str = "step"  # the boundaries: global steps, or fractions of the run (run_fraction)
    momentum: float = 0.9
    l2: float = 1e-4
    value_weight: float = 1.0
    ownership_weight: float = 1.5
    score_weight: float = 1.0
    reply_weight: float = 0.15  # the opponent-reply loss's weight (KataGo: 0.15); used with model.reply_head
    threads_per_rank: int = 1
    prefetch_batches: int = 8
    checkpoint_every: int = 200
    backend: str = "dsp"
    replay_ratio: float | None = 0.75
    ema_decay: float | None = None  # the exported weights' moving average per step (nn.ema); None: off
    timeout_s: float = 600.0  # seconds a rank waits for the others; $MINIGO_TRAIN_TIMEOUT_S overrides it


@dataclass(frozen=True)
class EvaluateSettings:
    games: int = 10
    readouts: int = 32
    softpick_moves: int = 4
    opponents: tuple = ("previous", "gnugo:1")
    target: str = "gen0"
    early_stop: bool = True
    gnugo: str = "/usr/games/gnugo"
    every: int = 8
    quiet_last: int = 12  # no mid-run evaluation in the generations this close to the last (a backlog)
    final_games: int = 100
    final_opponents: tuple = ("random",)
    final_equal_time: tuple = ("gnugo:1",)  # the last generation also meets these at equal time per move
    ladder: bool = True
    ladder_half_width: float = 100.0
    ladder_half_width_mid: float = 150.0  # the ratings before the last generation's (the curve's points)
    ladder_max_games: int = 200
    ladder_first_games: int = 16
    share: float = 0.25  # of a core an evaluation or rating job keeps beside a loop job (its nice level)
    # leaves a player's search (matches, ratings, GTP) sends to the network at once: Gumbel's considered
    # moves of a phase (the same search), PUCT with virtual loss; self-play batches across its games instead
    parallel_readouts: int = PLAY_PARALLEL_READOUTS


@dataclass(frozen=True)
class StorageSettings:
    pack_old_generations: bool = False


@dataclass(frozen=True)
class RunConfig:
    root: str = "runs/local"
    seed: int = 1
    board_size: int = 9
    komi: float = 7.5
    features: str = "ladders"
    generations: int = 48
    model: ModelSettings = field(default_factory=ModelSettings)
    selfplay: SelfplaySettings = field(default_factory=SelfplaySettings)
    window: WindowSettings = field(default_factory=WindowSettings)
    train: TrainSettings = field(default_factory=TrainSettings)
    evaluate: EvaluateSettings = field(default_factory=EvaluateSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)

    @property
    def softpick_moves(self) -> int:
        """Moves chosen in proportion to visits: the configured value, or MiniGo's (N^2 // 12) // 2 * 2."""
        if self.selfplay.softpick_moves >= 0:
            return self.selfplay.softpick_moves
        return (self.board_size**2 // 12) // 2 * 2

    @property
    def dirichlet_alpha(self) -> float:
        return board_dirichlet_alpha(self.board_size)

    def to_dict(self) -> dict:
        return to_plain(self)


SECTIONS = {
    "model": ModelSettings,
    "selfplay": SelfplaySettings,
    "window": WindowSettings,
    "train": TrainSettings,
    "evaluate": EvaluateSettings,
    "storage": StorageSettings,
}


def to_plain(obj: Any) -> Any:
    """Dataclasses/tuples -> dicts/lists, for JSON and YAML."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def _check_type(key: str, value: Any, expected: Any) -> Any:
    optional = [a for a in typing.get_args(expected) if a is not type(None)]
    if optional and len(optional) < len(typing.get_args(expected)):  # `X | None`: null, or an X
        return None if value is None else _check_type(key, value, optional[0])
    if expected is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"config key '{key}' must be true or false, got {value!r}")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config key '{key}' must be an integer, got {value!r}")
        return value
    if expected is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"config key '{key}' must be a finite number, got {value!r}")
        return float(value)
    if expected is str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"config key '{key}' must be a non-empty string, got {value!r}")
        return value
    if expected is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"config key '{key}' must be a list, got {value!r}")
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return value


def _build(cls: type, data: Any, prefix: str) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config key '{prefix.rstrip('.') or '<top>'}' must be a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"unknown config key '{prefix}{unknown[0]}'; allowed keys here: {', '.join(sorted(names))}"
        )
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        key = prefix + f.name
        if f.name in SECTIONS and cls is RunConfig:
            kwargs[f.name] = _build(SECTIONS[f.name], data[f.name], key + ".")
        else:
            kwargs[f.name] = _check_type(key, data[f.name], hints[f.name])
    return cls(**kwargs)


def _require(cond: bool, key: str, allowed: str, value: Any) -> None:
    if not cond:
        raise ConfigError(f"config key '{key}' = {value!r} is out of range; allowed: {allowed}")


def validate(cfg: RunConfig) -> RunConfig:
    """Range and consistency checks, a section at a time; raises ConfigError naming the key and the allowed
    values."""
    _require(5 <= cfg.board_size <= 19, "board_size", "an integer from 5 to 19", cfg.board_size)
    _require(0 <= cfg.komi <= 400, "komi", "a number from 0 to 400", cfg.komi)
    _require(cfg.features in FEATURE_SETS, "features", " or ".join(FEATURE_SETS), cfg.features)
    _require(1 <= cfg.generations <= 10000, "generations", "1..10000", cfg.generations)
    _require(0 <= cfg.seed < 2**63, "seed", "0 .. 2^63-1", cfg.seed)
    _check_model(cfg.model)
    _check_selfplay(cfg)
    _check_window(cfg.window)
    _check_train(cfg.train)
    _check_evaluate(cfg.evaluate, cfg.selfplay)
    return cfg


def _check_model(m: ModelSettings) -> None:
    _require(1 <= m.blocks <= 40, "model.blocks", "1..40", m.blocks)
    _require(1 <= m.filters <= 512, "model.filters", "1..512", m.filters)
    _require(1 <= m.fc_width <= 1024, "model.fc_width", "1..1024", m.fc_width)
    _require(m.backend in BACKENDS, "model.backend", " or ".join(BACKENDS), m.backend)
    _require(m.filters >= 4 or not m.global_pooling, "model.global_pooling", "false below 4 filters", True)
    _require(m.filters >= 2 or not m.value_pool, "model.value_pool", "false below 2 filters", True)


def _check_selfplay(cfg: RunConfig) -> None:
    s = cfg.selfplay
    _require(1 <= s.games <= 10**6, "selfplay.games", "1..1000000", s.games)
    _require(s.games_per_job >= 1, "selfplay.games_per_job", ">= 1", s.games_per_job)
    _require(1 <= s.parallel_readouts <= 256, "selfplay.parallel_readouts", "1..256", s.parallel_readouts)
    _require(
        s.readouts >= s.parallel_readouts,
        "selfplay.readouts",
        f"at least selfplay.parallel_readouts ({s.parallel_readouts})",
        s.readouts,
    )
    _check_schedules(cfg)
    # with a schedule, fast searches take min(fast_readouts, the generation's readouts)
    most = s.readouts if s.readouts_schedule is None else max(r for _, r in s.readouts_schedule)
    limit = "selfplay.readouts" if s.readouts_schedule is None else "the largest selfplay.readouts_schedule"
    _require(1 <= s.fast_readouts <= most, "selfplay.fast_readouts", f"1..{limit} ({most})", s.fast_readouts)
    _require(
        0 < s.full_search_fraction <= 1, "selfplay.full_search_fraction", "(0, 1]", s.full_search_fraction
    )
    _require(s.c_base > 0, "selfplay.c_base", "> 0", s.c_base)
    _require(s.c_init > 0, "selfplay.c_init", "> 0", s.c_init)
    _require(0 <= s.dirichlet_weight <= 1, "selfplay.dirichlet_weight", "[0, 1]", s.dirichlet_weight)
    _require(s.softpick_moves >= -1, "selfplay.softpick_moves", "-1 (auto) or >= 0", s.softpick_moves)
    _require(-1 <= s.resign_threshold <= 0, "selfplay.resign_threshold", "[-1, 0]", s.resign_threshold)
    _require(
        0 <= s.resign_disabled_fraction <= 1,
        "selfplay.resign_disabled_fraction",
        "[0, 1]",
        s.resign_disabled_fraction,
    )
    _require(
        s.init_unvisited in ("parent", "loss"), "selfplay.init_unvisited", "parent or loss", s.init_unvisited
    )
    _require(s.search in SEARCHES, "selfplay.search", " or ".join(SEARCHES), s.search)
    _require(s.gumbel_considered >= 1, "selfplay.gumbel_considered", ">= 1", s.gumbel_considered)
    _require(s.gumbel_c_visit > 0, "selfplay.gumbel_c_visit", "> 0", s.gumbel_c_visit)
    _require(s.gumbel_c_scale > 0, "selfplay.gumbel_c_scale", "> 0", s.gumbel_c_scale)
    _require(1 <= s.threads <= 1024, "selfplay.threads", "1..1024", s.threads)
    _require(s.model_lag in (0, 1), "selfplay.model_lag", "0 (games of generation g by model g) or 1 (by "
             "model g-1, while model g trains)", s.model_lag)  # fmt: skip
    _require(0 <= s.score_utility <= 1, "selfplay.score_utility", "[0, 1] (0: off)", s.score_utility)
    _require(0 < s.score_utility_scale <= 1000, "selfplay.score_utility_scale", "(0, 1000] points",
             s.score_utility_scale)  # fmt: skip
    _require(s.score_utility == 0 or cfg.model.aux_heads, "selfplay.score_utility", "0 when model.aux_heads "
             "is false (the utility reads the score head)", s.score_utility)  # fmt: skip


def _check_window(w: WindowSettings) -> None:
    _require(1 <= w.generations <= 100, "window.generations", "1..100", w.generations)
    _require(0 < w.sample_fraction <= 1, "window.sample_fraction", "(0, 1]", w.sample_fraction)
    _require(0 <= w.max_bad_fraction <= 1, "window.max_bad_fraction", "[0, 1]", w.max_bad_fraction)
    _require(1 <= w.read_threads <= 256, "window.read_threads", "1..256", w.read_threads)
    _require(0 <= w.value_root_mix <= 1, "window.value_root_mix", "[0, 1]", w.value_root_mix)
    _require(0 <= w.value_root_lambda < 1, "window.value_root_lambda", "[0, 1)", w.value_root_lambda)
    _require(0 <= (s := w.policy_surprise_weight) <= 1, "window.policy_surprise_weight", "[0, 1]", s)


def _check_train(t: TrainSettings) -> None:
    _require(1 <= t.ranks <= 4096, "train.ranks", "1..4096", t.ranks)
    _require(1 <= t.batch_per_rank <= 65536, "train.batch_per_rank", "1..65536", t.batch_per_rank)
    _require(0 <= t.momentum < 1, "train.momentum", "[0, 1)", t.momentum)
    _require(0 <= t.l2 < 1, "train.l2", "[0, 1)", t.l2)
    _require(0 <= t.value_weight <= 100, "train.value_weight", "[0, 100]", t.value_weight)
    _require(0 <= t.ownership_weight <= 100, "train.ownership_weight", "[0, 100]", t.ownership_weight)
    _require(0 <= t.score_weight <= 100, "train.score_weight", "[0, 100]", t.score_weight)
    _require(0 <= t.reply_weight <= 100, "train.reply_weight", "[0, 100]", t.reply_weight)
    _require(1 <= t.threads_per_rank <= 1024, "train.threads_per_rank", "1..1024", t.threads_per_rank)
    _require(1 <= t.prefetch_batches <= 4096, "train.prefetch_batches", "1..4096", t.prefetch_batches)
    _require(1 <= t.checkpoint_every, "train.checkpoint_every", ">= 1", t.checkpoint_every)
    _require(t.backend in BACKENDS, "train.backend", " or ".join(BACKENDS), t.backend)
    if t.replay_ratio is not None:
        _require(0 < t.replay_ratio <= 1000, "train.replay_ratio", "null (one pass over the window) or a "
                 "number in (0, 1000]", t.replay_ratio)  # fmt: skip
    if t.ema_decay is not None:
        _require(0 < t.ema_decay < 1, "train.ema_decay", "null (off) or a number in (0, 1)", t.ema_decay)
    _require(0 < t.timeout_s <= 86400, "train.timeout_s", "(0, 86400] seconds", t.timeout_s)


def _check_evaluate(e: EvaluateSettings, s: SelfplaySettings) -> None:
    _require(0 <= e.games <= 100000, "evaluate.games", "0..100000", e.games)
    _require(e.readouts >= 1, "evaluate.readouts", ">= 1", e.readouts)
    _require(1 <= e.parallel_readouts <= 256, "evaluate.parallel_readouts", "1..256", e.parallel_readouts)
    _require(e.softpick_moves >= 0, "evaluate.softpick_moves", ">= 0", e.softpick_moves)
    _require(1 <= e.every <= 100000, "evaluate.every", "1..100000", e.every)
    _require(e.quiet_last >= 0, "evaluate.quiet_last", ">= 0", e.quiet_last)
    _require(0 <= e.final_games <= 100000, "evaluate.final_games", "0..100000", e.final_games)
    _require(e.ladder_half_width > 0, "evaluate.ladder_half_width", "> 0", e.ladder_half_width)
    _require(e.ladder_half_width_mid > 0, "evaluate.ladder_half_width_mid", "> 0", e.ladder_half_width_mid)
    _require(0.01 <= e.share <= 0.5, "evaluate.share", "[0.01, 0.5] (of a core)", e.share)
    _require(e.ladder_max_games >= 1, "evaluate.ladder_max_games", ">= 1", e.ladder_max_games)
    _require(e.ladder_first_games >= 0, "evaluate.ladder_first_games", ">= 0", e.ladder_first_games)
    try:
        for i, opp in enumerate(e.opponents):
            PlayerSpec.parse_config(opp, f"evaluate.opponents[{i}]")
        for i, opp in enumerate(e.final_opponents):
            PlayerSpec.parse_config(opp, f"evaluate.final_opponents[{i}]")
        for i, opp in enumerate(e.final_equal_time):
            PlayerSpec.parse_config(opp, f"evaluate.final_equal_time[{i}]")
        PlayerSpec.parse_config(e.target, "evaluate.target")
    except PlayerSpecError as exc:
        raise ConfigError(str(exc)) from None


def _check_schedules(cfg: RunConfig) -> None:
    """The piecewise-constant schedules: `train.learning_rate`, and when set `selfplay.readouts_schedule`
    (readouts >= parallel_readouts; below `gumbel_considered` a Gumbel search considers only `readouts`
    moves, as with `readouts` itself) and `window.generations_schedule` (sizes as `window.generations`)."""
    s, w, t = cfg.selfplay, cfg.window, cfg.train
    _require(t.learning_rate_unit in LR_UNITS, "train.learning_rate_unit", " or ".join(LR_UNITS),
             t.learning_rate_unit)  # fmt: skip
    if t.learning_rate_unit == "run_fraction":
        _check_fraction_schedule(t.learning_rate, "train.learning_rate")
    else:
        _check_schedule(t.learning_rate, "train.learning_rate", "step", "learning rate",
                        lambda lr: 0 < lr < 10, "in (0, 10)", real=True)  # fmt: skip
    if s.readouts_schedule is not None:
        _check_schedule(s.readouts_schedule, "selfplay.readouts_schedule", "generation", "readouts",
                        lambda r: r >= s.parallel_readouts,
                        f"an integer >= selfplay.parallel_readouts ({s.parallel_readouts})")  # fmt: skip
    if w.generations_schedule is not None:
        _check_schedule(w.generations_schedule, "window.generations_schedule", "generation", "window size",
                        lambda n: 1 <= n <= 100, "an integer in 1..100")  # fmt: skip


def _check_schedule(
    schedule: tuple,
    key: str,
    x: str,
    y: str,
    ok: typing.Callable[[Any], bool],
    allowed: str,
    real: bool = False,
) -> None:
    """A piecewise-constant schedule: [x, y] pairs, x integers rising from 0, each y `ok` (an integer, or
    with `real` any number); the error names the key, the pair and what is allowed."""
    pair = f"[{x}, {y}]"
    if not schedule:
        raise ConfigError(f"config key '{key}' must list at least one {pair} pair")
    last = -1
    for i, item in enumerate(schedule):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ConfigError(f"config key '{key}[{i}]' must be a {pair} pair, got {item!r}")
        at, value = item
        if isinstance(at, bool) or not isinstance(at, int) or at <= last:
            raise ConfigError(f"config key '{key}[{i}]' {x} must be an integer above {last}, got {at!r}")
        number = (int, float) if real else int
        if isinstance(value, bool) or not isinstance(value, number) or not ok(value):
            raise ConfigError(f"config key '{key}[{i}]' {y} must be {allowed}, got {value!r}")
        last = at
    if schedule[0][0] != 0:
        raise ConfigError(f"config key '{key}[0]' must start at {x} 0, got {x} {schedule[0][0]}")


def _check_fraction_schedule(schedule: tuple, key: str) -> None:
    """A learning-rate schedule by the run's progress (`train.learning_rate_unit: run_fraction`): [run
    fraction, learning rate] pairs, the fractions numbers from 0, strictly rising and below 1, each rate in
    (0, 10); the error names the key, the pair, and what to write instead."""
    how = ("; with train.learning_rate_unit run_fraction a boundary is the fraction (generation - 1) / "
           "generations of the run, e.g. [[0, 0.03], [0.5, 0.01], [0.8, 0.003]]; for boundaries in global "
           "steps set train.learning_rate_unit: step")  # fmt: skip
    pair = "[run fraction, learning rate] pair"
    if not schedule:
        raise ConfigError(f"config key '{key}' must list at least one {pair}{how}")
    last = None
    for i, item in enumerate(schedule):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ConfigError(f"config key '{key}[{i}]' must be a {pair}, got {item!r}")
        at, lr = item
        number = not isinstance(at, bool) and isinstance(at, (int, float))
        if not (number and (at == 0 if last is None else last < at < 1)):
            allowed = "0 (the run's start)" if last is None else f"a number above {last!r} and below 1"
            raise ConfigError(f"config key '{key}[{i}]' run fraction must be {allowed}, got {at!r}{how}")
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < 10:
            raise ConfigError(f"config key '{key}[{i}]' learning rate must be in (0, 10), got {lr!r}")
        last = at


def schedule_at(schedule: tuple, x: int) -> Any:
    """The value of a piecewise-constant schedule of (x, value) pairs at x: that of the last pair whose x is
    at most x (the first pair's before it)."""
    value = schedule[0][1]
    for at, v in schedule:
        if x >= at:
            value = v
    return value


def learning_rate_at(schedule: tuple, global_step: int) -> float:
    """Piecewise-constant learning rate at a global step (counted across generations, as MLPerf does)."""
    return float(schedule_at(schedule, global_step))


def run_fraction(cfg: RunConfig, generation: int) -> float:
    """How far into the run the training of generation `generation` is: (generation - 1) / `generations`,
    0 for generation 1, the same for every step of the generation. A function of the config and the
    generation alone (never of time or of steps), so a rerun trains with the same rates. The run's length is
    `generations` as the training job reads it: a run extended by a larger `generations` keeps the models of
    the generations it had (Snakemake does not rerun them; they trained by the old length), and its later
    generations train by the new length, so an extension can put the rate back up a step."""
    return (generation - 1) / cfg.generations


def learning_rate_for(cfg: RunConfig, generation: int, global_step: int) -> float:
    """The learning rate of a training step of generation `generation` at global step `global_step`:
    `train.learning_rate` at the global step (`train.learning_rate_unit: step`), or at the generation's
    `run_fraction` (`run_fraction`: one rate for the whole generation; a fraction of 1 or more, a
    generation past `generations`, takes the last rate)."""
    t = cfg.train
    x = global_step if t.learning_rate_unit == "step" else run_fraction(cfg, generation)
    return float(schedule_at(t.learning_rate, x))


def readouts_at(cfg: RunConfig, generation: int) -> int:
    """The readouts of generation `generation`'s full self-play searches: `selfplay.readouts_schedule` at the
    generation (progressive simulations, as MiniZero's), or `selfplay.readouts` without a schedule."""
    s = cfg.selfplay
    return s.readouts if s.readouts_schedule is None else int(schedule_at(s.readouts_schedule, generation))


def selfplay_config(cfg: RunConfig, generation: int) -> RunConfig:
    """The run config as generation `generation`'s self-play plays it: `selfplay.readouts` the generation's
    (`readouts_at`), `fast_readouts` at most that, the schedule resolved (null). Without a schedule, `cfg`
    itself; applying it twice changes nothing."""
    s = cfg.selfplay
    if s.readouts_schedule is None:
        return cfg
    readouts = readouts_at(cfg, generation)
    resolved = dataclasses.replace(
        s, readouts=readouts, fast_readouts=min(s.fast_readouts, readouts), readouts_schedule=None
    )
    return dataclasses.replace(cfg, selfplay=resolved)


def search_settings(cfg: RunConfig, generation: int | None = None) -> SearchSettings:
    """Self-play's search: the `selfplay` section as generation `generation` plays it (`selfplay_config`: with
    `selfplay.readouts_schedule`, the generation's readouts), softpick moves and the Dirichlet alpha resolved
    for the board size. ValueError when a schedule is set and no generation is given."""
    if generation is not None:
        cfg = selfplay_config(cfg, generation)
    if cfg.selfplay.readouts_schedule is not None:
        raise ValueError("selfplay.readouts_schedule is set: give the generation whose self-play this is")
    return _search_of(cfg)


def play_settings(cfg: RunConfig, readouts: int) -> SearchSettings:
    """A model player's search under the run config: self-play's search (its readouts schedule aside) by
    `readouts` readouts a move, every move a full search, no root noise, no softpick
    (`SearchSettings.for_play`), `evaluate.parallel_readouts` leaves a network batch; it resigns at
    `selfplay.resign_threshold`."""
    search = dataclasses.replace(
        _search_of(cfg), softpick_moves=0, parallel_readouts=cfg.evaluate.parallel_readouts
    )
    return search.for_play(readouts)


def _search_of(cfg: RunConfig) -> SearchSettings:
    """Self-play's search: the `selfplay` keys SearchSettings shares, with the run's Dirichlet alpha and
    softpick moves (`RunConfig.dirichlet_alpha`, `RunConfig.softpick_moves`)."""
    names = {f.name for f in dataclasses.fields(SearchSettings)} & {
        f.name for f in dataclasses.fields(SelfplaySettings)
    }
    shared = {name: getattr(cfg.selfplay, name) for name in names}
    return SearchSettings(
        **{**shared, "dirichlet_alpha": cfg.dirichlet_alpha, "softpick_moves": cfg.softpick_moves}
    )


def window_size(cfg: RunConfig, generation: int) -> int:
    """W of generation `generation`'s window (the games of the last W models): `window.generations_schedule`
    at the generation being trained, or `window.generations` without a schedule."""
    w = cfg.window
    return (
        w.generations
        if w.generations_schedule is None
        else int(schedule_at(w.generations_schedule, generation))
    )


def unstated_keys(data: dict) -> list[str]:
    """The run config's keys (dotted, `selfplay.games`) that the mapping `data` does not state, in
    config.yaml's order: the values a config merged over config.yaml takes from it, and so the ones that
    change when config.yaml does."""
    out = []
    for f in dataclasses.fields(RunConfig):
        if f.name not in SECTIONS:
            out += [] if f.name in data else [f.name]
            continue
        section = data.get(f.name)
        stated = section if isinstance(section, dict) else {}
        out += [f"{f.name}.{g.name}" for g in dataclasses.fields(SECTIONS[f.name]) if g.name not in stated]
    return out


def from_dict(data: dict) -> RunConfig:
    """Build and validate a RunConfig from a plain mapping (for example Snakemake's `config`)."""
    return validate(_build(RunConfig, data, ""))


def load_config(source: str | Path | dict) -> RunConfig:
    """Load a YAML file (or take a mapping) and validate it; ConfigError names the key on failure."""
    if isinstance(source, dict):
        return from_dict(source)
    path = Path(source)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys, got {type(data).__name__}")
    try:
        return from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
