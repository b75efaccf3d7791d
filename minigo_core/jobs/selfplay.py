"""Self-play: one job plays K games with one model and writes one game file per game (`minigo selfplay`).

The compiled engine (`minigo_core.search.engine`, the default on the dsp backend) plays the job's K games
concurrently, batching the network across them, and each game's file is written the moment the game ends.
The Python reference (`--engine python`, `minigo_core.search.mcts`) plays them one after another. The rest
of this docstring describes the reference; the engine does the same with its own random stream per game
(search.h), so a game's file depends on (run seed, generation, game index, model, config, engine) only.

Every random choice (which moves get a full search, root noise, softpick, symmetries, whether resignation is
disabled) comes from one numpy Generator seeded by `SeedSequence([run seed, generation, game index])`, so the
same inputs give a byte-identical game file. Wall-clock timings go to the job's record (`--record`).

Playout-cap randomisation (MLPerf v0.7, KataGo): each move is a full search (`readouts`, root noise, recorded
as a training target) with probability `full_search_fraction`, else a fast search (`fast_readouts`, no noise,
played but not recorded). Resignation: the player to move resigns when the root value is below
`resign_threshold`, except in a `resign_disabled_fraction` of games; those games record the first move at
which a player would have resigned and whether that player went on to win (a false positive).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from minigo_core import __version__
from minigo_core.base.command import Command, UsageError
from minigo_core.base.config import RunConfig, SelfplaySettings
from minigo_core.data import gamefile, storage
from minigo_core.data.gamefile import GameRecord, result_string
from minigo_core.game import coords, go
from minigo_core.nn import inference, modelfile
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
    first_move_s: float = 0.0  # from play_game's start to the first move chosen
    search_s: float = 0.0
    network_s: float = 0.0
    features_s: float = 0.0
    readouts: int = 0
    moves: int = 0


def _evaluator(net: Any) -> Any:
    """What the search calls `predict` on: on the dsp backend, the fused inference engine, made once a game.

    The weights do not change during a game, so this skips `DualNet.predict`'s per-call check for changed
    weights (about 0.25 ms per batch, 15% of a 9x9 batch of 8). Any other evaluator is used as it is.
    """
    if getattr(net, "backend", None) == "dsp" and hasattr(net, "fused_inference"):
        if getattr(net, "training", False):
            net.eval()
        return net.fused_inference()
    return net


def play_game(
    net: Any,
    run_cfg: RunConfig,
    generation: int,
    game_index: int,
    model_url: str,
    *,
    model_sha256: str | None = None,
    timing: GameTiming | None = None,
    on_first_move: Any = None,
) -> GameRecord:
    """Play one self-play game with `net` and return its record (not yet written)."""

    clock = timing.clock if timing is not None else time.perf_counter
    t_start = clock()
    s = run_cfg.selfplay
    rng = game_rng(run_cfg.seed, generation, game_index)
    resign_enabled = bool(rng.random() >= s.resign_disabled_fraction)
    feature_set = getattr(getattr(net, "cfg", None), "feature_set", None) or run_cfg.features
    player = MCTSPlayer(_evaluator(net), s, run_cfg.board_size, run_cfg.komi, rng, feature_set=feature_set)
    player.times.clock = clock

    def first_move_chosen() -> None:
        if on_first_move is not None:
            on_first_move()
        if timing is not None:
            timing.first_move_s = clock() - t_start

    game = play_moves(player, run_cfg, rng, resign_enabled, first_move_chosen)
    model = {"url": str(model_url), "generation": int(generation), "sha256": model_sha256}
    seed = {"run_seed": run_cfg.seed, "generation": int(generation), "game": int(game_index)}
    search = search_metadata(run_cfg, "python", random_symmetry=player.random_symmetry)
    record = game_record(game, game_metadata(run_cfg, feature_set, model, seed, game, search))
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
    only the full searches are recorded as training targets.
    """
    s = run_cfg.selfplay
    n = run_cfg.board_size
    game = PlayedGame(go.Position(n, run_cfg.komi), [], [], 2 * n * n, resign_enabled)
    position, moves = game.position, game.moves
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
        if not moves:
            first_move_chosen()
        position = position.play_move(result.move)
        moves.append(result.move)
    game.position = position
    return game


def game_metadata(
    run_cfg: RunConfig, feature_set: str, model: dict, seed: dict, game: PlayedGame, search: dict
) -> dict:
    """The game file's metadata: format, provenance (`model`, `seed`), result, resignation and search settings
    (`search`, from `search_metadata`; `game_record` adds the numbers of moves and positions)."""
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
    metadata["result"]["string"] = result_string(metadata)
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
    `python`: the two draw their random numbers differently, so the same seed gives different games)."""
    n = run_cfg.board_size
    search = {
        **dataclasses.asdict(run_cfg.selfplay),
        "softpick_moves": run_cfg.softpick_moves,
        "dirichlet_alpha": run_cfg.dirichlet_alpha,
        "random_symmetry": random_symmetry,
        "max_moves": 2 * n * n,
        "engine": engine_name,
    }
    for key in ("games", "threads", "games_per_job"):
        search.pop(key, None)
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
    )
    record.metadata["num_moves"] = len(game.moves)
    record.metadata["num_positions"] = len(rows)
    return record


def process_start_time() -> float | None:
    """Wall-clock time (epoch seconds) at which this process started, from /proc (Linux); None elsewhere.

    The start is in clock ticks since boot (10 ms); it is placed on the wall clock through CLOCK_BOOTTIME, not
    /proc/stat's `btime`, which has whole-second resolution (an error of up to 1 s in a ~0.4 s start-up).
    """
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of the whole line: starttime in clock ticks since boot
        since_start = time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - since_start
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _out_path(pattern: str, game: int, count: int) -> str:
    if count == 1 and "{game" not in pattern:
        return pattern
    return pattern.format(game=game)


def cli_main(argv: list[str] | None = None) -> int:
    """`minigo selfplay --config C --model M --generation G --game I --out GAMEFILE`: one game, one file.

    With `--count K`, the job plays games I .. I+K-1 (one file each; `--out` holds `{game}`, for example
    `games/gen0003/game{game:05d}.arrow`) and pays the start-up (imports, model load) once. With `--record`,
    the job writes its record after its last game (`games/gen0003/job00002.json`: each game's file name,
    size and SHA-256; the attempt's host and timings). A game whose file an earlier attempt of the same job
    already wrote (same model, seed, settings and software) is kept, not replayed; the rest are played to
    the same bytes as in an uninterrupted job.
    """
    t_process = process_start_time()
    t_wall0 = time.time()
    start = t_process if t_process is not None else t_wall0
    cmd = Command("selfplay", cli_main.__doc__ or "", errors=(modelfile.ModelFileError,))
    parser = cmd.parser
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cmd.add_config(help="run config YAML")
    parser.add_argument("--model", required=True, help="model file (e.g. {root}/models/gen0003.safetensors)")
    parser.add_argument("--generation", type=int, required=True, help="generation of the model")
    parser.add_argument("--game", type=int, required=True, help="game index within the generation")
    parser.add_argument("--out", required=True, help="game file (e.g. {root}/games/gen0003/game00042.arrow)")
    parser.add_argument("--count", type=int, default=1, help="games to play, from --game on (default 1)")
    parser.add_argument("--backend", choices=("dsp", "torch"), default=None, help="default: model.backend")
    parser.add_argument(
        "--threads", type=int, default=None, help="DSP cores / torch threads (selfplay.threads)"
    )
    parser.add_argument(
        "--engine",
        choices=("compiled", "python"),
        default=None,
        help="compiled: the C++ engine, all games at once (default with the dsp backend); python: the "
        "reference search (mcts.py), one game after another (always with the torch backend)",
    )
    parser.add_argument(
        "--record",
        default=None,
        help="the job record to write after the last game (e.g. {root}/games/gen0003/job00002.json)",
    )
    parser.add_argument(
        "--replay", action="store_true", help="play every game, even those an earlier attempt wrote"
    )
    return cmd.run(argv, lambda args: _selfplay_job(cmd, args, start))


@dataclasses.dataclass
class _Job:
    """What the games of one `minigo selfplay` process share: the config, the model, the start-up, and
    what the job record will say of each game."""

    args: argparse.Namespace
    run_cfg: RunConfig
    net: Any
    sha256: str
    backend: str
    threads: int
    start: float  # epoch seconds: the process start (or, where unknown, cli_main's)
    engine: str = "python"  # compiled or python
    files: dict[int, dict] = dataclasses.field(default_factory=dict)  # game -> its entry in the record
    timings: list[dict] = dataclasses.field(default_factory=list)  # per game played in this attempt
    kept: list[int] = dataclasses.field(default_factory=list)  # games kept from an earlier attempt

    def out(self, game: int) -> str:
        return _out_path(self.args.out, game, self.args.count)

    @property
    def games(self) -> range:
        return range(self.args.game, self.args.game + self.args.count)


def _selfplay_job(cmd: Command, args: argparse.Namespace, start: float) -> None:
    if args.count < 1 or args.game < 0 or args.generation < 0:
        cmd.parser.error("--count must be >= 1 and --game, --generation >= 0")
    if args.count > 1 and "{game" not in args.out:
        cmd.parser.error(
            f"--count {args.count} needs an --out pattern with {{game}}, e.g. game{{game:05d}}.arrow"
        )
    run_cfg = cmd.config(args)
    backend = args.backend or run_cfg.model.backend
    threads = args.threads or run_cfg.selfplay.threads
    engine_name = args.engine or ("compiled" if backend == "dsp" else "python")
    if engine_name == "compiled" and backend != "dsp":
        raise UsageError("--engine compiled runs the network in the dsp kernels: use --backend dsp")
    if engine_name == "compiled":
        net = engine.load_network(args.model, threads=threads)
    else:
        # the dsp backend reads the model without torch: no torch import in a self-play job
        net = inference.load_for_inference(args.model, backend=backend, threads=threads)
    sha256 = modelfile.digest(args.model)
    if net.cfg.board_size != run_cfg.board_size:
        n = net.cfg.board_size
        raise UsageError(
            f"model {args.model} is for {n}x{n}, the config {args.config} says board_size "
            f"{run_cfg.board_size}"
        )
    job = _Job(args, run_cfg, net, sha256, backend, threads, start, engine_name)
    # a killed earlier attempt of this job may have left a game file half-written under a temporary name
    stale = storage.remove_stale_temporaries([job.out(game) for game in job.games])
    if stale:
        print(
            f"removed {len(stale)} temporary files of a killed earlier attempt: {' '.join(stale)}", flush=True
        )
    if not args.replay:
        _keep_earlier_games(job)
    t_engine, cpu_engine = time.time(), time.process_time()
    stats = None
    if engine_name == "compiled":
        stats = _compiled_job(job)
    else:
        for game in job.games:
            if game not in job.files:
                _play_and_write(job, game)
    if args.record:
        _write_record(job, t_engine, cpu_engine, stats)


# ---- the job record, and keeping an earlier attempt's games ------------------------------------------------
RECORD_FORMAT = "minigo-selfplay-job"
RECORD_VERSION = 1
# The metadata that makes a game file this job's game: the same file would be written again.
PROVENANCE_KEYS = ("format_version", "software_version", "board_size", "komi", "features", "seed")


def _provenance(metadata: dict) -> dict:
    model = metadata.get("model") or {}
    search = dict(metadata.get("search") or {})
    search.pop("random_symmetry", None)  # the reference's depends on the evaluator, not on the config
    return {
        **{k: metadata.get(k) for k in PROVENANCE_KEYS},
        "model": (model.get("sha256"), model.get("generation")),
        "search": search,
    }


def _expected_provenance(job: _Job, game: int) -> dict:
    run_cfg = job.run_cfg
    return _provenance(
        {
            "format_version": gamefile.FORMAT_VERSION,
            "software_version": __version__,
            "board_size": run_cfg.board_size,
            "komi": run_cfg.komi,
            "features": job.net.cfg.feature_set,
            "seed": {"run_seed": run_cfg.seed, "generation": int(job.args.generation), "game": int(game)},
            "model": {"sha256": job.sha256, "generation": int(job.args.generation)},
            "search": search_metadata(run_cfg, job.engine),
        }
    )


def _file_entry(out: str, game: int, size: int, sha256: str, metadata: dict) -> dict:
    return {
        "game": int(game),
        "file": out.rsplit("/", 1)[-1],
        "bytes": int(size),
        "sha256": sha256,
        "moves": int(metadata["num_moves"]),
        "positions": int(metadata["num_positions"]),
        "result": metadata["result"]["string"],
    }


def _keep_earlier_games(job: _Job) -> None:
    """Keep the games whose files an earlier attempt of this job wrote (files are written atomically, so a
    file under its final name is whole). A file older than the model file (the model was written again since:
    a rerun) or from another model, seed, config or software is replayed."""
    stale = storage.remove_stale_temporaries([job.out(game) for game in job.games])
    if stale:
        print(
            f"removed {len(stale)} temporary files of a killed earlier attempt: {' '.join(stale)}", flush=True
        )
    model_mtime = storage.mtime(job.args.model)
    for game in job.games:
        out = job.out(game)
        mtime = storage.mtime(out)
        if mtime is None:
            continue
        if model_mtime is not None and mtime < model_mtime:
            print(f"replaying game {game}: {out} is older than the model {job.args.model}", flush=True)
            continue
        try:
            record, size, sha256 = gamefile.read_game_digest(out)
        except (gamefile.GameFileError, OSError) as exc:
            print(f"replaying game {game}: {exc}", flush=True)
            continue
        if _provenance(record.metadata) != _expected_provenance(job, game):
            print(f"replaying game {game}: {out} is from another model, seed or settings", flush=True)
            continue
        job.files[game] = _file_entry(out, game, size, sha256, record.metadata)
        job.kept.append(game)
    if job.kept:
        print(f"kept {len(job.kept)} game files of an earlier attempt: {_ranges(job.kept)}", flush=True)


def _ranges(values: list[int]) -> str:
    """`0-3,7` for [0, 1, 2, 3, 7]."""
    parts, run = [], [values[0]]
    for v in values[1:]:
        if v == run[-1] + 1:
            run.append(v)
            continue
        parts.append(run)
        run = [v]
    parts.append(run)
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in parts)


def _write_record(job: _Job, t_engine: float, cpu_engine: float, stats: Any) -> None:
    """The job record: what it wrote (deterministic), then `attempt` (this attempt's host and clocks)."""
    args = job.args
    attempt = {
        "host": socket.gethostname(),
        "backend": job.backend,
        "threads": job.threads,
        "process_start_epoch": job.start,
        "startup_s": round(t_engine - job.start, 4),  # process start to the first game (imports, model)
        "startup_cpu_s": round(cpu_engine, 4),
        "games_wall_s": round(time.time() - t_engine, 4),
        "games_cpu_s": round(time.process_time() - cpu_engine, 4),
        "kept_from_earlier_attempt": job.kept,
        "games": sorted(job.timings, key=lambda t: t["game"]),
    }
    if stats is not None:
        attempt["engine"] = {
            "search_s": round(stats.total_s, 4),
            "network_s": round(stats.network_s, 4),
            "features_s": round(stats.features_s, 4),
            "batches": stats.batches,
            "mean_batch": round(stats.mean_batch, 2),
        }
    record = {
        "format": RECORD_FORMAT,
        "format_version": RECORD_VERSION,
        "generation": int(args.generation),
        "first_game": int(args.game),
        "games": int(args.count),
        "model": {"url": str(args.model), "sha256": job.sha256},
        "engine": job.engine,
        "files": [job.files[g] for g in job.games],
        "attempt": attempt,
    }
    storage.write_text(args.record, json.dumps(record, indent=1) + "\n")


def read_record(url: str) -> dict:
    """A job record (`games/genGGGG/jobJJJJJ.json`); ValueError naming the file if it is not one."""
    try:
        record = json.loads(storage.read_bytes(url))
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"self-play job record {url} is unreadable ({exc}); delete it to rerun its job"
        ) from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"{url} is not a self-play job record (format {RECORD_FORMAT!r})")
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
    )
    seed = {"run_seed": run_cfg.seed, "generation": int(generation), "game": int(game.index)}
    return game_record(played, game_metadata(run_cfg, feature_set, model, seed, played, search))


def _compiled_job(job: _Job) -> engine.EngineStats:
    """Play the job's games concurrently in the compiled engine; write each game's file when it ends."""
    args, run_cfg = job.args, job.run_cfg
    feature_set = job.net.cfg.feature_set
    games = engine.SelfplayGames(
        job.net,
        engine.settings_for(run_cfg, feature_set),
        board_size=run_cfg.board_size,
        komi=run_cfg.komi,
        seed=run_cfg.seed,
        generation=args.generation,
        first_game=args.game,
        count=args.count,
    )
    for game in job.kept:
        games.skip(game)
    search = search_metadata(run_cfg, "compiled")
    model = {"url": str(args.model), "generation": int(args.generation), "sha256": job.sha256}
    t_engine = time.time()
    for k, game in enumerate(games.finished()):
        out = job.out(game.index)
        record = compiled_game_record(game, run_cfg, feature_set, model, search, args.generation)
        size, sha256 = gamefile.write_game_digest(out, record)
        job.files[game.index] = _file_entry(out, game.index, size, sha256, record.metadata)
        # the job's games are played together: from the engine's start to this game's end
        wall = time.time() - t_engine
        job.timings.append(
            {
                "game": game.index,
                "finished_order": k,
                "game_wall_s": round(wall, 4),
                "readouts": game.readouts,
            }
        )
        _say_written(out, record, size, f"{wall:.1f}s into the job")
    return games.stats()


def _say_written(out: str, record: GameRecord, size: int, when: str) -> None:
    m = record.metadata
    print(
        f"wrote {out}: {m['num_moves']} moves, {m['num_positions']} positions recorded, "
        f"result {m['result']['string']}, {size} bytes, {when}",
        flush=True,
    )


def _play_and_write(job: _Job, game: int) -> None:
    """Play game `game` of the job with the reference search, write its file and say so on stdout."""
    out = job.out(game)
    timing = GameTiming()
    cpu_game_start = time.process_time()
    record = play_game(
        job.net,
        job.run_cfg,
        job.args.generation,
        game,
        job.args.model,
        model_sha256=job.sha256,
        timing=timing,
    )
    cpu_game = time.process_time() - cpu_game_start
    size, sha256 = gamefile.write_game_digest(out, record)
    job.files[game] = _file_entry(out, game, size, sha256, record.metadata)
    job.timings.append(
        {
            "game": game,
            "first_move_s": round(timing.first_move_s, 4),  # the game's start to its first move
            "game_wall_s": round(timing.wall_s, 4),
            "game_cpu_s": round(cpu_game, 4),
            "search_s": round(timing.search_s, 4),
            "network_s": round(timing.network_s, 4),
            "features_s": round(timing.features_s, 4),
            "readouts": timing.readouts,
        }
    )
    _say_written(out, record, size, f"{timing.wall_s:.1f}s")


if __name__ == "__main__":
    sys.exit(cli_main())
