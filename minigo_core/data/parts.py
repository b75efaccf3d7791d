"""A generation's window parts: its games sampled once, for every window that will read them.

Window g reads the games of generations g-W .. g-1 (`data/window.py`): W windows would each decode a game.
Instead `minigo games-complete` of generation G, which reads each game file of G to check it against its
job's record, samples the good ones from those bytes for each window G+1+k that will read G (k < P, P the
largest later window size) and writes part k's rows to `window/parts/genGGGG/part{k}.arrow` (Arrow IPC file,
the shard schema), then `parts.json` (`write_parts`, `commit`). `minigo window` takes part g-G-1 of each of
its generations (`open_part`) whose parts.json has this run's sampling (`fingerprint`) and whose part has its
recorded SHA-256; any other generation it samples from the game files, naming why.

Per game (n recorded positions) one rng, seeded by (`PARTS_TAG`, run seed, G, the file's name), draws
c_k = `sample_count(n, window.sample_fraction)` per part; if they sum to at most n the parts take successive
slices of one permutation of the positions (disjoint: successive windows see different positions of a game),
else each part draws its own sample; with `window.policy_surprise_weight` each part draws its own weighted
sample (`data/sampling/positions.py`). One replay gives every part's rows. With `window.parts` false no part
is written (parts.json lists none) and every window samples the game files itself. A part's `game` column is
the game's number in G (`parts.json`'s `games[].game`; the window maps it to its manifest's index), `move` the
position's index among the game's recorded positions, as in a shard.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from minigo_core.base import config as config_mod
from minigo_core.base import native
from minigo_core.data import arrays, gamefile, games_complete, layout, shards, storage
from minigo_core.data.sampling.positions import draw, reply_targets, surprise_weights, value_targets
from minigo_core.game import features

FORMAT = "minigo-window-parts"
VERSION = 1
PARTS_TAG = 0x7061727473  # "parts", first of a game's seed words (the window's seeds start with the run seed)
PART_BATCH_ROWS = 4096  # rows per record batch of a part file (what a window holds of it at once)
COMPRESSION = "zstd"  # level 1: as fast as lz4 here (write and read), a third smaller

R = TypeVar("R")
log = logging.getLogger(__name__)


class PartsError(ValueError):
    """A part file disagrees with its parts.json although its SHA-256 matches; the message says what to do."""


def reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def ordered_map(pool: Executor, fn: Callable[..., R], items: Iterable[tuple], ahead: int) -> Iterator[R]:
    """`fn(*item)` for each item on the pool, results in order, at most `ahead` in flight (bounded memory)."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(pool.submit(fn, *item))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def executor(kind: str, n: int) -> Executor:
    """Readers: processes (decoding game files and sampling them is CPU work that threads cannot share) or
    threads (enough when the filesystem, not the CPU, is the bottleneck; always for one reader)."""
    if kind == "threads" or n == 1:
        return ThreadPoolExecutor(max_workers=n, thread_name_prefix="game-read")
    if kind == "processes":
        return ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))
    raise ValueError(f"workers must be 'processes' or 'threads', got {kind!r}")


def part_count(cfg: config_mod.RunConfig, generation: int) -> int:
    """P: the largest window size of the generations after `generation` (`config.window_size`), 0 after the
    last or with `window.parts` false; window generation+1+k reads part k."""
    if not cfg.window.parts:
        return 0
    return max(
        (config_mod.window_size(cfg, g) for g in range(generation + 1, cfg.generations + 1)), default=0
    )


def fingerprint(cfg: config_mod.RunConfig) -> dict:
    """What decides a part's rows: a window uses parts whose fingerprint is its run's."""
    surprise = cfg.window.policy_surprise_weight
    return {"seed": cfg.seed, "board_size": cfg.board_size, "features": cfg.features,
            "num_planes": features.num_planes(cfg.features), "sample_fraction": cfg.window.sample_fraction,
            "value_root_mix": cfg.window.value_root_mix, "shard_version": shards.VERSION,
            **({"policy_surprise_weight": surprise} if surprise else {}),
            **({"value_root_lambda": lam} if (lam := cfg.window.value_root_lambda) else {})}  # fmt: skip


# ------------------------------------------------------------------------------------------------ writing
@dataclass
class GameParts:
    """One game checked against its job's record and sampled for every part."""

    game: int
    url: str
    summary: dict | str  # the marker's summary, or `path: reason` for a bad file
    positions: int = 0
    chosen: list[np.ndarray] = field(default_factory=list)  # per part: indices among the recorded positions
    batch: pa.RecordBatch | None = None  # every part's rows, part by part
    skipped: str | None = None  # a good file that does not sample (foreign, does not decode or replay)
    seconds: tuple[float, float, float] = (0.0, 0.0, 0.0)  # check (read + SHA-256), decode, sample + encode


def sample_parts(
    game: int, url: str, sha256: str | None, cfg: config_mod.RunConfig, generation: int, parts: int
) -> GameParts:
    """Check one game file (`games_complete.check_game`), then sample its positions for every part from the
    same bytes and encode them; a good file that cannot be sampled comes back with `skipped` set."""
    t0 = time.perf_counter()
    summary, data = games_complete.check_game(url, sha256)
    out = GameParts(game, url, summary)
    t1 = time.perf_counter()
    if data is None or parts == 0:
        out.seconds = (t1 - t0, 0.0, 0.0)
        return out
    try:
        record = gamefile.game_from_bytes(data, url)
        if record.board_size != cfg.board_size:
            raise gamefile.GameFileError(f"a {record.board_size}x{record.board_size} game, this run plays "
                                         f"{cfg.board_size}x{cfg.board_size}")  # fmt: skip
        t2 = time.perf_counter()
        recorded = np.flatnonzero(record.full_search)
        rng = np.random.default_rng(
            [PARTS_TAG, cfg.seed, generation, zlib.crc32(os.path.basename(url).encode())]
        )
        weights = surprise_weights(record, recorded, cfg.window.policy_surprise_weight)
        out.positions, out.chosen = (
            int(recorded.size),
            draw(recorded.size, parts, cfg.window.sample_fraction, rng, weights),
        )
        every = np.concatenate(out.chosen).astype(np.int64)
        if every.size:
            rows = recorded[every]
            planes, own, score = record.replayed_examples(rows, cfg.features)  # one replay for every part
            if planes.shape[1] != (p := features.num_planes(cfg.features)):
                raise gamefile.GameFileError(f"{planes.shape[1]} planes, this run uses {p} ({cfg.features})")
            pi = record.policy_targets(rows)
            z = value_targets(record, rows, cfg.window.value_root_mix, cfg.window.value_root_lambda)
            out.batch = shards.encode(planes, pi, z, game, every, own, score, reply_targets(record, rows))
    except native.NativeUnavailable:
        raise  # the engine library is not built: no file is to blame
    except Exception as exc:  # a damaged file, a move list that does not replay: skipped and reported
        out.skipped, t2 = reason(exc), time.perf_counter()
    out.seconds = (t1 - t0, t2 - t1, time.perf_counter() - t2)
    return out


class PartFiles:
    """The part files of a generation, written as the games come (atomically: renamed into place on a clean
    exit, removed on an error), in record batches of `PART_BATCH_ROWS` rows."""

    def __init__(self, urls: list[str], schema: pa.Schema) -> None:
        self.urls, self.schema = urls, schema
        self.rows, self._flushed = [0] * len(urls), [0] * len(urls)
        self._pending: list[list[pa.RecordBatch]] = [[] for _ in urls]
        self._stack = contextlib.ExitStack()
        self._writers: list[ipc.RecordBatchFileWriter] = []

    def __enter__(self) -> PartFiles:
        options = ipc.IpcWriteOptions(compression=pa.Codec(COMPRESSION, compression_level=1))
        for url in self.urls:
            handle = self._stack.enter_context(storage.atomic_open(url, "wb"))
            self._writers.append(ipc.new_file(handle, self.schema, options=options))
        return self

    def add(self, batch: pa.RecordBatch, counts: list[int]) -> None:
        """One game's rows, part by part (`counts` rows of each)."""
        start = 0
        for k, count in enumerate(counts):
            if count:
                self._pending[k].append(batch.slice(start, count))
                self.rows[k] += count
            start += count
            if self.rows[k] - self._flushed[k] >= PART_BATCH_ROWS:
                self._flush(k)

    def _flush(self, k: int) -> None:
        if self._pending[k]:
            table = pa.Table.from_batches(self._pending[k], schema=self.schema).combine_chunks()
            self._writers[k].write_table(table)
            self._pending[k], self._flushed[k] = [], self.rows[k]

    def __exit__(self, *exc: object) -> bool | None:
        if exc[0] is None:
            for k, writer in enumerate(self._writers):
                self._flush(k)
                writer.close()
        return self._stack.__exit__(*exc)

    def entries(self) -> list[dict]:
        """The part files' entries in parts.json (after the exit: their final bytes)."""
        entries = []
        for url, rows in zip(self.urls, self.rows, strict=True):
            fs, path = storage.fs_and_path(url)
            entries.append({"name": os.path.basename(url), "rows": rows, "bytes": int(fs.size(path)),
                            "sha256": storage.sha256_file(url)})  # fmt: skip
        return entries


@dataclass
class PartsResult:
    """What `write_parts` read and wrote: the marker's summaries and bad files, and parts.json's content."""

    summaries: list[dict]
    bad: list[str]
    manifest: dict


def write_parts(
    cfg: config_mod.RunConfig, generation: int, threads: int = 1, workers: str = "threads"
) -> PartsResult:
    """Check every game file of `generation` against its job's record and write its parts (not parts.json:
    `commit`, once the caller accepts the bad files). A parts.json of an earlier attempt is removed first."""
    t0 = time.perf_counter()
    parts = part_count(cfg, generation)
    manifest_url = layout.parts_manifest_path(cfg.root, generation)
    urls = [layout.part_path(cfg.root, generation, k) for k in range(parts)]
    fs, path = storage.fs_and_path(manifest_url)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(path)  # the parts are unused until the new parts.json is written
    storage.remove_stale_temporaries([manifest_url, *urls])
    summaries, bad, games, skipped, seconds = [], [], [], [], np.zeros(3)
    expected = games_complete.expected_games(cfg, generation)
    items = ((g, url, sha, cfg, generation, parts) for g, url, sha in expected)
    schema = shards.schema(features.num_planes(cfg.features), cfg.board_size)
    with PartFiles(urls, schema) as files, executor(workers, threads) as pool:
        for s in ordered_map(pool, sample_parts, items, ahead=4 * max(1, threads)):
            seconds += s.seconds
            if isinstance(s.summary, str):
                bad.append(s.summary)
                skipped.append({"path": s.url, "reason": s.summary.removeprefix(f"{s.url}: ")})
                continue
            summaries.append(s.summary)
            if s.skipped is not None:
                skipped.append({"path": s.url, "reason": s.skipped})
                log.warning(f"not sampled: {s.url}: {s.skipped}")
                continue
            counts = [int(c.size) for c in s.chosen]
            games.append({"game": s.game, "path": s.url, "positions": s.positions, "sampled": counts})
            if s.batch is not None:
                files.add(s.batch, counts)
    total = time.perf_counter() - t0 - seconds[0] / max(1, threads)  # the check's share is the marker's
    timings = {"check_s": seconds[0], "decode_s": seconds[1], "sample_s": seconds[2], "total_s": total}
    manifest = {"format": FORMAT, "version": VERSION, "generation": generation, "parts": parts,
                "fingerprint": fingerprint(cfg), "files": files.entries(), "games": games, "skipped": skipped,
                "threads": threads, "timings": timings}  # fmt: skip
    return PartsResult(summaries, bad, manifest)


def commit(cfg: config_mod.RunConfig, generation: int, manifest: dict) -> None:
    """Write parts.json (after the part files): from now on the windows use the parts."""
    manifest["timings"] = {k: round(float(v), 3) for k, v in manifest["timings"].items()}
    text = json.dumps(manifest, indent=1) + "\n"
    storage.write_text(layout.parts_manifest_path(cfg.root, generation), text)


# ------------------------------------------------------------------------------------------------ reading
@dataclass
class Part:
    """Part k of a generation, as window generation+1+k reads it: its rows and its manifest entries."""

    url: str
    rows: int
    games: list[dict]  # the window manifest's entries of the generation's games (index, path, ...)
    skipped: list[dict]
    index: np.ndarray  # a game's number in its generation -> its index in the window manifest

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The part's rows, one record batch at a time, their `game` column the window's game index."""
        fs, path = storage.fs_and_path(self.url)
        rows, problem = 0, f"{self.url} does not hold the rows its parts.json lists; delete its folder"
        with fs.open(path, "rb") as handle:
            reader = ipc.open_file(handle)
            for i in range(reader.num_record_batches):
                batch = reader.get_batch(i)
                column = batch.schema.get_field_index("game")
                local = arrays.values(batch.column(column)).astype(np.int64)
                rows += batch.num_rows
                if (
                    rows > self.rows
                    or local.max(initial=0) >= self.index.size
                    or (self.index[local] < 0).any()
                ):
                    raise PartsError(problem)
                game = arrays.from_numpy(self.index[local].astype(np.int32))
                yield batch.set_column(column, batch.schema.field(column), game)
        if rows != self.rows:
            raise PartsError(problem)


def open_part(
    cfg: config_mod.RunConfig, generation: int, window: int, index_of: dict[str, int]
) -> Part | str:
    """Part window-generation-1 of `generation`'s parts, if this window may use it; else why not."""
    url = layout.parts_manifest_path(cfg.root, generation)
    if not cfg.window.parts:
        return "window.parts is false"
    try:
        manifest = json.loads(storage.read_bytes(url))
    except FileNotFoundError:
        return f"no {url}"
    except (OSError, ValueError) as exc:
        return f"{url} is unreadable ({reason(exc)})"
    try:
        return _part(cfg, generation, window, index_of, url, manifest)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return f"{url} is not a valid parts manifest ({reason(exc)})"


def _part(cfg: config_mod.RunConfig, generation: int, window: int, index_of: dict[str, int], url: str,
          manifest: dict) -> Part | str:  # fmt: skip
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        return f"{url} is not a {FORMAT} manifest of version {VERSION}"
    have, mine = manifest["fingerprint"], fingerprint(cfg)  # a key either side lacks: its value is None
    keys = [*mine, *(k for k in have if k not in mine)]
    changed = [f"{k} {have.get(k)!r}, this run {mine.get(k)!r}" for k in keys if have.get(k) != mine.get(k)]
    if changed:
        return f"{url} was made for another config ({'; '.join(changed)})"
    k = window - generation - 1
    if not 0 <= k < len(manifest["files"]):
        return f"{url} has {len(manifest['files'])} parts, none for window {window} (part {k})"
    entry, games = manifest["files"][k], manifest["games"]
    part_url = storage.join(layout.parts_dir(cfg.root, generation), entry["name"])
    gone = [g["path"] for g in games if g["path"] not in index_of]
    if gone:
        return f"{len(gone)} of the games {url} lists are not among the window's files ({gone[0]}, ...)"
    if sum(int(g["sampled"][k]) for g in games) != int(entry["rows"]):
        return f"{url}: part {k}'s games do not add up to its {entry['rows']} rows"
    try:
        if storage.sha256_file(part_url) != entry["sha256"]:
            return f"{part_url} is damaged: its SHA-256 is not the one {url} records"
    except FileNotFoundError:
        return f"no {part_url}"
    index = np.full(max((int(g["game"]) for g in games), default=0) + 1, -1, dtype=np.int64)
    rows = []
    for g in games:
        index[int(g["game"])] = index_of[g["path"]]
        rows.append({"index": index_of[g["path"]], "path": g["path"], "generation": generation,
                     "positions": int(g["positions"]), "sampled": int(g["sampled"][k])})  # fmt: skip
    return Part(part_url, int(entry["rows"]), rows, list(manifest["skipped"]), index)
