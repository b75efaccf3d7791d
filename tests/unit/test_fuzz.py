"""Fuzzing the readers of untrusted bytes: SGF, game files, shards, model files, and the GTP server.

Every reader gets random and mutated inputs (bit flips, truncation, garbage splices, foreign Arrow and other
files) and must either read them or fail with its own clean error (a `ValueError` subclass whose message names
the file) -- never another exception type, never a hang. The GTP server gets 10,000 garbage lines and must
then still answer correctly, with nothing but protocol on stdout.

Examples are bounded (hypothesis `max_examples`) so the file runs in well under a minute on a busy machine.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigo_core.data import gamefile, shards
from minigo_core.game import sgf
from minigo_core.gtp import server as gtp_server
from minigo_core.nn import model
from minigo_core.play.players import RandomPlayer
from minigo_core.selfplay import selfplay_game

REPO = Path(__file__).resolve().parents[2]
HANG_SECONDS = 20  # one read of a few KB that takes longer than this is a hang
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples every run: a failure here is reproducible
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

torch.set_num_threads(1)


@contextlib.contextmanager
def no_hang(what: str, seconds: int = HANG_SECONDS):
    """Fail (instead of blocking the suite) if the body runs longer than `seconds`."""

    def on_alarm(signum, frame):
        raise AssertionError(f"{what} did not return within {seconds} s (a hang on fuzzed input)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def in_child(check, *args) -> None:
    """Run `check(*args)` in a forked child process and re-raise its failure here. A reader that crashes the
    process (an abort in native code) becomes a test failure instead of taking the whole test run down."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running any of pytest's exit handlers
        os.close(read_end)
        message = b""
        try:
            check(*args)
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            message = f"{type(exc).__name__}: {exc}".encode(errors="replace") or b"failed"
        with os.fdopen(write_end, "wb") as out:
            out.write(message)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        message = inp.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        where = f"{check.__name__}({args[0] if args else ''})"
        raise AssertionError(f"{where}: the reader crashed the process with {name} (a native abort)")
    if message:
        raise AssertionError(message.decode(errors="replace"))


# ------------------------------------------------------------------------------------------ real artifacts
class Artifacts(dict):
    """The real files' bytes by kind; a short repr so that hypothesis failure reports stay readable."""

    def __repr__(self) -> str:
        return "Artifacts(" + ", ".join(f"{k}: {len(v)} bytes" for k, v in self.items()) + ")"


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory, make_config) -> Artifacts:
    """A real model file, game file, shard and SGF made by the library on the tiny config (resignation off,
    so the fuzzed game is a whole game)."""
    root = tmp_path_factory.mktemp("fuzz_run")
    run_cfg = make_config(root=str(root), selfplay={"resign_disabled_fraction": 1.0})
    model_url = str(root / "gen0000.safetensors")
    net = model.random_model(model.ModelConfig.from_run(run_cfg), seed=run_cfg.seed)
    model.save_model(model_url, net, {"generation": 0})
    net = model.load_model(model_url, backend="dsp")
    record = selfplay_game.play_selfplay_game(net, run_cfg, 0, 0, model_url)
    game_url = str(root / "game00000.arrow")
    gamefile.write_game(game_url, record)
    planes, pi, z = gamefile.read_game(game_url).training_examples()
    shard_url = str(root / "shard000.arrow")
    writer = shards.ShardWriter(shard_url, len(z), planes.shape[1], run_cfg.board_size, run_cfg.features)
    writer.write(shards.encode(planes, pi, z, 0, np.arange(len(z))))
    writer.close()
    sgf_bytes = sgf.write_sgf(record.moves, run_cfg.board_size, run_cfg.komi, "B+R")
    return Artifacts(
        model=Path(model_url).read_bytes(),
        game=Path(game_url).read_bytes(),
        shard=Path(shard_url).read_bytes(),
        sgf=sgf_bytes,
    )


def foreign_files() -> dict[str, bytes]:
    """Files a user could plausibly drop into a run directory by mistake (other formats, other schemas)."""
    table = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
    stream, ipc_file, parquet = io.BytesIO(), io.BytesIO(), io.BytesIO()
    with pa.ipc.new_stream(stream, table.schema) as w:
        w.write_table(table)
    with pa.ipc.new_file(ipc_file, table.schema) as w:
        w.write_table(table)
    pq.write_table(table, parquet)
    # An Arrow stream that carries a `minigo` metadata key with garbage, and one with a plausible-looking one.
    bad_meta = table.replace_schema_metadata({b"minigo": b"{not json"})
    fake_meta = table.replace_schema_metadata(
        {b"minigo": json.dumps({"format": "minigo-game", "format_version": 2}).encode()}
    )
    streams = {}
    for name, t in (("bad_meta", bad_meta), ("fake_meta", fake_meta)):
        buf = io.BytesIO()
        with pa.ipc.new_stream(buf, t.schema) as w:
            w.write_table(t)
        streams[name] = buf.getvalue()
    zip_bytes = io.BytesIO()
    torch.save({"weights": torch.zeros(3)}, zip_bytes)  # a torch file, not a MiniGo model
    return {
        "empty": b"",
        "text": b"hello, world\n",
        "json": b'{"format": "minigo-game"}',
        "zeros": bytes(4096),
        "arrow_stream_foreign": stream.getvalue(),
        "arrow_file_foreign": ipc_file.getvalue(),
        "parquet": parquet.getvalue(),
        "arrow_bad_metadata": streams["bad_meta"],
        "arrow_fake_metadata": streams["fake_meta"],
        "torch_foreign": zip_bytes.getvalue(),
        "stream_marker_only": b"\xff\xff\xff\xff\x00\x00\x00\x00",
        "sgf": b"(;GM[1]SZ[9];B[ee];W[cc])",
    }


@st.composite
def mutated(draw, good: bytes) -> bytes:
    """`good` damaged the way disks, networks and people damage files."""
    kind = draw(st.sampled_from(["flip", "truncate", "splice", "zero_run", "insert", "duplicate"]))
    data = bytearray(good)
    n = len(data)
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, n - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
    elif kind == "truncate":
        data = data[: draw(st.integers(0, n - 1))]
    elif kind == "splice":
        i = draw(st.integers(0, n - 1))
        junk = draw(st.binary(min_size=1, max_size=64))
        data[i : i + len(junk)] = junk
    elif kind == "zero_run":
        i = draw(st.integers(0, n - 1))
        j = min(n, i + draw(st.integers(1, 512)))
        data[i:j] = bytes(j - i)
    elif kind == "insert":
        i = draw(st.integers(0, n))
        data[i:i] = draw(st.binary(min_size=1, max_size=64))
    else:  # a second copy appended (a writer that appended instead of replacing)
        data += good
    return bytes(data)


# ------------------------------------------------------------------------------------------------- SGF
SGF_OK = (ValueError,)  # sgf.read_sgf / positions_from_sgf raise ValueError (go.IllegalMove is one)


def check_sgf(data: bytes) -> None:
    with no_hang(f"sgf.read_sgf on {data[:40]!r}..."):
        for reader in (sgf.read_sgf, sgf.positions_from_sgf):
            try:
                reader(data)
            except SGF_OK:
                pass


@FUZZ
@given(data=st.binary(max_size=512))
def test_sgf_reader_random_bytes(data):
    check_sgf(data)


@FUZZ
@given(text=st.text(alphabet="();[]\\:BWABAWAEPLSZKMRE ab9cdst\n", max_size=200))
def test_sgf_reader_sgf_like_text(text):
    check_sgf(text.encode())


@FUZZ
@given(data=st.data())
def test_sgf_reader_mutated_game(artifacts, data):
    check_sgf(data.draw(mutated(artifacts["sgf"])))


@pytest.mark.parametrize(
    "text",
    [
        b"(;SZ[999];B[aa])",  # board too large for the rules
        b"(;SZ[1];B[aa])",
        b"(;SZ[0])",
        b"(;SZ[-5])",
        b"(;SZ[9]KM[nan];B[ee])",
        b"(;SZ[9]KM[1e999];B[ee])",
        b"(;SZ[9];B[zz])",  # off the board
        b"(;SZ[9];B[ee];W[ee])",  # occupied point
        b"(;SZ[9]AB[ee]AW[ee];B[aa])",  # a point set to both colours
        b"(;SZ[9]" + b";B[ee]" * 3000 + b")",  # far more moves than points
        b"(" * 5000 + b";SZ[9])" + b")" * 4999,  # deep nesting
    ],
)
def test_sgf_reader_hostile_games(text):
    check_sgf(text)


# ------------------------------------------------------------------------------------------- game files
def check_game_file(path: Path, data: bytes) -> None:
    """read_game either reads a usable record or raises GameFileError naming the file."""
    path.write_bytes(data)
    url = str(path)
    with no_hang(f"gamefile.read_game on {len(data)} bytes"):
        try:
            record = gamefile.read_game(url)
            gamefile.read_metadata(url)
            planes, pi, z = record.training_examples()
        except gamefile.GameFileError as exc:
            assert url in str(exc), f"GameFileError does not name the file {url}: {exc}"
            return
        except Exception as exc:  # noqa: BLE001 - the point of the test: name the unclean exception
            raise AssertionError(
                f"game file reader raised {type(exc).__name__} (not GameFileError) on a damaged game file "
                f"({len(data)} bytes): {exc}"
            ) from exc
    # Whatever survived the damage (a flip inside a float, say) must still be a usable training example.
    assert planes.shape[0] == pi.shape[0] == z.shape[0]
    assert np.isfinite(pi).all() and np.allclose(pi.sum(axis=1), 1.0, atol=1e-5)
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0}


@FUZZ
@given(data=st.data())
def test_game_file_reader_mutated(artifacts, tmp_path, data):
    in_child(check_game_file, tmp_path / "game00001.arrow", data.draw(mutated(artifacts["game"])))


@FUZZ
@given(data=st.binary(max_size=2048))
def test_game_file_reader_random_bytes(tmp_path, data):
    in_child(check_game_file, tmp_path / "game00002.arrow", data)


@FUZZ
@given(prefix=st.binary(min_size=1, max_size=64))
def test_game_file_reader_arrow_stream_header_then_garbage(tmp_path, prefix):
    """Garbage behind a valid-looking stream start and end marker (gets past the cheap checks)."""
    data = gamefile._STREAM_START + prefix + gamefile._STREAM_END
    check_game_file(tmp_path / "game00003.arrow", data)


def test_game_file_reader_foreign_files(artifacts, tmp_path):
    others = {**foreign_files(), "shard": artifacts["shard"], "model": artifacts["model"]}
    for name, data in others.items():
        path = tmp_path / f"{name}.arrow"
        path.write_bytes(data)
        with pytest.raises(gamefile.GameFileError) as info:
            gamefile.read_game(str(path))
        assert str(path) in str(info.value), f"{name}: message does not name the file: {info.value}"


def _rewrite_game(good: bytes, meta_changes: dict | None = None, columns: dict | None = None) -> bytes:
    """The good game file with metadata values and/or whole columns replaced (a plausible forged file)."""
    table = pa.ipc.open_stream(good).read_all()
    meta = json.loads(table.schema.metadata[gamefile.METADATA_KEY])
    meta.update(meta_changes or {})
    for name, values in (columns or {}).items():
        i = table.column_names.index(name)
        table = table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))
    table = table.replace_schema_metadata({gamefile.METADATA_KEY: json.dumps(meta).encode()})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


HOSTILE_METADATA = {
    "features_unknown": {"features": "xyz"},
    "features_not_a_string": {"features": 17},
    "board_size_zero": {"board_size": 0},
    "board_size_one": {"board_size": 1},
    "board_size_huge": {"board_size": 99},
    "board_size_negative": {"board_size": -5},
    "board_size_string": {"board_size": "5"},
    "board_size_float": {"board_size": 5.5},
    "board_size_other": {"board_size": 9},  # the rows have 26 counts, not 82
    "komi_string": {"komi": "x"},
    "komi_nan": {"komi": float("nan")},
    "moves_odd_length": {"moves": "c"},
    "moves_off_board": {"moves": "zz", "num_moves": 1},
    "moves_not_a_string": {"moves": 12345},
    "moves_illegal": {"moves": "cccc", "num_moves": 2},  # the same point twice
    "num_moves_negative": {"num_moves": -1},
    "num_positions_huge": {"num_positions": 10**12},
    "result_not_a_dict": {"result": "B+R"},
    "format_version_future": {"format_version": 99},
}


@pytest.mark.parametrize("case", sorted(HOSTILE_METADATA))
def test_game_file_reader_hostile_metadata(artifacts, tmp_path, case):
    """Well-formed Arrow with forged metadata: read cleanly or refused naming the file, never a crash."""
    check_game_file(tmp_path / "game00004.arrow", _rewrite_game(artifacts["game"], HOSTILE_METADATA[case]))


def test_game_file_reader_hostile_columns(artifacts, tmp_path):
    table = pa.ipc.open_stream(artifacts["game"]).read_all()
    rows = table.num_rows
    cases = {
        "move_index_past_the_end": {"move_index": [65535] * rows},
        "visits_all_zero": {"visits": [[0] * 26] * rows},
        "value_target_out_of_range": {"value_target": [5] * rows},
        "root_value_nan": {"root_value": [float("nan")] * rows},
    }
    for name, columns in cases.items():
        path = tmp_path / f"{name}.arrow"
        check_game_file(path, _rewrite_game(artifacts["game"], columns=columns))


# ---------------------------------------------------------------------------------------------- shards
def check_shard(path: Path, data: bytes, sha256: str | None) -> None:
    """load_shard + decoding every row either works or raises ShardError naming the file."""
    path.write_bytes(data)
    url = str(path)
    with no_hang(f"shards.load_shard on {len(data)} bytes"):
        try:
            shards.read_shard_info(url)
            shard = shards.load_shard(url, sha256=sha256)
            examples = shard.rows(0, shard.num_rows)
            list(shard.iter_batches())
        except shards.ShardError as exc:
            assert url in str(exc), f"ShardError does not name the file {url}: {exc}"
            return
        except Exception as exc:  # noqa: BLE001 - the point of the test: name the unclean exception
            raise AssertionError(
                f"shard reader raised {type(exc).__name__} (not ShardError) on a damaged shard "
                f"({len(data)} bytes): {exc}"
            ) from exc
    assert sha256 is None or sha256 == shards.storage.sha256_bytes(data)
    assert examples.planes.shape[0] == len(examples)


@FUZZ
@given(data=st.data())
def test_shard_reader_mutated_with_checksum(artifacts, tmp_path, data):
    """What training does (the manifest's sha256): every damaged shard is refused."""
    good_sha = shards.storage.sha256_bytes(artifacts["shard"])
    bad = data.draw(mutated(artifacts["shard"]))
    if bad == artifacts["shard"]:
        return
    path = tmp_path / "shard000.arrow"
    path.write_bytes(bad)
    with pytest.raises(shards.ShardError, match=re.escape(str(path))):
        shards.load_shard(str(path), sha256=good_sha)


@FUZZ
@given(data=st.data())
def test_shard_reader_mutated_without_checksum(artifacts, tmp_path, data):
    in_child(check_shard, tmp_path / "shard001.arrow", data.draw(mutated(artifacts["shard"])), None)


def flip_scan(check, path: Path, good: bytes, progress: Path) -> None:
    """A single-bit flip of every byte of `good` (bits 0, 7, 0, 7, ...) through `check`, in one child process.

    Fails listing the kinds of unclean failure with the first flip of each; a native crash is reported with
    the flip that caused it (the last one started, read from the `progress` file)."""

    def scan() -> None:
        found: dict[str, tuple[int, int]] = {}
        for offset in range(len(good)):
            bit = 7 * (offset % 2)
            progress.write_text(f"{offset} {bit}")
            data = bytearray(good)
            data[offset] ^= 1 << bit
            try:
                check(path, bytes(data))
            except AssertionError as exc:
                text = str(exc)
                kind = re.sub(r"\d+", "N", text.split(":", 1)[0] + ":" + text.split(":")[-1])[:160]
                found.setdefault(kind, (offset, bit))
        if found:
            head = f"{len(found)} kinds of unclean failure over {len(good)} single-bit flips of a good file:"
            raise AssertionError(
                "\n".join([head, *(f"byte {o} bit {b}: {k}" for k, (o, b) in found.items())])
            )

    try:
        in_child(scan)
    except AssertionError as exc:
        if "crashed the process" in str(exc):
            raise AssertionError(f"{exc}, at the flip (byte, bit) = ({progress.read_text()})") from None
        raise


def test_game_file_reader_every_single_bit_flip(artifacts, tmp_path):
    flip_scan(check_game_file, tmp_path / "game00005.arrow", artifacts["game"], tmp_path / "progress")


def test_shard_reader_every_single_bit_flip(artifacts, tmp_path):
    flip_scan(lambda p, d: check_shard(p, d, None), tmp_path / "shard002.arrow", artifacts["shard"],
              tmp_path / "progress")  # fmt: skip


def test_shard_reader_foreign_files(artifacts, tmp_path):
    others = {**foreign_files(), "game": artifacts["game"], "model": artifacts["model"]}
    for name, data in others.items():
        path = tmp_path / f"{name}.arrow"
        path.write_bytes(data)
        for read in (shards.read_shard_info, shards.load_shard):
            with pytest.raises(shards.ShardError) as info:
                read(str(path))
            assert str(path) in str(info.value), f"{name}: message does not name the file: {info.value}"


# ----------------------------------------------------------------------------------------- model files
def check_model(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    url = str(path)
    with no_hang(f"model.load_model on {len(data)} bytes"):
        try:
            net = model.load_model(url, backend="torch")
        except model.ModelFileError as exc:
            assert url in str(exc), f"ModelFileError does not name the file {url}: {exc}"
            return
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(
                f"load_model raised {type(exc).__name__} (not ModelFileError) on a damaged model file "
                f"({len(data)} bytes): {exc}"
            ) from exc
    # Survived the damage (the zip's CRC does not cover everything torch reads): still a network of the shape.
    assert isinstance(net, model.DualNet) and net.cfg.board_size == 5


@FUZZ
@given(data=st.data())
def test_model_loader_mutated(artifacts, tmp_path, data):
    check_model(tmp_path / "gen0001.safetensors", data.draw(mutated(artifacts["model"])))


@FUZZ
@given(data=st.binary(max_size=2048))
def test_model_loader_random_bytes(tmp_path, data):
    check_model(tmp_path / "gen0002.safetensors", data)


def test_model_loader_foreign_files(artifacts, tmp_path):
    others = {**foreign_files(), "game": artifacts["game"], "shard": artifacts["shard"]}
    for name, data in others.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(data)
        with pytest.raises(model.ModelFileError) as info:
            model.load_model(str(path), backend="torch")
        assert str(path) in str(info.value), f"{name}: message does not name the file: {info.value}"


# ------------------------------------------------------------------------------------------- GTP server
def garbage_lines(count: int, seed: int) -> list[bytes]:
    """Random bytes, control characters, huge numbers, bad vertices, unknown commands, and real commands
    with bad arguments; never a `quit` (that would end the session early, as it should)."""
    rng = np.random.default_rng(seed)
    commands = [
        "play", "genmove", "boardsize", "komi", "undo", "showboard", "known_command", "loadsgf",
        "time_settings", "time_left", "final_score", "clear_board", "reg_genmove", "list_commands", "name",
    ]  # fmt: skip
    args = [
        "", "b", "w", "black", "WHITE", "x", "A1", "E5", "Z99", "I3", "a0", "A-1", "pass", "PASS", "resign",
        "99999999999999999999999999", "-1", "0", "1e400", "nan", "inf", "-inf", "5", "19", "25", "2", "1",
        "\x00", "\x1b[2J", "\t", "/nonexistent/file.sgf", "/etc/hostname", "%s%s%n", "\u202e", "T19", "E3 E4",
        "1 2 3", "\xff\xfe", "b C3 extra", "-0", "0x10", "1_000",
    ]  # fmt: skip
    lines: list[bytes] = []
    for _ in range(count):
        kind = rng.integers(0, 9)
        if kind == 0:
            line = rng.integers(0, 256, size=int(rng.integers(0, 80)), dtype=np.uint8).tobytes()
        elif kind == 1:
            controls = [*range(0, 32), 127]
            line = bytes(rng.choice(controls, size=int(rng.integers(1, 10))).astype(np.uint8))
        elif kind == 2:
            words = [str(rng.integers(0, 10**6)), rng.choice(commands), rng.choice(args), rng.choice(args)]
            line = " ".join(words).encode("utf-8", errors="replace")
        elif kind == 3:
            junk = "".join(chr(c) for c in rng.integers(33, 127, size=int(rng.integers(1, 20))))
            line = junk.encode()
        elif kind == 6:  # a well-formed move (legal or not): the game state churns, captures, ko
            vertex = f"{'ABCDE'[rng.integers(0, 5)]}{rng.integers(1, 6)}" if rng.random() > 0.05 else "pass"
            line = f"play {'bw'[rng.integers(0, 2)]} {vertex}".encode()
        elif kind == 7:  # the commands that walk or search the game tree
            walk = {"undo": 6, "genmove b": 1, "genmove w": 1, "reg_genmove b": 1, "komi 0.5": 2,
                    "final_score": 2, "showboard": 2, "clear_board": 4, "boardsize 5": 1}  # fmt: skip
            weights = np.array(list(walk.values()), dtype=float)
            line = str(rng.choice(list(walk), p=weights / weights.sum())).encode()
        else:
            n_args = int(rng.integers(0, 3))
            words = [str(rng.choice(commands)), *[str(rng.choice(args)) for _ in range(n_args)]]
            line = " ".join(words).encode("utf-8", errors="replace")
        line = line.replace(b"\n", b" ").replace(b"\r", b" ")
        if _is_quit(line):
            continue
        lines.append(line)
    return lines


def _is_quit(line: bytes) -> bool:
    parts = gtp_server.clean_line(line.decode("utf-8", errors="replace")).split()
    if parts and parts[0].isdigit():
        parts = parts[1:]
    return bool(parts) and parts[0] == "quit"


def split_responses(out: str) -> list[str]:
    """GTP responses: each ends with an empty line."""
    assert out.endswith("\n\n") or not out, f"output does not end with an empty line: {out[-200:]!r}"
    return [r for r in out.split("\n\n") if r] if out else []


@FUZZ
@given(line=st.text(max_size=120) | st.binary(max_size=120).map(lambda b: b.decode("latin-1")))
def test_gtp_server_any_line_gets_one_clean_answer(line):
    """In-process: any line is ignored (empty after cleaning) or answered `=`/`?`, never an internal error."""
    server = gtp_server.GTPServer(RandomPlayer(), board_size=5, log=io.StringIO())
    if _is_quit(line.encode("utf-8", errors="replace")):
        return
    response = server.handle_line(line)
    if not gtp_server.clean_line(line):
        assert response is None
        return
    assert response is not None and re.match(r"^[=?]\d* ", response) and response.endswith("\n\n")
    assert "internal error" not in response, f"line {line!r} caused {response!r}"
    assert "\n\n" not in response[:-2], f"an empty line inside one response to {line!r}: {response!r}"


def test_gtp_server_survives_10000_garbage_lines(artifacts, tmp_path):
    """`minigo gtp --model M` as a subprocess: 10,000 garbage lines, then it still plays correctly."""
    model_path = tmp_path / "gen0000.safetensors"
    model_path.write_bytes(artifacts["model"])
    lines = garbage_lines(10_000, seed=8)
    assert len(lines) >= 9_900
    final = [
        b"1001 clear_board",
        b"1002 protocol_version",
        b"1003 play b C3",
        b"1004 genmove w",
        b"1005 showboard",
        b"1006 play w C3",  # occupied: must be refused
        b"1007 quit",
    ]
    stdin = b"\n".join(lines + final) + b"\n"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "minigo_core.cli", "gtp", "--model", str(model_path), "--readouts", "8"],
        input=stdin,
        capture_output=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    out = proc.stdout.decode("utf-8", errors="replace")
    err = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == 0, f"minigo gtp exited {proc.returncode}; stderr tail:\n{err[-3000:]}"
    assert "Traceback" not in out, f"a traceback on stdout:\n{out[out.index('Traceback') - 200 :][:2000]}"
    responses = split_responses(out)
    commands = sum(1 for ln in lines if gtp_server.clean_line(ln.decode("utf-8", errors="replace")))
    expected = commands + len(final)
    assert len(responses) == expected, f"{len(responses)} responses to {expected} commands"
    bad = [r for r in responses if not re.match(r"^[=?]\d*( |$)", r)]
    assert not bad, f"{len(bad)} responses are not `=`/`?` answers, e.g. {bad[:3]!r}"
    internal = [r for r in responses if "internal error" in r]
    assert not internal, f"{len(internal)} garbage lines hit an internal error, e.g. {internal[:3]!r}"

    answers = {
        int(m.group(2)): (m.group(1), m.group(3))
        for m in (re.match(r"^([=?])(\d+) ?(.*)$", r, re.S) for r in responses[-len(final) :])
        if m
    }
    assert answers[1001] == ("=", ""), answers.get(1001)
    assert answers[1002] == ("=", "2"), answers.get(1002)
    assert answers[1003] == ("=", ""), answers.get(1003)
    status, move = answers[1004]
    assert status == "=" and re.fullmatch(r"[A-E][1-5]|pass|resign", move, re.I), answers[1004]
    assert move.upper() != "C3", "genmove answered an occupied point"
    status, board = answers[1005]
    assert status == "="
    rows = [ln for ln in board.splitlines() if re.match(r"^\s*\d+ ", ln)]
    assert len(rows) == 5, f"showboard does not show a 5x5 board:\n{board}"
    row3 = rows[5 - 3].split()
    assert row3[1 + 2] == "X", f"showboard does not show Black's stone at C3:\n{board}"
    stones = sum(r.split()[1:6].count("O") for r in rows)
    expected_white = 0 if move.lower() in ("pass", "resign") else 1
    assert stones == expected_white, f"White's genmove is not on the board:\n{board}"
    assert answers[1006][0] == "?", f"play on an occupied point was accepted: {answers[1006]}"
    assert answers[1007] == ("=", "")
