"""The sample window of generation g (`minigo window`): games of the last W models -> N_train shards.

For generation g the window takes the games of generations max(0, g-W) .. g-1 (W: `window.generations`, or
`window.generations_schedule` at g), `window.sample_fraction` of each game's recorded positions (uniformly,
or by their policy surprise with `window.policy_surprise_weight`: `data/sampling/positions.py`): a
generation's part for window g (`data/parts.py`: sampled once, when its games were checked) where it has a
usable one, else every finished game file of it read and sampled here (seeded by run seed, g and the game
file; the manifest's `sources` says which, and why). It shuffles the examples uniformly across the whole
window and writes exactly `train.ranks` shards whose sizes differ by at most one row, plus `manifest.json`
(source games, positions per game, skipped files and why, rows, bytes and sha256 per shard, seed, timings).
Shards and manifest are written atomically; the manifest comes last, so a window with a manifest is complete.

Bounded memory (a two-pass bucketed shuffle): pass 1 sends each sampled example to one of B bucket files on
local scratch, chosen uniformly at random; pass 2 loads one bucket at a time, permutes it and appends it to
the shards in order. A random bucket then a random order inside it is a uniform permutation of the whole
window (the Rao-Sandelius shuffle), and memory is one bucket (about `BUCKET_ROWS` rows) whatever the window
size.

A sampled position's planes and auxiliary targets are rebuilt by replaying its game's moves on the compiled
board (`GameRecord.replayed_examples`, one C call a game; the same bytes as the Python rules); its
opponent-reply target is the game's next move (`reply_targets`; every shard has it, a model without the
reply head ignores it). Game files are read by `window.read_threads` parallel readers: processes by default
(reading and decoding a file is CPU work that Python threads cannot share), or threads (`--workers
threads`). A file that cannot be read
(truncated, empty, foreign, wrong board size or features, moves that do not replay) is skipped and listed
with the reason; if more than `window.max_bad_fraction` of the files are bad the job fails naming them.

`read_manifest` reads a built window back as training needs it (shards, rows, checksums, the manifest's
digest). The command's arguments are `minigo_core.jobs.window`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import shutil
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from minigo_core.base import config as config_mod
from minigo_core.base import native
from minigo_core.data import arrays, gamefile, layout, pack, parts, shards, storage
from minigo_core.data.parts import ordered_map
from minigo_core.data.sampling.positions import choose, reply_targets, surprise_weights, value_targets
from minigo_core.game import features

MANIFEST_FORMAT = "minigo-window"
MANIFEST_VERSION = 1
BUCKET_ROWS = 1 << 15  # target rows per bucket: what pass 2 holds in memory at once
MAX_BUCKETS = 512  # bucket files open at once (well under the usual 1024 file-descriptor limit)
FLUSH_ROWS = 1 << 14  # rows buffered over all buckets in pass 1 before they go to the bucket files
GAME_SUFFIX = layout.GAME_SUFFIX

log = logging.getLogger(__name__)


class WindowError(RuntimeError):
    """The window cannot be built (no games, too many bad files); the message names them and what to do."""


def window_generations(generation: int, size: int) -> list[int]:
    """Generations whose games form generation g's window: max(0, g-W) .. g-1 (W: `config.window_size`)."""
    if generation < 1:
        raise WindowError(f"generation {generation} has no window: windows start at generation 1")
    return list(range(max(0, generation - size), generation))


def game_files(root: str, generations: Iterable[int]) -> list[tuple[int, str]]:
    """(generation, url) of every finished game file (temporary names skipped), loose or in its generation's
    pack (`data/pack.py`: the same list either way), in a fixed order."""
    return [(gen, url) for gen in generations for url in pack.game_urls(root, gen)]


@dataclass
class GameSample:
    index: int
    url: str
    generation: int
    positions: int
    sampled: np.ndarray  # indices of the sampled positions among the recorded ones
    batch: pa.RecordBatch | None
    skipped: str | None = None


def sample_game(
    index: int, generation: int, url: str, cfg: config_mod.RunConfig, window_gen: int, num_planes: int
) -> GameSample:
    """Read one game file, sample its positions and encode them; a bad file comes back with `skipped` set."""

    empty = np.zeros(0, dtype=np.int64)

    def skip(reason: str) -> GameSample:
        return GameSample(index, url, generation, 0, empty, None, reason)

    try:
        record = gamefile.game_from_bytes(pack.read_member(url), url)  # loose, or from the pack
    except Exception as exc:  # GameFileError and anything a damaged file provokes: skip and report
        return skip(parts.reason(exc))
    if record.board_size != cfg.board_size:
        return skip(
            f"foreign game: {record.board_size}x{record.board_size}, this run plays "
            f"{cfg.board_size}x{cfg.board_size}"
        )
    # The recorded positions are those with a full search (what GameRecord.training_examples returns); only
    # the sampled ones get feature planes, which saves most of the feature work at a 30% sample.
    recorded = np.flatnonzero(record.full_search)
    n = int(recorded.size)
    key = zlib.crc32(os.path.basename(url).encode())
    rng = np.random.default_rng([cfg.seed, window_gen, generation, key])
    weights = surprise_weights(record, recorded, cfg.window.policy_surprise_weight)
    chosen = choose(n, cfg.window.sample_fraction, rng, weights)
    if chosen.size == 0:
        return GameSample(index, url, generation, n, chosen, None)
    rows = recorded[chosen]
    try:  # one replay on the compiled board: the planes and the auxiliary targets (ownership, score)
        planes, own, score = record.replayed_examples(rows, cfg.features)
    except native.NativeUnavailable:
        raise  # the engine library is not built: no file is to blame
    except Exception as exc:  # a move list that does not replay, an index past the end
        return skip(parts.reason(exc))
    pi = record.policy_targets(rows)
    z = value_targets(record, rows, cfg.window.value_root_mix, cfg.window.value_root_lambda)
    if planes.shape[1] != num_planes:
        return skip(f"examples with {planes.shape[1]} planes, this run uses {num_planes} ({cfg.features})")
    batch = shards.encode(planes, pi, z, index, chosen, own, score, reply_targets(record, rows))
    return GameSample(index, url, generation, n, chosen, batch)


class BucketSpill:
    """B bucket files on local scratch; rows are added with their bucket numbers and read back per bucket."""

    def __init__(self, directory: str, buckets: int, num_planes: int, board_size: int) -> None:
        self.paths = [os.path.join(directory, f"bucket{b:05d}.arrows") for b in range(buckets)]
        self.num_planes, self.board_size = num_planes, board_size
        self.schema = shards.schema(num_planes, board_size)
        self.rows = [0] * buckets
        self._pending: list[pa.RecordBatch] = []  # games' batches since the last flush, in order
        self._pending_buckets: list[np.ndarray] = []  # ... and the bucket of each of their rows
        self._pending_rows = 0
        self._writers: list[ipc.RecordBatchStreamWriter | None] = [None] * buckets
        self._options = ipc.IpcWriteOptions(compression=pa.Codec("lz4"))

    def add(self, batch: pa.RecordBatch, bucket_of_row: np.ndarray) -> None:
        """Buffer one game's rows; every `FLUSH_ROWS` rows they go to their buckets in one pass (a game's
        few rows split over the buckets one by one cost more than sampling the game)."""
        self._pending.append(batch)
        self._pending_buckets.append(np.asarray(bucket_of_row, dtype=np.int64))
        self._pending_rows += batch.num_rows
        if self._pending_rows >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        """The buffered rows to their bucket files, one record batch per bucket, each bucket's rows in the
        order they were added."""
        if not self._pending:
            return
        table = pa.Table.from_batches(self._pending, schema=self.schema).combine_chunks()
        bucket_of_row = np.concatenate(self._pending_buckets)
        order = np.argsort(bucket_of_row, kind="stable")
        counts = np.bincount(bucket_of_row, minlength=len(self.paths))
        starts = np.concatenate([[0], np.cumsum(counts)])
        for b in np.flatnonzero(counts):
            if self._writers[b] is None:
                self._writers[b] = ipc.new_stream(self.paths[b], self.schema, options=self._options)
            self._writers[b].write_table(table.take(arrays.from_numpy(order[starts[b] : starts[b + 1]])))
            self.rows[b] += int(counts[b])
        self._pending, self._pending_buckets, self._pending_rows = [], [], 0

    def close(self) -> None:
        self.flush()
        for w in self._writers:
            if w is not None:
                w.close()

    def read(self, bucket: int) -> pa.Table:
        if self._writers[bucket] is None:
            return self.schema.empty_table()
        with ipc.open_stream(self.paths[bucket]) as reader:
            table = reader.read_all()
        os.remove(self.paths[bucket])
        return table


def shard_sizes(rows: int, shards_n: int) -> list[int]:
    """Split `rows` into `shards_n` contiguous parts whose sizes differ by at most one."""
    return [(rows * (r + 1)) // shards_n - (rows * r) // shards_n for r in range(shards_n)]


def shuffled_buckets(spill: BucketSpill, rng: np.random.Generator) -> Iterator[pa.Table]:
    """Pass 2's rows: each bucket in turn, its rows in a random order (one bucket in memory at a time)."""
    for b in range(len(spill.paths)):
        table = spill.read(b)
        yield table.take(arrays.from_numpy(rng.permutation(table.num_rows)))


def write_shards(
    spill: BucketSpill,
    rng: np.random.Generator,
    out_dir: str,
    sizes: list[int],
    feature_set: str,
    extra: dict,
) -> list[dict]:
    """Pass 2: the shuffled buckets, in order, cut into shards of `sizes` rows; returns the shard entries."""
    num_planes, board_size = spill.num_planes, spill.board_size
    written: list[dict] = []
    writer: shards.ShardWriter | None = None
    rank = -1
    try:
        for table in shuffled_buckets(spill, rng):
            pos = 0
            while pos < table.num_rows:
                if writer is None or writer.remaining == 0:
                    if writer is not None:
                        written.append(_shard_entry(writer.close()))
                    rank += 1
                    url = storage.join(out_dir, layout.shard_name(rank))
                    writer = shards.ShardWriter(url, sizes[rank], num_planes, board_size, feature_set,
                                                {**extra, "shard": rank})  # fmt: skip
                take = min(writer.remaining, table.num_rows - pos)
                for batch in table.slice(pos, take).to_batches():
                    writer.write(batch)
                pos += take
            del table  # before the next bucket is read
        if writer is not None:
            written.append(_shard_entry(writer.close()))
            writer = None
    finally:
        if writer is not None:
            writer.abort()
    return written


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@dataclass
class WindowPlan:
    """What a window build will read and write, known before any game file is opened."""

    generation: int
    generations: list[int]  # the generations whose games form the window
    files: list[tuple[int, str]]  # (generation, url) of every game file, in reading order
    shards: int
    max_rows: int  # an upper bound on the sampled positions (games end by 2*N*N moves)
    buckets: int  # enough that no bucket outgrows `bucket_rows` even at `max_rows`


def plan_window(
    cfg: config_mod.RunConfig, generation: int, ranks: int | None = None, bucket_rows: int = BUCKET_ROWS
) -> WindowPlan:
    """The plan of generation `generation`'s window: its game files, shards (`ranks`, default train.ranks)
    and shuffle buckets."""
    gens = window_generations(generation, config_mod.window_size(cfg, generation))
    files = game_files(cfg.root, gens)
    n = cfg.board_size
    max_rows = len(files) * int(np.ceil(2 * n * n * cfg.window.sample_fraction) + 1)
    buckets = int(min(MAX_BUCKETS, max(1, -(-max_rows // bucket_rows))))
    n_shards = ranks if ranks is not None else cfg.train.ranks
    return WindowPlan(generation, gens, files, n_shards, max_rows, buckets)


def build_window(
    cfg: config_mod.RunConfig,
    generation: int,
    out_dir: str,
    *,
    ranks: int | None = None,
    tmp_dir: str | None = None,
    bucket_rows: int = BUCKET_ROWS,
    workers: str = "threads",
) -> dict:
    """Build generation `generation`'s window in `out_dir`; returns the manifest (also written there).

    `workers="processes"` (what `minigo window` uses) reads games in spawned processes: call it from a script
    guarded by `if __name__ == "__main__":`. `bucket_rows` bounds the rows held in memory by the shuffle.
    Progress goes to this module's logger.
    """
    t0 = time.perf_counter()
    plan = plan_window(cfg, generation, ranks, bucket_rows)
    if not plan.files:
        dirs = ", ".join(layout.games_dir(cfg.root, g) for g in plan.generations)
        raise WindowError(
            f"no game files for generation {generation}'s window in {dirs}; run self-play first"
        )
    log.info(
        f"generation {generation}: {len(plan.files)} game files from generations {plan.generations[0]}.."
        f"{plan.generations[-1]}, {plan.buckets} buckets, {plan.shards} shards"
    )
    manifest_url = layout.manifest_path(out_dir)
    fs, manifest_path = storage.fs_and_path(manifest_url)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(manifest_path)  # the window is incomplete until the new manifest is written
    # what a killed build of this window left: its shards' and manifest's temporaries, its scratch here
    shard_urls = [storage.join(out_dir, layout.shard_name(r)) for r in range(plan.shards)]
    storage.remove_stale_temporaries([manifest_url, *shard_urls])
    remove_dead_scratch(tmp_dir)

    num_planes = features.num_planes(cfg.features)
    t_read = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=tmp_dir) as scratch:
        spill = BucketSpill(scratch, plan.buckets, num_planes, cfg.board_size)
        games, skipped, sources = read_games(cfg, plan, spill, num_planes, workers)
        read_s = time.perf_counter() - t_read
        _check_bad_files(cfg, plan, skipped)
        total = sum(spill.rows)
        if total < plan.shards:
            raise WindowError(
                f"generation {generation}'s window has {total} sampled positions, fewer than the "
                f"{plan.shards} shards to write; play more games or raise window.sample_fraction"
            )
        t_write = time.perf_counter()
        shuffle_rng = np.random.default_rng([cfg.seed, generation, 2])
        extra = {"generation": generation, "seed": cfg.seed}
        sizes = shard_sizes(total, plan.shards)
        written = write_shards(spill, shuffle_rng, out_dir, sizes, cfg.features, extra)
        write_s = time.perf_counter() - t_write
    _remove_stale_shards(out_dir, plan.shards)

    timings = {"read_s": read_s, "shuffle_write_s": write_s, "total_s": time.perf_counter() - t0}
    manifest = window_manifest(cfg, plan, num_planes, written, games, skipped, sources, timings)
    storage.write_text(manifest_url, json.dumps(manifest, indent=1))
    log.info(
        f"wrote {plan.shards} shards, {total} examples ({manifest['bytes_per_example']:.0f} bytes each) from "
        f"{len(games)} games ({len(skipped)} skipped) in {manifest['timings']['total_s']:.1f} s"
    )
    return manifest


def read_games(
    cfg: config_mod.RunConfig, plan: WindowPlan, spill: BucketSpill, num_planes: int, workers: str
) -> tuple[list[dict], list[dict], list[dict]]:
    """Pass 1: each generation's rows to a random bucket of `spill`: its part for this window
    (`parts.open_part`), or else every game file of it sampled here (`window.read_threads` readers); returns
    the manifest's game, skipped-file and source entries."""
    bucket_rng = np.random.default_rng([cfg.seed, plan.generation, 1])
    games: list[dict] = []
    skipped: list[dict] = []
    sources: list[dict] = []
    threads = cfg.window.read_threads
    index_of = {url: i for i, (_, url) in enumerate(plan.files)}
    with parts.executor(workers, threads) as pool:
        for generation in plan.generations:
            part = parts.open_part(cfg, generation, plan.generation, index_of)
            if isinstance(part, parts.Part):
                sources.append({"generation": generation, "rows": "parts"})
                games += part.games
                skipped += part.skipped
                for batch in part.batches():
                    spill.add(batch, bucket_rng.integers(0, plan.buckets, size=batch.num_rows))
                continue
            say = log.warning if cfg.window.parts else log.info  # a warning only where parts were expected
            say(f"generation {generation}: its game files are sampled here: {part}")
            sources.append({"generation": generation, "rows": f"files: {part}"})
            files = [(i, gen, url) for i, (gen, url) in enumerate(plan.files) if gen == generation]
            items = ((i, gen, url, cfg, plan.generation, num_planes) for i, gen, url in files)
            for s in ordered_map(pool, sample_game, items, ahead=4 * threads):
                if s.skipped is not None:
                    skipped.append({"path": s.url, "reason": s.skipped})
                    log.warning(f"skipped {s.url}: {s.skipped}")
                    continue
                games.append({"index": s.index, "path": s.url, "generation": s.generation,
                              "positions": s.positions, "sampled": int(s.sampled.size)})  # fmt: skip
                if s.batch is not None:
                    spill.add(s.batch, bucket_rng.integers(0, plan.buckets, size=s.batch.num_rows))
    spill.close()
    return games, skipped, sources


def _check_bad_files(cfg: config_mod.RunConfig, plan: WindowPlan, skipped: list[dict]) -> None:
    """Bad files are skipped, but more than `window.max_bad_fraction` of them fail the build, named."""
    if len(skipped) > cfg.window.max_bad_fraction * len(plan.files):
        listed = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped[:20])
        more = f" and {len(skipped) - 20} more" if len(skipped) > 20 else ""
        raise WindowError(
            f"{len(skipped)} of {len(plan.files)} game files are bad, more than window.max_bad_fraction = "
            f"{cfg.window.max_bad_fraction}: {listed}{more}; remove or regenerate them, or raise the limit"
        )


def window_manifest(
    cfg: config_mod.RunConfig,
    plan: WindowPlan,
    num_planes: int,
    written: list[dict],
    games: list[dict],
    skipped: list[dict],
    sources: list[dict],
    timings: dict[str, float],
) -> dict:
    """The manifest of a built window (`timings` in seconds, rounded here to the millisecond)."""
    total = sum(s["rows"] for s in written)
    total_bytes = sum(s["bytes"] for s in written)
    return {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "generation": plan.generation,
        "window_generations": plan.generations,
        "seed": cfg.seed,
        "board_size": cfg.board_size,
        "feature_set": cfg.features,
        "num_planes": num_planes,
        "sample_fraction": cfg.window.sample_fraction,
        # the value targets' mix with the root value, where there is one (windows without it are unchanged)
        **({"value_root_mix": cfg.window.value_root_mix} if cfg.window.value_root_mix else {}),
        **({"value_root_lambda": lam} if (lam := cfg.window.value_root_lambda) else {}),
        **({"policy_surprise_weight": w} if (w := cfg.window.policy_surprise_weight) else {}),
        "rows": total,
        "bytes": total_bytes,
        "bytes_per_example": total_bytes / total,
        "shards": written,
        "games": games,
        "skipped": skipped,
        "sources": sources,  # per generation: "parts", or "files: why its parts were not used"
        "buckets": plan.buckets,
        "timings": {name: round(seconds, 3) for name, seconds in timings.items()},
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


# Manifest keys that describe how the build went, not what it produced: left out of the digest that a
# trained model records, so a rebuilt window with identical shards gives a byte-identical model.
VOLATILE_MANIFEST_KEYS = ("timings", "peak_rss_mb")


def manifest_digest(manifest: dict) -> str:
    """sha256 of a manifest's content (games, shards, checksums, seed), wall-clock fields excluded."""
    stable = {k: v for k, v in manifest.items() if k not in VOLATILE_MANIFEST_KEYS}
    return storage.sha256_bytes(json.dumps(stable, sort_keys=True).encode())


def _shard_entry(w: shards.WrittenShard) -> dict:
    return {"name": os.path.basename(w.url), "rows": w.rows, "bytes": w.bytes, "sha256": w.sha256}


SCRATCH_PREFIX = "minigo-window-"  # + the builder's pid: its spill directory under --tmp-dir (or /tmp)


def remove_dead_scratch(tmp_dir: str | None) -> list[str]:
    """Remove the spill directories of window builds that were killed on this host (their pid, in the name,
    is no longer a process); returns them. A node that was lost takes its own local disk's with it."""
    base = tmp_dir or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            pid = name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
            if not name.startswith(SCRATCH_PREFIX) or not pid.isdigit() or _alive(int(pid)):
                continue
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
            if not os.path.exists(os.path.join(base, name)):  # another user's may not be ours to remove
                removed.append(os.path.join(base, name))
    for path in removed:
        log.info(f"removed {path}: the scratch of a window build that was killed")
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _remove_stale_shards(out_dir: str, n_shards: int) -> None:
    """Shards left by an earlier build with more ranks would be mistaken for part of this window."""
    keep = {layout.shard_name(r) for r in range(n_shards)}
    for url in storage.list_files(out_dir, ".arrow"):
        name = os.path.basename(url)
        if name.startswith("shard") and name not in keep:
            fs, path = storage.fs_and_path(url)
            fs.rm(path)


@dataclass
class Window:
    """A built window as its manifest describes it: what training reads, without opening a shard."""

    dir: str
    manifest_sha256: str
    shard_urls: list[str]
    shard_rows: list[int]
    shard_sha256: list[str]
    board_size: int
    feature_set: str
    num_planes: int
    rows: int
    new_positions: int = 0  # recorded positions of the window's newest generation (train.replay_ratio)


def new_positions(manifest: dict) -> int:
    """The recorded positions of the newest generation a window's manifest lists (all of its games'
    positions, not only those sampled): the new data that `train.replay_ratio` is counted against."""
    newest = max(manifest.get("window_generations") or [0])
    return sum(int(g["positions"]) for g in manifest.get("games", []) if int(g["generation"]) == newest)


def read_manifest(window_dir: str) -> Window:
    """The window in `window_dir`, from its manifest; WindowError says what to do when there is none."""
    url = layout.manifest_path(window_dir)
    try:
        data = storage.read_bytes(url)
    except FileNotFoundError:
        raise WindowError(
            f"window manifest {url} does not exist; run `minigo window` for this generation"
        ) from None
    try:
        manifest = json.loads(data)
        if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
            raise ValueError(f"not a {MANIFEST_FORMAT} manifest")
        shard_list = manifest["shards"]
        return Window(
            dir=window_dir,
            manifest_sha256=manifest_digest(manifest),
            shard_urls=[storage.join(window_dir, s["name"]) for s in shard_list],
            shard_rows=[int(s["rows"]) for s in shard_list],
            shard_sha256=[str(s["sha256"]) for s in shard_list],
            board_size=int(manifest["board_size"]),
            feature_set=str(manifest["feature_set"]),
            num_planes=int(manifest["num_planes"]),
            rows=int(manifest["rows"]),
            new_positions=new_positions(manifest),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise WindowError(f"window manifest {url} is not valid ({exc!r}); rebuild the window") from None
