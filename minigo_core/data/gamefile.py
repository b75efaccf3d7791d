"""The self-play game file: one game, one Arrow IPC stream, zstd-compressed, written atomically.

One row per recorded position (the moves that got a full search):

| column         | type                              | meaning                                               |
|----------------|-----------------------------------|-------------------------------------------------------|
| `move_index`   | uint16                            | moves played before this position (0 = empty board)   |
| `visits`       | fixed_size_list<uint16>[N*N+1]    | root visit counts per move (flat index, pass last)    |
| `value_target` | int8                              | game result from the view of the player to move       |
| `full_search`  | bool                              | the move got the full number of readouts              |
| `root_value`   | float32                           | the search's root value, player-to-move's view        |
| `policy`       | fixed_size_list<uint16>[N*N+1]    | Gumbel games only: the improved policy (the target)   |
| `surprise`     | float32                           | optional: KL(target || the network's prior), nats     |

The metadata key `target` says which column is the policy target: `visits` (PUCT: visit counts, normalised
when read) or `policy` (Gumbel AlphaZero: softmax(logits + sigma(completed Q))). Format version 2 stores the
policy in units of 1/65535 (`quantise_policy`: largest-remainder rounding, so a row sums to exactly 65535 and
each entry is within 1/65535 of the exact probability); it is read as float32 divided by its row's sum.
Only version 2 is read and written: version 1 (the policy as float32), written only before the first release,
is refused like any other version, naming the file (docs/CONTRACTS.md, "Compatibility").

The schema metadata key `minigo` holds a JSON document: format and version, board size, komi, feature set, the
model (url, generation, sha256), the seeds, the result, the move count, the resignation settings and their
false-positive record, the search settings, the software version, and `moves`: the whole game (unrecorded
moves included) as SGF points, two letters per move (column then row from the top; `tt` is a pass).
Features are rebuilt by replaying the moves (`training_examples`; `replayed_examples` on the compiled
board); no planes are stored. Wall-clock timings are kept out of the file (in the self-play job's record):
the same seed gives byte-identical files.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from minigo_core.base.config import FEATURE_SETS
from minigo_core.data import arrays, storage
from minigo_core.game import coords, features, go, native_replay
from minigo_core.game.result import result_string

FORMAT = "minigo-game"
FORMAT_VERSION = 2
READ_VERSIONS = (FORMAT_VERSION,)
POLICY_UNITS = 65535  # version 2: the Gumbel policy in units of 1/POLICY_UNITS, each row summing to it
METADATA_KEY = b"minigo"
PASS_POINT = "tt"
_SGF_LETTERS = "abcdefghijklmnopqrs"
_STREAM_START = b"\xff\xff\xff\xff"
_STREAM_END = b"\xff\xff\xff\xff\x00\x00\x00\x00"
COLUMNS = ("move_index", "visits", "value_target", "full_search", "root_value")
REQUIRED_METADATA = (
    "format",
    "format_version",
    "board_size",
    "komi",
    "features",
    "num_moves",
    "num_positions",
    "result",
    "moves",
)


class GameFileError(ValueError):
    """A game file is missing, empty, truncated, corrupt or not a MiniGo game file; the message names it."""


def encode_moves(moves: list[coords.Move], board_size: int) -> str:
    """Moves as SGF points, two letters each (`tt` for a pass)."""
    return "".join(PASS_POINT if m is None else coords.to_sgf(m, board_size) for m in moves)


def decode_moves(text: str, board_size: int) -> list[coords.Move]:
    if len(text) % 2:
        raise ValueError(f"move string has odd length {len(text)}")
    moves: list[coords.Move] = []
    for i in range(0, len(text), 2):
        point = text[i : i + 2]
        if point == PASS_POINT:
            moves.append(None)
            continue
        col, row = _SGF_LETTERS.find(point[0]), _SGF_LETTERS.find(point[1])
        if not (0 <= row < board_size and 0 <= col < board_size):
            raise ValueError(
                f"move {i // 2 + 1} {point!r} is not a point on a {board_size}x{board_size} board"
            )
        moves.append((row, col))
    return moves


@dataclass
class GameRecord:
    """A finished self-play game: metadata, the full move list, and the recorded positions' targets."""

    metadata: dict
    moves: list[coords.Move]
    move_index: np.ndarray  # int64 (n,)
    visits: np.ndarray  # int64 (n, N*N+1)
    value_target: np.ndarray  # float32 (n,): -1, 0 or 1 from the view of the player to move
    full_search: np.ndarray  # bool (n,)
    root_value: np.ndarray  # float32 (n,)
    policy: np.ndarray | None = None  # float32 (n, N*N+1): Gumbel's improved policy (the target; as read)
    surprise: np.ndarray | None = None  # float32 (n,): the policy surprise (the compiled engine's games)
    source: str = field(default="<memory>", compare=False)

    @property
    def board_size(self) -> int:
        return int(self.metadata["board_size"])

    @property
    def komi(self) -> float:
        return float(self.metadata["komi"])

    @property
    def winner(self) -> int:
        """1 Black, -1 White, 0 a draw."""
        return int(self.metadata["result"]["winner"])

    @property
    def num_positions(self) -> int:
        return int(self.move_index.shape[0])

    def positions(self) -> list:
        """The position before each move, then the final one (replayed with `go.replay`)."""

        try:
            return go.replay(self.moves, self.board_size, self.komi)
        except go.IllegalMove as exc:
            raise GameFileError(f"game file {self.source}: its move list does not replay ({exc})") from None

    def training_examples(self, feature_set: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(planes uint8 (n, P, N, N), pi float32 (n, N*N+1) summing to 1, z float32 (n,)): full searches.

        Features are rebuilt by replaying the moves; `feature_set` defaults to the one the game used.
        """

        feature_set = feature_set or self.metadata["features"]
        keep = np.flatnonzero(self.full_search)
        positions = self.positions()
        n = self.board_size
        if keep.size == 0:
            planes = np.zeros((0, features.num_planes(feature_set), n, n), dtype=np.uint8)
        else:
            planes = features.extract_batch([positions[int(i)] for i in self.move_index[keep]], feature_set)
        return planes, self.policy_targets(keep), self.value_target[keep].astype(np.float32)

    @property
    def resigned(self) -> bool:
        return bool(self.metadata["result"].get("resigned", False))

    def aux_targets(self, rows: np.ndarray, positions: list | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The auxiliary targets of the given rows, from the view of the player to move at each:
        (ownership int8 (n, N*N): 1 the mover's, -1 the opponent's, 0 neither, of the final position under
        Tromp-Taylor; score float32 (n,): the final area score margin, komi included, in points).

        Derived from the move list (no extra columns in the file, so every game file has them). A resigned
        game's last position is not a finished board, so its rows get no auxiliary target: ownership 0 and
        score NaN (the loss skips them). `positions` is `self.positions()` when the caller has it already.
        """
        n2 = self.board_size * self.board_size
        rows = np.asarray(rows, dtype=np.int64)
        if self.resigned:
            return np.zeros((rows.size, n2), dtype=np.int8), np.full(rows.size, np.nan, dtype=np.float32)
        positions = positions if positions is not None else self.positions()
        final = positions[-1]
        mover = np.array([positions[int(i)].to_play for i in self.move_index[rows]], dtype=np.int8)
        own = final.ownership()[None, :] * mover[:, None]
        return own.astype(np.int8), (float(final.score()) * mover).astype(np.float32)

    def replayed_examples(
        self, rows: np.ndarray, feature_set: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The feature planes and auxiliary targets of the given rows from one replay of the moves on the
        compiled board (`native_replay`): (planes uint8 (n, P, N, N), ownership int8 (n, N*N), score float32
        (n,)), the same bytes as `training_examples`' planes and `aux_targets` (resigned games included).

        A move list that does not replay raises GameFileError, as `positions` does."""
        rows = np.asarray(rows, dtype=np.int64)
        try:
            r = native_replay.replay_examples(
                self.moves, self.board_size, self.komi, feature_set, self.move_index[rows]
            )
        except go.IllegalMove as exc:
            raise GameFileError(f"game file {self.source}: its move list does not replay ({exc})") from None
        if self.resigned:
            n2 = self.board_size * self.board_size
            return r.planes, np.zeros((rows.size, n2), dtype=np.int8), np.full(rows.size, np.nan, np.float32)
        own = r.ownership[None, :] * r.to_play[:, None]
        return r.planes, own.astype(np.int8), (r.score * r.to_play).astype(np.float32)

    def policy_targets(self, rows: np.ndarray) -> np.ndarray:
        """The policy targets (float32, rows x N*N+1, summing to 1) of the given rows: the stored improved
        policy of a Gumbel game, else the normalised visit counts."""
        if self.policy is not None:
            pi = self.policy[rows].astype(np.float32)
        else:
            pi = self.visits[rows].astype(np.float32)
        return pi / pi.sum(axis=1, keepdims=True)


def quantise_policy(policy: np.ndarray) -> np.ndarray:
    """Policy rows (non-negative, each with a positive sum) as uint16 counts of 1/`POLICY_UNITS` summing to
    exactly `POLICY_UNITS` per row: each row is normalised, its entries rounded down, and the units left over
    go to the largest remainders (ties: the lower move). Each entry ends within 1/POLICY_UNITS of its exact
    normalised probability (so a row's L1 error is below (N*N+1)/POLICY_UNITS); zeros stay zero; and a row
    read back (divided by its sum) quantises to the same counts, so rewriting a read file gives its bytes.
    """
    p = np.asarray(policy, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"policy must be (positions, moves), got shape {p.shape}")
    total = p.sum(axis=1, keepdims=True)
    if p.size and (not np.isfinite(p).all() or (p < 0).any() or (total <= 0).any()):
        raise ValueError("a policy row is negative, not finite or all zero: it cannot be a training target")
    exact = p / np.where(total > 0, total, 1.0) * POLICY_UNITS
    counts = np.floor(exact)
    left = np.rint(POLICY_UNITS - counts.sum(axis=1)).astype(np.int64)  # 0 .. moves-1
    order = np.argsort(counts - exact, axis=1, kind="stable")  # largest remainder first
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(p.shape[1])[None, :], axis=1)
    counts += (rank < left[:, None]) & (p > 0)
    return counts.astype(np.uint16)


def _table(record: GameRecord) -> pa.Table:
    n = record.board_size
    num_moves = n * n + 1
    visits = np.asarray(record.visits)
    if visits.ndim != 2 or visits.shape[1] != num_moves:
        raise ValueError(f"visits must be (positions, {num_moves}) for a {n}x{n} board, got {visits.shape}")
    if visits.size and (visits.min() < 0 or visits.max() > np.iinfo(np.uint32).max):
        raise ValueError("visit counts must be in 0..2^32-1")
    counts_type = pa.uint16() if not visits.size or visits.max() <= np.iinfo(np.uint16).max else pa.uint32()
    counts = arrays.from_numpy(visits.reshape(-1), counts_type)
    metadata = dict(record.metadata)
    missing = [k for k in ("board_size", "komi", "features", "result") if k not in metadata]
    if missing:
        raise ValueError(f"game record metadata lacks {missing}; a reader could not use the file")
    metadata["moves"] = encode_moves(record.moves, n)
    metadata["num_moves"] = len(record.moves)
    metadata["num_positions"] = int(visits.shape[0])
    metadata.setdefault("format", FORMAT)
    metadata.setdefault("format_version", FORMAT_VERSION)
    columns = [
        arrays.from_numpy(np.asarray(record.move_index, dtype=np.uint16), pa.uint16()),
        pa.FixedSizeListArray.from_arrays(counts, num_moves),
        arrays.from_numpy(np.asarray(record.value_target, dtype=np.int8), pa.int8()),
        arrays.from_numpy(np.asarray(record.full_search, dtype=bool), pa.bool_()),
        arrays.from_numpy(np.asarray(record.root_value, dtype=np.float32), pa.float32()),
    ]
    names = list(COLUMNS)
    if metadata["format_version"] not in READ_VERSIONS:
        raise ValueError(f"cannot write game file format version {metadata['format_version']!r}")
    if record.policy is not None:
        policy = np.asarray(record.policy, dtype=np.float32)
        if policy.shape != visits.shape:
            raise ValueError(f"policy must be (positions, {num_moves}) like visits, got {policy.shape}")
        values = arrays.from_numpy(quantise_policy(policy).reshape(-1), pa.uint16())
        columns.append(pa.FixedSizeListArray.from_arrays(values, num_moves))
        names.append("policy")
        metadata["target"] = "policy"
    if record.surprise is not None:
        surprise = np.asarray(record.surprise, dtype=np.float32)
        if surprise.shape != (visits.shape[0],) or not np.isfinite(surprise).all() or (surprise < 0).any():
            raise ValueError(f"surprise must be ({visits.shape[0]},), finite and >= 0")
        columns.append(arrays.from_numpy(surprise, pa.float32()))
        names.append("surprise")
    table = pa.Table.from_arrays(columns, names=names)
    text = json.dumps(metadata, sort_keys=True, separators=(",", ":"))
    return table.replace_schema_metadata({METADATA_KEY: text.encode()})


def game_bytes(record: GameRecord) -> bytes:
    """The game file's bytes (deterministic: same record, same bytes)."""
    table = _table(record)
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=3), use_threads=False)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def write_game(url: str, record: GameRecord) -> int:
    """Write a game file atomically (temporary name, then rename). Returns its size in bytes."""
    return write_game_digest(url, record)[0]


def write_game_digest(url: str, record: GameRecord) -> tuple[int, str]:
    """`write_game`, returning the file's size and its SHA-256 (hex)."""
    data = game_bytes(record)
    with storage.atomic_open(url, "wb") as handle:
        handle.write(data)
    return len(data), storage.sha256_bytes(data)


def _read_bytes(url: str) -> bytes:
    fs, path = storage.fs_and_path(url)
    try:
        with fs.open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise GameFileError(f"game file {url} does not exist") from None
    except OSError as exc:
        raise GameFileError(f"cannot read game file {url}: {exc}") from exc


def _metadata_of(schema: pa.Schema, url: str) -> dict:
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise GameFileError(
            f"{url} is an Arrow file but not a MiniGo game file (no '{METADATA_KEY.decode()}' "
            "metadata); it was probably written by another program"
        )
    try:
        metadata = json.loads(raw)
    except ValueError as exc:
        raise GameFileError(f"game file {url} has unreadable metadata ({exc})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise GameFileError(f"{url} is not a MiniGo game file (metadata format is not '{FORMAT}')")
    if metadata.get("format_version") not in READ_VERSIONS or isinstance(metadata["format_version"], bool):
        raise GameFileError(
            f"game file {url} has format version {metadata.get('format_version')!r}; this software reads "
            f"versions {', '.join(map(str, READ_VERSIONS))}; re-run its self-play job or use the software "
            f"version that wrote it ({metadata.get('software_version', 'unknown')})"
        )
    missing = [k for k in REQUIRED_METADATA if k not in metadata]
    if missing:
        raise GameFileError(f"game file {url} lacks metadata keys {missing}")
    problem = _metadata_problem(metadata)
    if problem:
        raise GameFileError(f"game file {url} has bad metadata: {problem}")
    return metadata


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _metadata_problem(m: dict) -> str | None:
    """What is wrong with the metadata's types and ranges, or None."""
    if not _is_int(m["board_size"]) or not 2 <= m["board_size"] <= len(_SGF_LETTERS):
        return f"board_size {m['board_size']!r} is not an integer from 2 to {len(_SGF_LETTERS)}"
    if not isinstance(m["komi"], (int, float)) or isinstance(m["komi"], bool) or not math.isfinite(m["komi"]):
        return f"komi {m['komi']!r} is not a number"
    if not isinstance(m["features"], str) or not isinstance(m["moves"], str):
        return "features and moves must be strings"
    if m["features"] not in FEATURE_SETS:
        return f"features {m['features']!r} is not one of {', '.join(FEATURE_SETS)}"
    for key in ("num_moves", "num_positions"):
        if not _is_int(m[key]) or m[key] < 0:
            return f"{key} {m[key]!r} is not a count"
    result = m["result"]
    if (
        not isinstance(result, dict)
        or result.get("winner") not in (-1, 0, 1)
        or isinstance(result["winner"], bool)
    ):
        return f"result {result!r} has no winner -1, 0 or 1"
    return None


def _open_stream(data: bytes, url: str) -> pa.ipc.RecordBatchStreamReader:
    if not data:
        raise GameFileError(
            f"game file {url} is empty (0 bytes); its self-play job did not finish, re-run it"
        )
    if not data.startswith(_STREAM_START):
        raise GameFileError(
            f"{url} is not a MiniGo game file (not an Arrow IPC stream; first bytes {data[:8]!r})"
        )
    if not data.endswith(_STREAM_END):
        raise GameFileError(
            f"game file {url} is truncated ({len(data)} bytes, no end-of-stream marker); "
            "re-run its self-play job"
        )
    try:
        return pa.ipc.open_stream(data)
    except (pa.ArrowException, OSError) as exc:
        raise GameFileError(f"game file {url} is truncated or corrupt ({len(data)} bytes: {exc})") from None


def read_metadata(url: str) -> dict:
    """The file-level metadata only (result, move and position counts, model, seeds) without decoding rows."""
    data = _read_bytes(url)
    return _metadata_of(_open_stream(data, url).schema, url)


def read_game(url: str) -> GameRecord:
    """Read and validate a game file; raises `GameFileError` naming the file for anything wrong with it."""
    return read_game_digest(url)[0]


def read_game_digest(url: str) -> tuple[GameRecord, int, str]:
    """`read_game`, with the file's size and SHA-256 (hex) from the same read."""
    data = _read_bytes(url)
    return _game_from_bytes(data, url), len(data), storage.sha256_bytes(data)


def read_game_bytes(url: str) -> bytes:
    """A game file's bytes (GameFileError naming the file when it is missing or unreadable)."""
    return _read_bytes(url)


def game_from_bytes(data: bytes, url: str) -> GameRecord:
    """`read_game` of a game file's bytes already in memory (a packed generation's archive holds them);
    `url` names where they came from in every error."""
    return _game_from_bytes(data, url)


def metadata_from_bytes(data: bytes, url: str) -> dict:
    """`read_metadata` of a game file's bytes already in memory."""
    return _metadata_of(_open_stream(data, url).schema, url)


def _game_from_bytes(data: bytes, url: str) -> GameRecord:
    reader = _open_stream(data, url)
    metadata = _metadata_of(reader.schema, url)
    try:
        table = reader.read_all()
    except (pa.ArrowException, OSError) as exc:
        raise GameFileError(f"game file {url} is truncated or corrupt ({len(data)} bytes: {exc})") from None
    return _record_from_table(table, metadata, url)


def _record_from_table(table: pa.Table, metadata: dict, url: str) -> GameRecord:
    try:
        return _decode_table(table, metadata, url)
    except GameFileError:
        raise
    except (pa.ArrowException, ValueError, TypeError, IndexError, KeyError, OverflowError) as exc:
        raise GameFileError(f"game file {url} is corrupt ({type(exc).__name__}: {exc})") from None


def _numpy(table: pa.Table, name: str) -> np.ndarray:
    """A column as one numpy array (`arrays.values`: no pandas import in a process that reads game files)."""
    return arrays.values(table.column(name))


def _decode_table(table: pa.Table, metadata: dict, url: str) -> GameRecord:
    n = metadata["board_size"]
    num_moves = n * n + 1
    expected = {
        "move_index": pa.uint16(),
        "value_target": pa.int8(),
        "full_search": pa.bool_(),
        "root_value": pa.float32(),
    }
    for name in COLUMNS:
        if name not in table.column_names:
            raise GameFileError(f"game file {url} lacks column '{name}'")
        column_type = table.schema.field(name).type
        if name == "visits":
            ok = (
                pa.types.is_fixed_size_list(column_type)
                and column_type.list_size == num_moves
                and column_type.value_type in (pa.uint16(), pa.uint32())
            )
        else:
            ok = column_type == expected[name]
        if not ok:
            raise GameFileError(
                f"game file {url}: column '{name}' has type {column_type}, not what this "
                f"format writes for a {n}x{n} board"
            )
        if table.column(name).null_count:
            raise GameFileError(f"game file {url}: column '{name}' has missing values")
    table.validate(full=True)
    moves = decode_moves(metadata["moves"], n)
    rows = table.num_rows
    if rows != metadata["num_positions"] or len(moves) != metadata["num_moves"]:
        raise GameFileError(
            f"game file {url} is inconsistent: {rows} rows and {len(moves)} moves, metadata says "
            f"{metadata['num_positions']} positions and {metadata['num_moves']} moves"
        )
    visits_col = table.column("visits").combine_chunks()
    visits = arrays.values(visits_col.flatten()).astype(np.int64).reshape(rows, num_moves)
    move_index = _numpy(table, "move_index").astype(np.int64)
    value_target = _numpy(table, "value_target").astype(np.float32)
    root_value = _numpy(table, "root_value").astype(np.float32)
    if rows and move_index.max() >= len(moves):
        raise GameFileError(f"game file {url}: a move_index is outside the game's {len(moves)} moves")
    if rows and (visits.sum(axis=1) <= 0).any():
        raise GameFileError(f"game file {url}: a recorded position has no visits")
    policy = _policy_column(table, metadata, num_moves, url)
    if not np.isin(value_target, (-1.0, 0.0, 1.0)).all() or not np.isfinite(root_value).all():
        raise GameFileError(
            f"game file {url}: a value target is not -1, 0 or 1, or a root value is not finite"
        )
    return GameRecord(
        metadata=metadata,
        moves=moves,
        move_index=move_index,
        visits=visits,
        value_target=value_target,
        full_search=_numpy(table, "full_search").astype(bool),
        root_value=root_value,
        policy=policy,
        surprise=_surprise_column(table, url),
        source=str(url),
    )


def _surprise_column(table: pa.Table, url: str) -> np.ndarray | None:
    """The policy surprise of each row, where the file has the column (the compiled engine writes it)."""
    if "surprise" not in table.column_names:
        return None
    if table.schema.field("surprise").type != pa.float32() or table.column("surprise").null_count:
        raise GameFileError(f"game file {url}: column 'surprise' is not float32 without missing values")
    surprise = _numpy(table, "surprise").astype(np.float32)
    if not np.isfinite(surprise).all() or (surprise < 0).any():
        raise GameFileError(f"game file {url}: a policy surprise is negative or not finite")
    return surprise


def _policy_column(table: pa.Table, metadata: dict, num_moves: int, url: str) -> np.ndarray | None:
    """The Gumbel policy targets, when the file says its target is `policy` (checked as the other columns)."""
    target = metadata.get("target", "visits")
    if target not in ("visits", "policy"):
        raise GameFileError(f"game file {url}: metadata target {target!r} is not 'visits' or 'policy'")
    if target == "visits":
        return None
    if "policy" not in table.column_names:
        raise GameFileError(f"game file {url} says its target is 'policy' but has no 'policy' column")
    column_type = table.schema.field("policy").type
    value_type = pa.uint16()
    if not (
        pa.types.is_fixed_size_list(column_type)
        and column_type.list_size == num_moves
        and column_type.value_type == value_type
    ):
        raise GameFileError(
            f"game file {url}: column 'policy' has type {column_type}, not what format version "
            f"{metadata['format_version']} writes (fixed_size_list<{value_type}>[{num_moves}])"
        )
    if table.column("policy").null_count:
        raise GameFileError(f"game file {url}: column 'policy' has missing values")
    flat = arrays.values(table.column("policy").combine_chunks().flatten())
    stored = flat.reshape(table.num_rows, num_moves)
    if table.num_rows and (
        not np.isfinite(stored).all() or (stored < 0).any() or (stored.sum(axis=1) <= 0).any()
    ):
        raise GameFileError(f"game file {url}: a policy target is negative, not finite or all zero")
    counts = stored.astype(np.float64)
    return (counts / counts.sum(axis=1, keepdims=True)).astype(np.float32)


def result_of(metadata: dict) -> str:
    """The result string (`B+R`, `W+3.5`, `0`, `game.result.result_string`) of a game file's `result`."""
    result: dict[str, Any] = metadata["result"]
    reason = "resign" if result.get("resigned") else ""
    return result_string(result.get("score"), winner=int(result["winner"]), reason=reason)
