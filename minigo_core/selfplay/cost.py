"""What a run costs before it runs: `minigo cost --config C` (per generation and for the whole run). It plays
(a probe self-play job of the compiled engine), so it sits with self-play, not in `report`.

Measured here, on this CPU, in process CPU seconds (one core per self-play job and per training rank):
- self-play: a probe job of the config's net (random weights), board, features and search plays K games (the
  config's `games_per_job`, at most `MAX_PROBE_K`) for a few moves at a probe readout count; its CPU seconds
  per readout, scaled linearly to the config's readouts (the network's batched evaluation of one leaf per game
  dominates a readout; the tree's share grows slowly with the readouts), so a move costs
  `readouts x c` on a full search and `fast_readouts x c` on a fast one;
- evaluation: the same probe with one game (a match's model plays its games one after another);
- training: one rank's step at `train.batch_per_rank` (`nn.steptime`), backend as configured;
- bytes: the probe's game files written in the current format (per recorded position, and per file), its
  positions as training examples in a shard (per example), and the model file.

Assumed (`--moves-per-game`): the moves of a game, 0.75 N^2 by default (61 on 9x9, 271 on 19x19; a game is
capped at 2 N^2). Self-play at the run's start is longer (untrained nets play to the cap) and shorter once
resignation is on. GNU Go's own time in the evaluations is not counted, nor Snakemake's and Slurm's start-up.
Files: a generation creates its game files, one record and one log per self-play job, the model, the
games-complete marker, the window's shards and manifest, the training metrics, the evaluations' results files
and one log per generation-level job; with `storage.pack_old_generations` generations that left the window
keep one pack instead of their game files, records and self-play logs.
With `selfplay.readouts_schedule` each generation's self-play costs its own readouts, and with
`window.generations_schedule` each generation trains on its own window and is packed after its last window.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import textwrap
import time
from dataclasses import dataclass

import numpy as np

from minigo_core.base.config import RunConfig, readouts_at, search_settings, selfplay_config, window_size
from minigo_core.base.machine import cpu_model
from minigo_core.data import schedule, shards
from minigo_core.data.gamefile import GameRecord, write_game
from minigo_core.nn import steptime
from minigo_core.nn.model import ModelConfig, random_model, save_model
from minigo_core.search import engine
from minigo_core.selfplay import selfplay_game

MAX_PROBE_K = 64
PROBE_READOUTS = 16
BYTES_PROBE_K = 4  # games of the probe at full readouts that measures the files' bytes
BYTES_PROBE_MOVES = 4
HOUR = 3600.0


@dataclass(frozen=True)
class Measured:
    """Per-unit costs measured on this CPU (seconds are CPU seconds of one core)."""

    cpu: str
    probe_k: int
    readout_s: float  # self-play, K games batched: seconds per readout
    eval_readout_s: float  # one game at a time: seconds per readout
    train_step_s: float  # one rank, one step of `batch_per_rank`
    game_bytes_per_position: float
    game_file_bytes: float  # a game file's fixed part (metadata, schema) without positions or moves
    shard_bytes_per_example: float
    model_bytes: int


def default_moves(board_size: int) -> int:
    return round(0.75 * board_size * board_size)


def _probe_config(cfg: RunConfig, readouts: int) -> RunConfig:
    s = dataclasses.replace(
        cfg.selfplay,
        readouts=readouts,
        fast_readouts=readouts,
        readouts_schedule=None,
        full_search_fraction=1.0,
        resign_threshold=-1.0,
    )
    return dataclasses.replace(cfg, selfplay=s)


def _play_probe(cfg: RunConfig, url: str, k: int, moves: int, out_dir: str) -> tuple[float, int, list]:
    """CPU seconds, readouts and the finished records of K probe games of `moves` moves."""
    net = engine.load_network(url)  # one DSP core, the widest ISA
    settings = engine.settings_for(search_settings(cfg), cfg.features, cfg.board_size)
    settings.stop_after_moves = moves  # the games stop there; their searches are the full games' own
    search_meta = selfplay_game.search_metadata(cfg, "compiled")
    model = {"url": url, "generation": 0, "sha256": None}
    start = time.process_time()
    games = engine.SelfplayGames(
        net, settings, board_size=cfg.board_size, komi=cfg.komi, seed=cfg.seed, generation=0, first_game=0,
        count=k,
    )  # fmt: skip
    records = [
        selfplay_game.compiled_game_record(g, cfg, cfg.features, model, search_meta, 0)
        for g in games.finished()
    ]
    cpu = time.process_time() - start
    return cpu, games.stats().readouts, records


def _rows(record: GameRecord, rows: int) -> GameRecord:
    def cut(a):
        return None if a is None else a[:rows]

    return dataclasses.replace(
        record, moves=[], move_index=cut(record.move_index), visits=cut(record.visits),
        value_target=cut(record.value_target), full_search=cut(record.full_search),
        root_value=cut(record.root_value), policy=cut(record.policy), surprise=cut(record.surprise),
    )  # fmt: skip


def _game_bytes(records: list[GameRecord], out_dir: str) -> tuple[float, float]:
    """(bytes per recorded position, bytes of a file's fixed part), from files of one row and of all rows."""
    one = full = positions = 0
    for i, record in enumerate(records):
        n = record.num_positions
        if n < 2:
            continue
        one += write_game(os.path.join(out_dir, f"one{i}.arrow"), _rows(record, 1))
        full += write_game(os.path.join(out_dir, f"all{i}.arrow"), _rows(record, n))
        positions += n - 1
    if not positions:
        raise RuntimeError("the probe games recorded fewer than two positions; raise --probe-moves")
    per_position = (full - one) / positions
    games = sum(1 for r in records if r.num_positions >= 2)
    return per_position, max(0.0, one / games - per_position)


def _shard_bytes(records: list[GameRecord], cfg: RunConfig, out_dir: str) -> float:
    """Bytes per training example of the probe positions written as a shard (early positions: later ones
    compress a little less)."""
    examples = [r.training_examples(cfg.features) for r in records if r.num_positions]
    planes = np.concatenate([e[0] for e in examples])
    pi = np.concatenate([e[1] for e in examples])
    z = np.concatenate([e[2] for e in examples])
    rows = len(z)
    url = os.path.join(out_dir, "probe.shard")
    writer = shards.ShardWriter(url, rows, planes.shape[1], cfg.board_size, cfg.features)
    writer.write(shards.encode(planes, pi, z, 0, np.arange(rows, dtype=np.int16)))
    return writer.close().bytes / rows


def most_readouts(cfg: RunConfig) -> int:
    """The largest readouts of a full self-play search in the run (`selfplay.readouts_schedule`'s largest)."""
    return max(readouts_at(cfg, g) for g in schedule.selfplay_generations(cfg))


def measure(cfg: RunConfig, probe_moves: int = 8, probe_readouts: int = PROBE_READOUTS) -> Measured:
    """The per-unit costs of `cfg` on this CPU (a few seconds to a minute: a probe job, a few steps)."""
    k = max(1, min(cfg.selfplay.games_per_job, MAX_PROBE_K))
    probe = _probe_config(cfg, max(2, min(probe_readouts, most_readouts(cfg))))
    with tempfile.TemporaryDirectory(prefix="minigo-cost-") as tmp:
        url = os.path.join(tmp, "probe.safetensors")
        model_cfg = ModelConfig.from_run(cfg)
        save_model(url, random_model(model_cfg, cfg.seed), {"generation": 0, "kind": "cost probe"})
        model_bytes = os.path.getsize(url)
        cpu, readouts, records = _play_probe(probe, url, k, probe_moves, tmp)
        eval_cpu, eval_readouts, _ = _play_probe(probe, url, 1, probe_moves, tmp)
        # the files' bytes at the config's own (largest) readouts (visit counts spread with the readouts)
        _, _, full = _play_probe(_probe_config(cfg, most_readouts(cfg)), url, min(k, BYTES_PROBE_K),
                                 BYTES_PROBE_MOVES, tmp)  # fmt: skip
        per_position, file_bytes = _game_bytes(full, tmp)
        shard_bytes = _shard_bytes(full, cfg, tmp)
    return Measured(
        cpu=cpu_model(),
        probe_k=k,
        readout_s=cpu / max(1, readouts),
        eval_readout_s=eval_cpu / max(1, eval_readouts),
        train_step_s=steptime.step_seconds(cfg, cfg.train.batch_per_rank, steps=2),
        game_bytes_per_position=per_position,
        game_file_bytes=file_bytes,
        shard_bytes_per_example=shard_bytes,
        model_bytes=model_bytes,
    )


# ------------------------------------------------------------------------------------------ the run's cost


@dataclass(frozen=True)
class GenerationCost:
    """Generation g's costs: its model's self-play (g < G), its training (g >= 1) and evaluations."""

    generation: int
    selfplay_core_s: float
    job_s: float  # one self-play job, one core
    jobs: int
    train_examples: float
    train_rank_s: dict[int, float]  # ranks -> wall seconds of the training job (one core per rank)
    eval_core_s: float  # model side of its matches (GNU Go's own time not counted)
    files_created: int
    files_packable: int  # game files, job records and self-play logs: what a pack replaces
    last_window: int  # the last generation whose window reads this one's games (packed once it is built)
    game_bytes: float
    shard_bytes: float


def rank_counts(ranks: int) -> list[int]:
    """1, 2, 4, ... below `ranks`, and `ranks`."""
    counts, r = {1, ranks}, 2
    while r < ranks:
        counts.add(r)
        r *= 2
    return sorted(counts)


def _match_core_s(cfg: RunConfig, m: Measured, g: int, moves: int) -> tuple[float, int]:
    """Model-side CPU seconds of generation g's matches (a model opponent's moves counted too), and their
    count. Early stop can only shorten them."""
    seconds = 0.0
    specs = schedule.evaluation_specs(cfg, g)
    for spec in specs:
        games = schedule.match_games(cfg, g, spec)
        sides = 2 if spec.kind in ("generation", "previous", "file") else 1
        seconds += games * moves / 2 * sides * cfg.evaluate.readouts * m.eval_readout_s
    return seconds, len(specs)


def generation_cost(cfg: RunConfig, m: Measured, moves: int, g: int) -> GenerationCost:
    s, games = selfplay_config(cfg, g).selfplay, cfg.selfplay.games  # the generation's readouts
    plays = g in schedule.selfplay_generations(cfg)
    move_s = (
        s.full_search_fraction * s.readouts + (1 - s.full_search_fraction) * s.fast_readouts
    ) * m.readout_s
    positions = s.full_search_fraction * moves
    jobs = schedule.selfplay_job_count(cfg) if plays else 0
    window = min(g, window_size(cfg, g))
    examples = cfg.window.sample_fraction * window * games * positions  # one pass over the window
    if cfg.train.replay_ratio is not None and g:  # replay_ratio x the newest window generation's positions
        examples = cfg.train.replay_ratio * games * positions
    ranks = rank_counts(cfg.train.ranks)
    train = {r: examples / (r * cfg.train.batch_per_rank) * m.train_step_s for r in ranks} if g else {}
    eval_s, matches = _match_core_s(cfg, m, g, moves) if g else (0.0, 0)
    ladder = 1 if g and schedule.ladder_file(cfg, g) else 0
    # model; games-complete marker (self-play); shards, manifest, metrics (training); results files; one log
    # per generation-level job (games-complete, window, train, each match, the ladder rating)
    others = 1 + (1 if plays else 0) + (cfg.train.ranks + 2 + 2 if g else 0) + 2 * (matches + ladder)
    others += 1 if plays else 0
    return GenerationCost(
        generation=g,
        selfplay_core_s=games * moves * move_s if plays else 0.0,
        job_s=s.games_per_job * moves * move_s,
        jobs=jobs,
        train_examples=examples,
        train_rank_s=train,
        eval_core_s=eval_s,
        files_created=(games if plays else 0) + 2 * jobs + others,
        files_packable=(games if plays else 0) + 2 * jobs,
        last_window=schedule.last_window(cfg, g),
        game_bytes=(games * (m.game_file_bytes + 2 * moves + positions * m.game_bytes_per_position)
                    if plays else 0.0),
        shard_bytes=examples * m.shard_bytes_per_example,
    )  # fmt: skip


@dataclass(frozen=True)
class RunCost:
    generations: list[GenerationCost]
    packed: bool
    model_bytes: int

    def total(self, name: str) -> float:
        return sum(getattr(c, name) for c in self.generations)

    def train_s(self, ranks: int) -> float:
        return sum(c.train_rank_s.get(ranks, 0.0) for c in self.generations)

    @property
    def files_kept(self) -> int:
        """Files at the end of the run: with packing, a generation h that the last window (h + W) no longer
        needs keeps its pack, the pack's marker and the pack job's log instead of its game files, job records
        and self-play logs (h's last window: `schedule.last_window`)."""
        kept = self.total("files_created")
        if self.packed:
            last = len(self.generations) - 1
            old = [c for c in self.generations if c.files_packable and c.last_window <= last]
            kept -= sum(c.files_packable - 3 for c in old)
        return int(kept)

    @property
    def bytes_kept(self) -> float:
        return self.total("game_bytes") + self.total("shard_bytes") + self.model_bytes * len(self.generations)


def packs(cfg: RunConfig) -> bool:
    """Whether the run packs generations that left the window (`storage.pack_old_generations`)."""
    return bool(cfg.storage.pack_old_generations)


def run_cost(cfg: RunConfig, m: Measured, moves: int, packed: bool) -> RunCost:
    gens = [generation_cost(cfg, m, moves, g) for g in range(cfg.generations + 1)]
    return RunCost(gens, packed, m.model_bytes)


def steady_generation(cfg: RunConfig) -> int:
    """A generation with a full window: W's (capped at the run's last); with `window.generations_schedule`,
    the first whose window is full at the size the schedule reaches within the run."""
    start = 0
    if cfg.window.generations_schedule is not None:
        start = max(at for at, _ in cfg.window.generations_schedule if at <= cfg.generations)
    return min(cfg.generations, max(start, window_size(cfg, start)))


def _h(seconds: float) -> str:
    if seconds >= 100 * HOUR:
        return f"{seconds / HOUR:,.0f} h"
    if seconds >= HOUR:
        return f"{seconds / HOUR:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} B"


def _wrapped(items: list[str]) -> list[str]:
    """Items on lines of at most 100 characters, indented, never broken inside an item."""
    text = ", ".join(item.replace(" ", "\u00a0") for item in items)
    lines = textwrap.wrap(text, width=100, initial_indent=" " * 14, subsequent_indent=" " * 14)
    return [line.replace("\u00a0", " ") for line in lines]


def to_json(cfg: RunConfig, m: Measured, moves: int, run: RunCost) -> dict:
    steady = run.generations[steady_generation(cfg)]
    ranks = rank_counts(cfg.train.ranks)
    return {
        "cpu": m.cpu,
        "measured": dataclasses.asdict(m),
        "assumed_moves_per_game": moves,
        "per_generation": {
            "generation": steady.generation,
            "selfplay_core_hours": steady.selfplay_core_s / HOUR,
            "selfplay_jobs": steady.jobs,
            "selfplay_job_hours": steady.job_s / HOUR,
            "train_examples": steady.train_examples,
            "train_hours_by_ranks": {str(r): steady.train_rank_s.get(r, 0.0) / HOUR for r in ranks},
            "files_created": steady.files_created,
            "game_bytes": steady.game_bytes,
            "shard_bytes": steady.shard_bytes,
        },
        "run": {
            "generations": cfg.generations,
            "selfplay_core_hours": run.total("selfplay_core_s") / HOUR,
            "train_hours_by_ranks": {str(r): run.train_s(r) / HOUR for r in ranks},
            "eval_core_hours": run.total("eval_core_s") / HOUR,
            "files_created": int(run.total("files_created")),
            "files_kept": run.files_kept,
            "packed": run.packed,
            "bytes_kept": run.bytes_kept,
        },
    }


def format_cost(cfg: RunConfig, source: str, m: Measured, moves: int, run: RunCost) -> str:
    """The cost as text: what was measured, what is assumed, a generation at steady state, the whole run."""
    n = cfg.board_size
    steady = run.generations[steady_generation(cfg)]
    ranks = rank_counts(cfg.train.ranks)
    s = selfplay_config(cfg, steady.generation).selfplay  # the steady generation's readouts
    lines = [
        f"Cost of a run of {source}: {n}x{n}, {cfg.model.blocks}x{cfg.model.filters} net ({cfg.features}), "
        f"{cfg.generations} generations of {s.games:,} games",
        f"measured on this CPU ({m.cpu}), CPU seconds of one core:",
        f"  self-play  {1e3 * m.readout_s:.3f} ms a readout ({m.probe_k} games of a job batched); a move "
        + ("" if cfg.selfplay.readouts_schedule is None else f"(generation {steady.generation}) ")
        + (
            f"{s.readouts} readouts"
            if s.full_search_fraction >= 1
            else f"{s.readouts} readouts on {s.full_search_fraction:.0%} of moves, {s.fast_readouts} on the "
            "rest"
        ),
        f"  evaluation {1e3 * m.eval_readout_s:.3f} ms a readout (one game at a time)",
        f"  training   {m.train_step_s:.3f} s a step of {cfg.train.batch_per_rank} examples on one rank "
        f"({cfg.train.backend})",
        f"  bytes      {m.game_bytes_per_position:.0f} a recorded position + {m.game_file_bytes:,.0f} a game "
        f"file; {m.shard_bytes_per_example:.0f} a training example; model {_bytes(m.model_bytes)}",
        f"assumed: {moves} moves a game (--moves-per-game; capped at {2 * n * n}); GNU Go's time, start-up "
        "and scheduling not counted",
        f"a generation with a full window (generation {steady.generation}):",
        f"  self-play   {_h(steady.selfplay_core_s)} core time: {steady.jobs:,} jobs of "
        f"{s.games_per_job} games, {_h(steady.job_s)} each on one core",
        f"  training    {steady.train_examples:,.0f} examples, one core a rank:",
        *_wrapped([f"{r} rank{'s' if r > 1 else ''} {_h(steady.train_rank_s[r])}" for r in ranks]),
        f"  files       {steady.files_created:,} created ({s.games:,} game files); games "
        f"{_bytes(steady.game_bytes)}, shards {_bytes(steady.shard_bytes)}",
        f"the whole run ({cfg.generations} generations):",
        f"  self-play   {_h(run.total('selfplay_core_s'))} core time; evaluations "
        f"{_h(run.total('eval_core_s'))} (model side)",
        "  training    one core a rank:",
        *_wrapped([f"{r} rank{'s' if r > 1 else ''} {_h(run.train_s(r))}" for r in ranks]),
        f"  files       {int(run.total('files_created')):,} created, {run.files_kept:,} kept "
        + (
            "(generations out of the window packed)"
            if run.packed
            else "(storage.pack_old_generations is off)"
        ),
        f"  disk        {_bytes(run.bytes_kept)} (games, shards, models)",
    ]
    return "\n".join(lines)
