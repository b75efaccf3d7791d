"""One self-play game: its random stream, its moves, its record (the game file's rows and metadata).

The Python reference (`minigo_core.search.mcts`) plays a game here move by move (`play_selfplay_game`);
the compiled engine (`minigo_core.search.engine`) plays whole games and `compiled_game_record` turns each
into the same record. The rest of this docstring describes the reference; the engine does the same with its
own random stream per game (search.h), so a game's file depends on (run seed, generation, game index, model,
config, engine) only.

Every random choice (which moves get a full search, root noise, softpick, symmetries, whether resignation is
disabled) comes from one numpy Generator seeded by `SeedSequence([run seed, generation, game index])`, so the
same inputs give a byte-identical game file. Wall-clock timings (`GameTiming`) are kept out of the file.

Playout-cap randomisation (MLPerf v0.7, KataGo): each move is a full search (`readouts`, root noise, recorded
as a training target) with probability `full_search_fraction`, else a fast search (`fast_readouts`, no noise,
played but not recorded). Resignation: the player to move resigns when the root value is below
`resign_threshold`, except in a `resign_disabled_fraction` of games; those games record the first move at
which a player would have resigned and whether that player went on to win (a false positive).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from minigo_core import __version__
from minigo_core.base.config import RunConfig, SelfplaySettings, search_settings, selfplay_config
from minigo_core.data import gamefile
from minigo_core.data.gamefile import GameRecord
from minigo_core.game import coords, go
from minigo_core.search import engine
from minigo_core.search.mcts import MCTSPlayer

COLOR_NAME = {1: "B", -1: "W"}


def game_seed_sequence(seed: int, generation: int, game_index: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([int(seed), int(generation), int(game_index)])


def game_rng(seed: int, generation: int, game_index: int) -> np.random.Generator:
    """The game's random number generator, from (run seed, generation, game index)."""
    return np.random.default_rng(game_seed_sequence(seed, generation, game_index))


@dataclasses.dataclass
class GameTiming:
    """Wall-clock facts about one game (kept out of the game file); `clock` may be time.process_time."""

    clock: Any = time.perf_counter
    wall_s: float = 0.0
    first_move_s: float = 0.0  # from play_selfplay_game's start to the first move chosen
    search_s: float = 0.0
    network_s: float = 0.0
    features_s: float = 0.0
    readouts: int = 0
    moves: int = 0


def _evaluator(net: Any) -> Any:
    """What the search calls `predict` on: on the dsp backend, the fused inference network, made once a game.

    The weights do not change during a game, so this skips `DualNet.predict`'s per-call check for changed
    weights (a large share of a small 9x9 batch's time). Any other evaluator is used as it is.
    """
    if getattr(net, "backend", None) == "dsp" and hasattr(net, "fused_inference"):
        if getattr(net, "training", False):
            net.eval()
        return net.fused_inference()
    return net


def play_selfplay_game(
    net: Any,
    run_cfg: RunConfig,
    generation: int,
    game_index: int,
    model_url: str,
    *,
    model_sha256: str | None = None,
    model_generation: int | None = None,
    timing: GameTiming | None = None,
) -> GameRecord:
    """Play one self-play game with `net` and return its record (not yet written); with
    `selfplay.readouts_schedule`, at the generation's readouts (`config.selfplay_config`)."""

    clock = timing.clock if timing is not None else time.perf_counter
    t_start = clock()
    run_cfg = selfplay_config(run_cfg, generation)
    s = run_cfg.selfplay
    rng = game_rng(run_cfg.seed, generation, game_index)
    resign_enabled = bool(rng.random() >= s.resign_disabled_fraction)
    feature_set = getattr(getattr(net, "cfg", None), "feature_set", None) or run_cfg.features
    search = search_settings(run_cfg)
    player = MCTSPlayer(
        _evaluator(net), search, run_cfg.board_size, run_cfg.komi, rng, feature_set=feature_set
    )
    player.times.clock = clock

    def first_move_chosen() -> None:
        if timing is not None:
            timing.first_move_s = clock() - t_start

    game = play_moves(player, run_cfg, rng, resign_enabled, first_move_chosen)
    played_by = generation if model_generation is None else model_generation
    model = {"url": str(model_url), "generation": int(played_by), "sha256": model_sha256}
    seed = {"run_seed": run_cfg.seed, "generation": int(generation), "game": int(game_index)}
    record = game_record(
        game, game_metadata(run_cfg, feature_set, model, seed, game, search_metadata(run_cfg, "python"))
    )
    if timing is not None:
        timing.wall_s = clock() - t_start
        timing.search_s = player.times.total_s
        timing.network_s = player.times.network_s
        timing.features_s = player.times.features_s
        timing.readouts = player.times.readouts
        timing.moves = len(game.moves)
    return record


@dataclasses.dataclass
class PlayedGame:
    """What the move loop of a self-play game leaves: the final position, the moves, the recorded rows."""

    position: go.Position | None  # the final position (None from the compiled engine, which gives the score)
    moves: list[coords.Move]
    rows: list[tuple[int, np.ndarray, float, int]]  # full searches: (move index, visits, root value, to play)
    max_moves: int
    resign_enabled: bool
    resigned_by: int = 0  # the colour that resigned, 0 if none did
    would_resign: tuple[int, int] | None = None  # (move index, colour) in games with resignation disabled
    final_score: float | None = None  # Tromp-Taylor score of the final position (default: position.score())
    policy: np.ndarray | None = None  # Gumbel: the improved policy of each row, the training target
    surprise: np.ndarray | None = None  # each row's policy surprise (the compiled engine's; GameRecord's)

    def outcome(self) -> tuple[int, float | None]:
        """(winner: 1, -1 or 0; Tromp-Taylor score, or None after a resignation)."""
        if self.resigned_by:
            return -self.resigned_by, None
        score = float(self.final_score if self.final_score is not None else self.position.score())
        return (1 if score > 0 else -1 if score < 0 else 0), score


def play_moves(
    player: MCTSPlayer,
    run_cfg: RunConfig,
    rng: np.random.Generator,
    resign_enabled: bool,
    first_move_chosen: Callable[[], None],
) -> PlayedGame:
    """The moves of a game: search, resign or record, play; until two passes, a resignation or 2*N*N moves.

    Each move is a full search with probability `full_search_fraction` (one draw of `rng` before the search);
    only the full searches are recorded as training targets (Gumbel: with the root's improved policy).
    """
    s = player.settings
    n = run_cfg.board_size
    game = PlayedGame(go.Position(n, run_cfg.komi), [], [], 2 * n * n, resign_enabled)
    position, moves = game.position, game.moves
    policies: list[np.ndarray] = []
    while not position.is_game_over() and position.n < game.max_moves:
        full_search = bool(rng.random() < s.full_search_fraction)
        result = player.search(position, full_search=full_search)
        if result.root_value < s.resign_threshold:
            if resign_enabled:
                game.resigned_by = position.to_play
                break
            if game.would_resign is None:
                game.would_resign = (position.n, position.to_play)
        if full_search:
            game.rows.append((position.n, result.visits, result.root_value, position.to_play))
            if result.policy is not None:
                policies.append(result.policy)
        if not moves:
            first_move_chosen()
        position = position.play_move(result.move)
        moves.append(result.move)
    game.position = position
    if s.search == "gumbel":
        game.policy = np.stack(policies) if policies else np.zeros((0, n * n + 1), dtype=np.float32)
    return game


def game_metadata(
    run_cfg: RunConfig, feature_set: str, model: dict, seed: dict, game: PlayedGame, search: dict
) -> dict:
    """The game file's metadata: format, provenance (`model`, `seed`), result, resignation and search settings
    (`search`, from `search_metadata`; `game_record` adds the numbers of moves and positions)."""
    played = "puct" if game.policy is None else "gumbel"
    if search.get("search", played) != played:
        raise ValueError(
            f"a game played by {played} would be recorded as selfplay.search {search['search']!r}: the "
            "search settings must be those the game was played with"
        )
    winner, score = game.outcome()
    metadata = {
        "format": gamefile.FORMAT,
        "format_version": gamefile.FORMAT_VERSION,
        "software_version": __version__,
        "board_size": run_cfg.board_size,
        "komi": run_cfg.komi,
        "features": feature_set,
        "model": model,
        "seed": seed,
        "result": {"winner": winner, "score": score, "resigned": bool(game.resigned_by)},
        "resign": _resign_metadata(run_cfg.selfplay, game, winner),
        "search": search,
        "target": "visits" if game.policy is None else "policy",
    }
    metadata["result"]["string"] = gamefile.result_of(metadata)
    return metadata


def _resign_metadata(s: SelfplaySettings, game: PlayedGame, winner: int) -> dict:
    """The resignation settings; in a game with resignation disabled, the first move at which a player would
    have resigned and whether that player went on to win (a false positive)."""
    would_resign = game.would_resign
    return {
        "threshold": s.resign_threshold,
        "disabled_fraction": s.resign_disabled_fraction,
        "enabled": game.resign_enabled,
        "would_resign_move": None if would_resign is None else would_resign[0],
        "would_resign_color": None if would_resign is None else COLOR_NAME[would_resign[1]],
        "false_positive": None if would_resign is None else bool(winner == would_resign[1]),
    }


def search_metadata(run_cfg: RunConfig, engine_name: str, *, random_symmetry: bool = True) -> dict:
    """The search settings a game was played with: `selfplay` but the job's games, games per job and threads
    (they do not change a game), the rules derived from the board size, and the engine (`compiled` or
    `python`: the two draw their random numbers differently, so the same seed gives different games).
    `readouts_schedule` is left out: `run_cfg` is the generation's (`config.selfplay_config`), whose
    `readouts` and `fast_readouts` are those the game was played with; so is the score utility while it is
    off (`score_utility` 0), so such a game's file is the same bytes as before the key existed."""
    if run_cfg.selfplay.readouts_schedule is not None:
        raise ValueError(
            "selfplay.readouts_schedule is set: record the generation's settings (selfplay_config)"
        )
    n = run_cfg.board_size
    search = {
        **dataclasses.asdict(run_cfg.selfplay),
        "softpick_moves": run_cfg.softpick_moves,
        "dirichlet_alpha": run_cfg.dirichlet_alpha,
        "random_symmetry": random_symmetry,
        "max_moves": 2 * n * n,
        "engine": engine_name,
    }
    for key in ("games", "threads", "games_per_job", "readouts_schedule"):
        search.pop(key, None)
    if not run_cfg.selfplay.score_utility:
        search.pop("score_utility")
        search.pop("score_utility_scale")
    return search


def game_record(game: PlayedGame, metadata: dict) -> GameRecord:
    """The record of a played game: all its moves, and the targets of its fully searched positions."""
    rows = game.rows
    winner = metadata["result"]["winner"]
    n = metadata["board_size"]
    visits = np.stack([r[1] for r in rows]) if rows else np.zeros((0, n * n + 1), dtype=np.int64)
    record = GameRecord(
        metadata=metadata,
        moves=game.moves,
        move_index=np.array([r[0] for r in rows], dtype=np.int64),
        visits=visits.astype(np.int64),
        value_target=np.array([winner * r[3] for r in rows], dtype=np.float32),
        full_search=np.ones(len(rows), dtype=bool),
        root_value=np.array([r[2] for r in rows], dtype=np.float32),
        policy=game.policy,
        surprise=game.surprise,
    )
    record.metadata["num_moves"] = len(game.moves)
    record.metadata["num_positions"] = len(rows)
    return record


def compiled_game_record(
    game: engine.FinishedGame,
    run_cfg: RunConfig,
    feature_set: str,
    model: dict,
    search: dict,
    generation: int,
) -> GameRecord:
    """The record of a game the compiled engine played (same layout as a reference game's)."""
    n = run_cfg.board_size
    rows = [
        (int(game.move_index[r]), game.visits[r], float(game.root_value[r]), int(game.to_play[r]))
        for r in range(len(game.move_index))
    ]
    played = PlayedGame(
        position=None,
        moves=[coords.from_flat(int(m), n) for m in game.moves],
        rows=rows,
        max_moves=2 * n * n,
        resign_enabled=game.resign_enabled,
        resigned_by=game.resigned_by,
        would_resign=game.would_resign,
        final_score=game.score,
        policy=game.policy,
        surprise=game.surprise,
    )
    seed = {"run_seed": run_cfg.seed, "generation": int(generation), "game": int(game.index)}
    return game_record(played, game_metadata(run_cfg, feature_set, model, seed, played, search))
