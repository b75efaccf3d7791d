"""The shard file format: training examples, compressed, one file per training rank.

A shard is an Arrow IPC file (random access, zstd-compressed buffers) with one row per training example:

| column   | type                        | content                                                        |
|----------|-----------------------------|----------------------------------------------------------------|
| `planes` | fixed_size_binary(P*ceil(N*N/8)) | the input planes, each plane bit-packed (`np.packbits`)   |
| `pi_index` | list<uint16>              | flat indices (pass = N*N) where the policy target is non-zero  |
| `pi_prob`  | list<float16>             | the policy target there (renormalised to sum to 1 on reading)  |
| `z`      | float16                     | the value target, from the player to move                      |
| `game`   | int32                       | index of the source game in the window manifest's `games` list |
| `move`   | int16                       | index of the position among that game's recorded positions     |
| `own`    | fixed_size_binary(N*N)      | final ownership from the mover's view, int8 per point (1, -1, 0) |
| `score`  | float16                     | final score margin from the mover's view, points; NaN if unknown |
| `reply`  | int16                       | the opponent's next move, flat index (pass = N*N); -1 if none  |

`own` and `score` are the auxiliary targets (format version 2), `reply` the opponent-reply target (format
version 3, what is written). Versions 2 and 3 are read: a version-2 shard reads as having no reply targets
(every row -1), so a window built before the column still trains (a model with the reply head learns nothing
from it). A shard of another version (version 1, without the auxiliary targets, was written only before the
first release) is refused naming the file; shards are rebuilt from the game files by rerunning the window.

Each plane is packed on its own byte boundary so that the history planes, which repeat almost exactly, stay
byte-aligned and zstd finds them. Record batches hold `batch_rows` rows (all but the last), so a reader finds
row `i` in batch `i // batch_rows` without an index. The schema metadata holds the row count, board size,
planes and feature set: `read_shard_info` reads only the footer, never the data.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from minigo_core.data import arrays, storage

FORMAT = "minigo-shard"
VERSION = 3
READABLE_VERSIONS = (2, VERSION)  # version 2: no `reply` column (read as -1: no target)
BATCH_ROWS = 1024
ZSTD_LEVEL = 6


class ShardError(ValueError):
    """A shard file is missing, truncated, corrupt or not a shard; the message names the file."""


@dataclass
class Examples:
    """Decoded training examples: planes uint8 (n, P, N, N), pi float32 (n, N*N+1), z float32 (n,), the
    auxiliary targets own int8 (n, N*N) and score float32 (n,) (NaN: none), and the opponent-reply target
    reply int16 (n,) (-1: none)."""

    planes: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    game: np.ndarray
    move: np.ndarray
    own: np.ndarray | None = None
    score: np.ndarray | None = None
    reply: np.ndarray | None = None

    def __post_init__(self) -> None:
        n, n2 = self.z.shape[0], self.planes.shape[-1] * self.planes.shape[-2]
        if self.own is None:
            self.own = np.zeros((n, n2), dtype=np.int8)
        if self.score is None:
            self.score = np.full(n, np.nan, dtype=np.float32)
        if self.reply is None:
            self.reply = np.full(n, -1, dtype=np.int16)

    def __len__(self) -> int:
        return int(self.z.shape[0])


@dataclass(frozen=True)
class ShardInfo:
    """What a shard's footer says about it."""

    rows: int
    board_size: int
    num_planes: int
    feature_set: str
    batch_rows: int
    extra: dict


def packed_width(num_planes: int, board_size: int) -> int:
    """Bytes per example of the bit-packed planes."""
    return num_planes * ((board_size * board_size + 7) // 8)


def schema(num_planes: int, board_size: int, metadata: dict | None = None) -> pa.Schema:
    fields = [
        pa.field("planes", pa.binary(packed_width(num_planes, board_size)), nullable=False),
        pa.field("pi_index", pa.list_(pa.uint16()), nullable=False),
        pa.field("pi_prob", pa.list_(pa.float16()), nullable=False),
        pa.field("z", pa.float16(), nullable=False),
        pa.field("game", pa.int32(), nullable=False),
        pa.field("move", pa.int16(), nullable=False),
        pa.field("own", pa.binary(board_size * board_size), nullable=False),
        pa.field("score", pa.float16(), nullable=False),
        pa.field("reply", pa.int16(), nullable=False),
    ]
    meta = {k: json.dumps(v) for k, v in (metadata or {}).items()}
    return pa.schema(fields, metadata=meta)


def encode(
    planes: np.ndarray,
    pi: np.ndarray,
    z: np.ndarray,
    game: np.ndarray | int,
    move: np.ndarray,
    own: np.ndarray | None = None,
    score: np.ndarray | None = None,
    reply: np.ndarray | None = None,
) -> pa.RecordBatch:
    """Training examples -> one record batch in the shard schema (planes bit-packed, policy sparse); without
    `own`/`score` the rows have no auxiliary targets (ownership 0, score NaN), without `reply` no
    opponent-reply target (-1)."""
    n, num_planes, board_size, _ = planes.shape
    n2 = board_size * board_size
    own = np.zeros((n, n2), dtype=np.int8) if own is None else np.ascontiguousarray(own, dtype=np.int8)
    score = np.full(n, np.nan, dtype=np.float32) if score is None else np.asarray(score, dtype=np.float32)
    reply = np.full(n, -1, dtype=np.int16) if reply is None else np.asarray(reply, dtype=np.int16)
    if pi.shape != (n, n2 + 1) or z.shape != (n,) or own.shape != (n, n2) or score.shape != (n,):
        raise ValueError(
            f"encode: pi {pi.shape} / z {z.shape} / own {own.shape} / score {score.shape} do not match "
            f"planes {planes.shape}"
        )
    if reply.shape != (n,) or ((reply < -1) | (reply > n2)).any():
        raise ValueError(f"encode: reply {reply.shape} must hold one move index in -1..{n2} per row")
    if n2 + 1 > 65535:
        raise ValueError(f"board size {board_size} too large for uint16 policy indices")
    packed = np.packbits(np.ascontiguousarray(planes, dtype=np.uint8).reshape(n, num_planes, n2), axis=-1)
    width = packed_width(num_planes, board_size)
    planes_arr = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(np.ascontiguousarray(packed).reshape(-1))]
    )
    rows, cols = np.nonzero(pi > 0)
    counts = np.bincount(rows, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    to_arrow, offsets_arr = arrays.from_numpy, arrays.from_numpy(offsets)
    pi_index = pa.ListArray.from_arrays(offsets_arr, to_arrow(cols.astype(np.uint16)))
    pi_prob = pa.ListArray.from_arrays(offsets_arr, to_arrow(pi[rows, cols].astype(np.float16)))
    game_col = np.broadcast_to(np.asarray(game, dtype=np.int32), (n,))
    return pa.RecordBatch.from_arrays(
        [
            planes_arr,
            pi_index,
            pi_prob,
            to_arrow(z.astype(np.float16)),
            to_arrow(np.ascontiguousarray(game_col)),
            to_arrow(np.asarray(move, dtype=np.int16)),
            pa.FixedSizeBinaryArray.from_buffers(pa.binary(n2), n, [None, pa.py_buffer(own.reshape(-1))]),
            to_arrow(score.astype(np.float16)),
            to_arrow(reply),
        ],
        schema=schema(num_planes, board_size),
    )


def _values(arr: pa.Array, dtype: Any) -> np.ndarray:
    return arrays.values(arr).astype(dtype, copy=False)


def decode(batch: pa.RecordBatch | pa.Table, num_planes: int, board_size: int) -> Examples:
    """A record batch (or table) in the shard schema -> dense training examples."""
    if isinstance(batch, pa.Table):
        batches = batch.combine_chunks().to_batches()
        batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=batch.schema)
    n = batch.num_rows
    n2 = board_size * board_size
    width = packed_width(num_planes, board_size)
    col = batch.column("planes")
    raw = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * width : (col.offset + n) * width]
    planes = np.unpackbits(raw.reshape(n, num_planes, (n2 + 7) // 8), axis=-1, count=n2)
    planes = planes.reshape(n, num_planes, board_size, board_size)
    idx_col, prob_col = batch.column("pi_index"), batch.column("pi_prob")
    offsets = _values(idx_col.offsets, np.int64)
    counts = np.diff(offsets)
    row_of = np.repeat(np.arange(n), counts)
    pi = np.zeros((n, n2 + 1), dtype=np.float32)
    pi[row_of, _values(idx_col.flatten(), np.int64)] = _values(prob_col.flatten(), np.float32)
    total = pi.sum(axis=1, keepdims=True)
    np.divide(pi, total, out=pi, where=total > 0)
    own = score = None
    if "own" in batch.schema.names:  # the auxiliary targets (a batch without them decodes without them)
        col = batch.column("own")
        raw = np.frombuffer(col.buffers()[1], dtype=np.int8)[col.offset * n2 : (col.offset + n) * n2]
        own, score = raw.reshape(n, n2).copy(), _values(batch.column("score"), np.float32)
    reply = None  # a version-2 batch has no opponent-reply targets: -1 (none) for every row
    if "reply" in batch.schema.names:
        reply = _values(batch.column("reply"), np.int16)
    return Examples(
        planes=planes,
        pi=pi,
        z=_values(batch.column("z"), np.float32),
        game=_values(batch.column("game"), np.int32),
        move=_values(batch.column("move"), np.int16),
        own=own,
        score=score,
        reply=reply,
    )


class _HashingWriter:
    """A write-only file wrapper that counts bytes and computes sha256 as the data goes by."""

    def __init__(self, handle: IO, url: str = "") -> None:
        self._handle = handle
        self.url = url
        self.sha256 = hashlib.sha256()
        self.bytes = 0
        self.closed = False

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.sha256.update(view)
        try:
            self._handle.write(view)
        except OSError as exc:  # out of space: say which shard (the writer's abort removes the file)
            raise storage.disk_full_error(exc, self.url) from exc
        self.bytes += view.nbytes
        return view.nbytes

    def tell(self) -> int:
        return self.bytes

    def flush(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        self.closed = True  # the underlying handle is closed (and renamed) by atomic_open

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False


@dataclass(frozen=True)
class WrittenShard:
    url: str
    rows: int
    bytes: int
    sha256: str


class ShardWriter:
    """Write exactly `rows` examples to `url` atomically (temporary name, then rename on `close`).

    Rows may arrive in record batches of any size; they are written in batches of `BATCH_ROWS` rows.
    """

    def __init__(
        self,
        url: str,
        rows: int,
        num_planes: int,
        board_size: int,
        feature_set: str,
        extra: dict | None = None,
    ) -> None:
        self.url = url
        self.rows = rows
        self.num_planes = num_planes
        self.board_size = board_size
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "rows": rows,
            "board_size": board_size,
            "num_planes": num_planes,
            "feature_set": feature_set,
            "batch_rows": BATCH_ROWS,
            "extra": extra or {},
        }
        self._schema = schema(num_planes, board_size, meta)
        self._atomic = storage.atomic_open(url, "wb")
        self._sink = _HashingWriter(self._atomic.__enter__(), url)
        options = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=ZSTD_LEVEL))
        self._writer = ipc.new_file(self._sink, self._schema, options=options)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self.written = 0

    @property
    def remaining(self) -> int:
        """Rows still to come before the shard is full."""
        return self.rows - self.written - self._pending_rows

    def write(self, batch: pa.RecordBatch) -> None:
        if self.written + self._pending_rows + batch.num_rows > self.rows:
            raise ValueError(f"shard {self.url}: more than the {self.rows} rows announced")
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        while self._pending_rows >= BATCH_ROWS:
            self._emit(BATCH_ROWS)

    def _emit(self, n: int) -> None:
        table = pa.Table.from_batches(self._pending, schema=self._pending[0].schema)
        head = table.slice(0, n).combine_chunks()
        rest = table.slice(n)
        self._writer.write_batch(head.to_batches()[0].replace_schema_metadata(None))
        self._pending = rest.combine_chunks().to_batches() if rest.num_rows else []
        self._pending_rows = rest.num_rows
        self.written += n

    def close(self) -> WrittenShard:
        if self._pending_rows:
            self._emit(self._pending_rows)
        if self.written != self.rows:
            self.abort()
            raise ValueError(f"shard {self.url}: {self.written} rows written, {self.rows} announced")
        self._writer.close()
        self._atomic.__exit__(None, None, None)
        return WrittenShard(self.url, self.rows, self._sink.bytes, self._sink.sha256.hexdigest())

    def abort(self) -> None:
        """Drop the temporary file (on any error while writing)."""
        try:
            self._atomic.__exit__(RuntimeError, RuntimeError("aborted"), None)
        except RuntimeError:
            pass


def _info_from_schema(url: str, sch: pa.Schema) -> ShardInfo:
    try:
        return _parse_info(url, sch)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        if isinstance(exc, ShardError):
            raise
        raise ShardError(f"{url} has unreadable shard metadata ({exc!r}); rebuild the window") from exc


def _parse_info(url: str, sch: pa.Schema) -> ShardInfo:
    meta = {k.decode(): json.loads(v) for k, v in (sch.metadata or {}).items()}
    if meta.get("format") != FORMAT:
        raise ShardError(f"{url} is not a MiniGo shard file (no '{FORMAT}' format tag); rebuild the window")
    if meta.get("version") not in READABLE_VERSIONS:
        raise ShardError(
            f"{url} has shard format version {meta.get('version')}, this code reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}; rebuild the window"
        )
    return ShardInfo(
        rows=int(meta["rows"]),
        board_size=int(meta["board_size"]),
        num_planes=int(meta["num_planes"]),
        feature_set=str(meta["feature_set"]),
        batch_rows=int(meta["batch_rows"]),
        extra=dict(meta.get("extra", {})),
    )


def read_shard_info(url: str) -> ShardInfo:
    """Row count and shape of a shard from its footer alone (no data is read)."""
    fs, path = storage.fs_and_path(url)
    try:
        with fs.open(path, "rb") as handle:
            return _info_from_schema(url, ipc.open_file(handle).schema)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise ShardError(f"cannot read shard {url}: {exc}; rebuild the window") from exc


class LoadedShard:
    """A shard read into memory (compressed); `rows(start, stop)` decompresses and decodes on demand.

    Safe to use from several threads: each thread gets its own reader over the shared bytes and keeps the
    last record batch it decoded.
    """

    def __init__(self, url: str, data: bytes | pa.Buffer) -> None:

        self.url = url
        self._buffer = pa.py_buffer(data) if not isinstance(data, pa.Buffer) else data
        try:
            reader = ipc.open_file(pa.BufferReader(self._buffer))
            self.info = _info_from_schema(url, reader.schema)
            self.num_batches = reader.num_record_batches
        except (pa.ArrowException, ValueError) as exc:
            raise ShardError(f"shard {url} is truncated or corrupt ({exc}); rebuild the window") from exc
        self._local = threading.local()

    @property
    def num_rows(self) -> int:
        return self.info.rows

    def _batch(self, k: int) -> pa.RecordBatch:
        local = self._local
        if getattr(local, "index", None) != k:
            if not hasattr(local, "reader"):
                local.reader = ipc.open_file(pa.BufferReader(self._buffer))
            try:
                batch = local.reader.get_batch(k)
                # Full validation before any kernel touches the data: a flipped bit in offsets or
                # lengths must become a ShardError, not an abort inside Arrow.
                batch.validate(full=True)
                local.batch = batch
            except (pa.ArrowException, ValueError, OSError) as exc:
                raise ShardError(f"shard {self.url}: record batch {k} is corrupt ({exc})") from exc
            local.index = k
        return local.batch

    def rows(self, start: int, stop: int) -> Examples:
        """Decoded examples `start .. stop-1`."""
        if not 0 <= start <= stop <= self.num_rows:
            raise IndexError(f"rows {start}..{stop} outside shard {self.url} of {self.num_rows} rows")
        br = self.info.batch_rows
        pieces = []
        for k in range(start // br, (stop - 1) // br + 1 if stop > start else start // br):
            lo, hi = max(start, k * br) - k * br, min(stop, (k + 1) * br) - k * br
            pieces.append(self._batch(k).slice(lo, hi - lo))
        if not pieces:
            return decode(
                schema(self.info.num_planes, self.info.board_size).empty_table(),
                self.info.num_planes,
                self.info.board_size,
            )
        table = pieces[0] if len(pieces) == 1 else pa.Table.from_batches(pieces, schema=pieces[0].schema)
        return self._decode(table)

    def iter_batches(self) -> Iterator[Examples]:
        for k in range(self.num_batches):
            yield self._decode(self._batch(k))

    def _decode(self, table: pa.Table | pa.RecordBatch) -> Examples:
        try:
            return decode(table, self.info.num_planes, self.info.board_size)
        except (ValueError, KeyError, TypeError, IndexError, pa.ArrowException) as exc:
            raise ShardError(
                f"shard {self.url} holds rows that do not decode ({exc}); rebuild the window"
            ) from exc


def load_shard(url: str, sha256: str | None = None) -> LoadedShard:
    """Read a whole shard (one sequential read); with `sha256`, verify it first."""
    try:
        data = storage.read_bytes(url)
    except FileNotFoundError as exc:
        raise ShardError(f"shard {url} does not exist; run `minigo window` for this generation") from exc
    except OSError as exc:
        raise ShardError(f"cannot read shard {url}: {exc}") from exc
    if sha256 is not None and storage.sha256_bytes(data) != sha256:
        raise ShardError(
            f"shard {url} does not match the checksum in the window manifest (corrupt or replaced); "
            "rebuild the window"
        )
    return LoadedShard(url, data)
