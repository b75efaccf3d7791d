"""The game file: round trip, training examples rebuilt from moves, rejection of bad files."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pytest

from minigo_core.data.gamefile import (
    FORMAT_VERSION,
    GameFileError,
    decode_moves,
    encode_moves,
    game_bytes,
    read_game,
    read_metadata,
    write_game,
)
from minigo_core.game import features, go


@pytest.mark.parametrize("board_size", [9, 19])
def test_round_trip(tmp_path, board_size, make_record):
    record = make_record(board_size)
    url = str(tmp_path / "games" / "game00001.arrow")
    size = write_game(url, record)
    assert size == (tmp_path / "games" / "game00001.arrow").stat().st_size
    back = read_game(url)
    assert back.moves == record.moves
    np.testing.assert_array_equal(back.move_index, record.move_index)
    np.testing.assert_array_equal(back.visits, record.visits)
    np.testing.assert_array_equal(back.value_target, record.value_target)
    np.testing.assert_array_equal(back.full_search, record.full_search)
    np.testing.assert_array_equal(back.root_value, record.root_value)
    for key, value in record.metadata.items():
        assert back.metadata[key] == value
    assert back.metadata["num_moves"] == len(record.moves)
    assert back.metadata["num_positions"] == record.num_positions
    assert read_metadata(url)["num_positions"] == record.num_positions
    assert game_bytes(back) == game_bytes(record)
    assert [p.name for p in (tmp_path / "games").iterdir()] == ["game00001.arrow"]


def test_large_visit_counts_round_trip(tmp_path, make_record):
    record = make_record()
    record.visits[0, 0] = 70000  # beyond uint16
    url = str(tmp_path / "g.arrow")
    write_game(url, record)
    assert read_game(url).visits[0, 0] == 70000


def test_move_encoding():
    moves = [(0, 0), None, (18, 18), (3, 17), None]
    assert decode_moves(encode_moves(moves, 19), 19) == moves
    assert encode_moves([(0, 2), None], 9) == "catt"
    with pytest.raises(ValueError):
        decode_moves("jj", 9)


def test_training_examples_rebuild_features(tmp_path, make_record):
    record = make_record(9)
    url = str(tmp_path / "g.arrow")
    write_game(url, record)
    back = read_game(url)
    positions = go.replay(record.moves, 9, 7.5)
    for feature_set in ("agz", "mlperf07"):
        planes, pi, z = back.training_examples(feature_set)
        assert planes.dtype == np.uint8 and pi.dtype == np.float32 and z.dtype == np.float32
        assert planes.shape == (record.num_positions, features.num_planes(feature_set), 9, 9)
        for i, k in enumerate(record.move_index):
            np.testing.assert_array_equal(planes[i], features.extract(positions[k], feature_set))
            assert z[i] == record.metadata["result"]["winner"] * positions[k].to_play
        np.testing.assert_allclose(pi.sum(axis=1), 1.0, rtol=1e-6)
        np.testing.assert_allclose(pi, record.visits / record.visits.sum(1, keepdims=True), rtol=1e-6)


def _arrow_stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _bad_files(good: bytes) -> dict[str, bytes]:
    other_arrow = _arrow_stream(pa.table({"x": [1, 2, 3]}))
    file_format = io.BytesIO()
    with pa.ipc.new_file(file_format, pa.schema([("x", pa.int8())])) as w:
        w.write_table(pa.table({"x": pa.array([1], pa.int8())}))
    schema = pa.ipc.open_stream(good).schema
    meta = json.loads(schema.metadata[b"minigo"])
    meta["format_version"] = 99
    table = pa.ipc.open_stream(good).read_all()
    newer = _arrow_stream(table.replace_schema_metadata({b"minigo": json.dumps(meta).encode()}))
    meta["format_version"] = FORMAT_VERSION  # readable again: only the positions count is wrong
    meta["num_positions"] += 1
    inconsistent = _arrow_stream(table.replace_schema_metadata({b"minigo": json.dumps(meta).encode()}))
    return {
        "empty": b"",
        "truncated-half": good[: len(good) // 2],
        "truncated-tail": good[:-3],
        "truncated-head": good[:6],
        "text": b"this is not a game file\n",
        "sgf": b"(;GM[1]FF[4]SZ[9];B[cc])",
        "foreign-arrow": other_arrow,
        "arrow-file-format": file_format.getvalue(),
        "newer-version": newer,
        "inconsistent": inconsistent,
        "corrupt-middle": good[:200] + bytes(64) + good[264:],
    }


def test_reader_rejects_bad_files_naming_them(tmp_path, make_record):
    good = game_bytes(make_record())
    for name, data in _bad_files(good).items():
        path = tmp_path / f"{name}.arrow"
        path.write_bytes(data)
        with pytest.raises(GameFileError) as excinfo:
            read_game(str(path))
        assert str(path) in str(excinfo.value), name
        assert isinstance(excinfo.value, ValueError)
    with pytest.raises(GameFileError, match="does not exist"):
        read_game(str(tmp_path / "missing.arrow"))


def test_reader_error_messages_say_what_is_wrong(tmp_path, make_record):
    good = game_bytes(make_record())
    cases = {
        "empty": "empty",
        "truncated-tail": "truncated",
        "text": "not a MiniGo game file",
        "foreign-arrow": "not a MiniGo game file",
        "newer-version": "format version 99; this software reads versions 2",
    }
    bad = _bad_files(good)
    for name, phrase in cases.items():
        path = tmp_path / f"{name}.arrow"
        path.write_bytes(bad[name])
        with pytest.raises(GameFileError, match=phrase):
            read_game(str(path))


def test_write_through_fsspec_memory_filesystem(make_record):
    record = make_record()
    url = "memory://run/games/gen0000/game00000.arrow"
    write_game(url, record)
    assert read_game(url).moves == record.moves
