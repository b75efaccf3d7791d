"""A self-play job: K games with one model, one game file per game, then the job's record.

The compiled engine (`minigo_core.search.engine`, the default on the dsp backend) plays the job's K games
concurrently, batching the network across them, and each game's file is written the moment the game ends.
The Python reference (`--engine python`, `minigo_core.search.mcts`) plays them one after another
(`minigo_core.selfplay.selfplay_game`). The start-up (imports, model load) is paid once per job.

After its last game the job writes its record (`minigo_core.data.jobrecord`: each game's file name, size and
SHA-256; the attempt's host and timings). A game whose file an earlier attempt of the same job already wrote
(same model, seed, settings and software) is kept, not replayed; the rest are played to the same bytes as in
an uninterrupted job. SIGTERM (a preemption, a time limit) stops the job at once, after the file write in
progress (`write_lock`; `base.preempt`): the files written stay, the retry keeps them.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from typing import Any

from minigo_core import __version__
from minigo_core.base.command import UsageError
from minigo_core.base.config import RunConfig, search_settings, selfplay_config
from minigo_core.base.runtime import Runtime
from minigo_core.data import gamefile, jobrecord, storage
from minigo_core.data.gamefile import GameRecord
from minigo_core.nn import inference, modelfile
from minigo_core.search import engine
from minigo_core.selfplay.selfplay_game import (
    GameTiming,
    compiled_game_record,
    play_selfplay_game,
    search_metadata,
)


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


def out_path(pattern: str, game: int, count: int) -> str:
    """The game file of game `game`: `pattern` with `{game}` filled in (a single game may name its file)."""
    if count == 1 and "{game" not in pattern:
        return pattern
    return pattern.format(game=game)


@dataclasses.dataclass
class SelfplayJob:
    """What the games of one `minigo selfplay` process share: the config, the model, the start-up, and
    what the job record will say of each game."""

    run_cfg: RunConfig
    model: str  # the model file
    generation: int
    first_game: int
    count: int
    out_pattern: str  # the game files, with `{game}` when count > 1
    net: Any
    sha256: str
    backend: str
    threads: int
    start: float  # epoch seconds: the process start (or, where unknown, the command's)
    engine: str = "python"  # compiled or python
    model_generation: int | None = None  # the model's generation (default: the games')
    files: dict[int, dict] = dataclasses.field(default_factory=dict)  # game -> its entry in the record
    timings: list[dict] = dataclasses.field(default_factory=list)  # per game played in this attempt
    kept: list[int] = dataclasses.field(default_factory=list)  # games kept from an earlier attempt
    # held while a file is written and noted: a SIGTERM waits for it (base.preempt.exit_on_sigterm)
    write_lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def out(self, game: int) -> str:
        return out_path(self.out_pattern, game, self.count)

    @property
    def model_meta(self) -> dict:
        """The game files' `model`: the file, its generation (g - selfplay.model_lag) and SHA-256."""
        g = self.generation if self.model_generation is None else self.model_generation
        return {"url": str(self.model), "generation": int(g), "sha256": self.sha256}

    @property
    def games(self) -> range:
        return range(self.first_game, self.first_game + self.count)


@dataclasses.dataclass(frozen=True)
class JobGames:
    """Which games a job plays: games `first_game` .. `first_game + count - 1` of generation `generation`,
    into the files `out` names (with `{game}` when count > 1), by the model of `model_generation` (default:
    the games' generation)."""

    generation: int
    first_game: int
    count: int
    out: str
    model_generation: int | None = None


def open_job(
    run_cfg: RunConfig,
    games: JobGames,
    *,
    config: str,
    model: str,
    backend: str,
    runtime: Runtime,
    engine_name: str,
    start: float,
) -> SelfplayJob:
    """Load the model for the engine (`compiled` or `python`), run as `runtime` says (its `threads` DSP cores
    or torch threads), and check it plays the config's board. The job
    keeps the run config as its generation's self-play reads it (`selfplay_config`: with
    `selfplay.readouts_schedule`, the generation's readouts), so the searches, the game files' `search` and
    the check of an earlier attempt's games all see the readouts actually used."""
    run_cfg = selfplay_config(run_cfg, games.generation)
    if engine_name == "compiled" and backend != "dsp":
        raise UsageError("--engine compiled runs the network in the dsp kernels: use --backend dsp")
    if engine_name == "compiled":
        net = engine.load_network(model, runtime)
    else:
        # the dsp backend reads the model without torch: no torch import in a self-play job
        net = inference.load_for_inference(model, backend=backend, runtime=runtime)
    sha256 = modelfile.digest(model)
    if net.cfg.board_size != run_cfg.board_size:
        n = net.cfg.board_size
        raise UsageError(
            f"model {model} is for {n}x{n}, the config {config} says board_size {run_cfg.board_size}"
        )
    return SelfplayJob(
        run_cfg,
        model,
        games.generation,
        games.first_game,
        games.count,
        games.out,
        net,
        sha256,
        backend,
        runtime.threads,
        start,
        engine_name,
        games.model_generation,
    )


def run_job(job: SelfplayJob, *, replay: bool = False, record: str | None = None) -> None:
    """Play the job's games (all of them with `replay`, else those no earlier attempt wrote), write each
    game's file, and the job record to `record` after the last game."""
    # a killed earlier attempt of this job may have left a game file or its record half-written under a
    # temporary name (the retry owns both names now)
    owned = [job.out(game) for game in job.games] + ([record] if record else [])
    stale = storage.remove_stale_temporaries(owned)
    if stale:
        print(
            f"removed {len(stale)} temporary files of a killed earlier attempt: {' '.join(stale)}", flush=True
        )
    if not replay:
        keep_earlier_games(job)
    t_engine, cpu_engine = time.time(), time.process_time()
    stats = None
    if job.engine == "compiled":
        stats = _compiled_games(job)
    else:
        for game in job.games:
            if game not in job.files:
                _play_and_write(job, game)
    if record:
        with job.write_lock:
            _write_record(job, record, t_engine, cpu_engine, stats)


def stopped_message(job: SelfplayJob) -> str:
    """What a job stopped by SIGTERM says: the game files it leaves (whole, its retry keeps them)."""
    written = sorted(job.files)
    done = f"none of its {job.count} game files is written yet"
    if written:
        done = f"{len(written)} of its {job.count} game files are written ({ranges(written)})"
    rest = job.count - len(written)
    return (
        f"stopped by SIGTERM (a preemption or a time limit): {done}; the job's retry (the profile's "
        f"`retries`, or a rerun of the same command) keeps them and plays the other {rest}"
    )


# ---- keeping an earlier attempt's games --------------------------------------------------------------------


def _expected_provenance(job: SelfplayJob, game: int) -> dict:
    run_cfg = job.run_cfg
    return jobrecord.provenance(
        {
            "format_version": gamefile.FORMAT_VERSION,
            "software_version": __version__,
            "board_size": run_cfg.board_size,
            "komi": run_cfg.komi,
            "features": job.net.cfg.feature_set,
            "seed": {"run_seed": run_cfg.seed, "generation": int(job.generation), "game": int(game)},
            "model": {"sha256": job.sha256, "generation": job.model_meta["generation"]},
            "search": search_metadata(run_cfg, job.engine),
        }
    )


def keep_earlier_games(job: SelfplayJob) -> None:
    """Keep the games whose files an earlier attempt of this job wrote (files are written atomically, so a
    file under its final name is whole). A file older than the model file (the model was written again since:
    a rerun) or from another model, seed, config or software is replayed."""
    stale = storage.remove_stale_temporaries([job.out(game) for game in job.games])
    if stale:
        print(
            f"removed {len(stale)} temporary files of a killed earlier attempt: {' '.join(stale)}", flush=True
        )
    model_mtime = storage.mtime(job.model)
    for game in job.games:
        out = job.out(game)
        mtime = storage.mtime(out)
        if mtime is None:
            continue
        if model_mtime is not None and mtime < model_mtime:
            print(f"replaying game {game}: {out} is older than the model {job.model}", flush=True)
            continue
        try:
            record, size, sha256 = gamefile.read_game_digest(out)
        except (gamefile.GameFileError, OSError) as exc:
            print(f"replaying game {game}: {exc}", flush=True)
            continue
        if jobrecord.provenance(record.metadata) != _expected_provenance(job, game):
            print(f"replaying game {game}: {out} is from another model, seed or settings", flush=True)
            continue
        job.files[game] = jobrecord.file_entry(out, game, size, sha256, record.metadata)
        job.kept.append(game)
    if job.kept:
        print(f"kept {len(job.kept)} game files of an earlier attempt: {ranges(job.kept)}", flush=True)


def ranges(values: list[int]) -> str:
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


# ---- playing and writing the games, and the record ---------------------------------------------------------


def _write_record(job: SelfplayJob, url: str, t_engine: float, cpu_engine: float, stats: Any) -> None:
    """The job record: what it wrote (deterministic), then `attempt` (this attempt's host and clocks)."""
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
    record = jobrecord.make_record(
        generation=job.generation,
        first_game=job.first_game,
        games=job.count,
        model_url=job.model,
        model_sha256=job.sha256,
        engine=job.engine,
        files=[job.files[g] for g in job.games],
        attempt=attempt,
    )
    jobrecord.write_record(url, record)


def _compiled_games(job: SelfplayJob) -> engine.EngineStats:
    """Play the job's games concurrently in the compiled engine; write each game's file when it ends."""
    run_cfg = job.run_cfg
    feature_set = job.net.cfg.feature_set
    games = engine.SelfplayGames(
        job.net,
        engine.settings_for(search_settings(run_cfg, job.generation), feature_set, run_cfg.board_size),
        board_size=run_cfg.board_size,
        komi=run_cfg.komi,
        seed=run_cfg.seed,
        generation=job.generation,
        first_game=job.first_game,
        count=job.count,
    )
    for game in job.kept:
        games.skip(game)
    search = search_metadata(run_cfg, "compiled")
    model = job.model_meta
    t_engine = time.time()
    for k, game in enumerate(games.finished()):
        out = job.out(game.index)
        record = compiled_game_record(game, run_cfg, feature_set, model, search, job.generation)
        with job.write_lock:
            size, sha256 = gamefile.write_game_digest(out, record)
            job.files[game.index] = jobrecord.file_entry(out, game.index, size, sha256, record.metadata)
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


def _play_and_write(job: SelfplayJob, game: int) -> None:
    """Play game `game` of the job with the reference search, write its file and say so on stdout."""
    out = job.out(game)
    timing = GameTiming()
    cpu_game_start = time.process_time()
    record = play_selfplay_game(
        job.net,
        job.run_cfg,
        job.generation,
        game,
        job.model,
        model_sha256=job.sha256,
        model_generation=job.model_meta["generation"],
        timing=timing,
    )
    cpu_game = time.process_time() - cpu_game_start
    with job.write_lock:
        size, sha256 = gamefile.write_game_digest(out, record)
        job.files[game] = jobrecord.file_entry(out, game, size, sha256, record.metadata)
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
