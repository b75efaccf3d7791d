"""Atomic writes on the shared filesystem: no half-written file under a final name, racing writers."""

from __future__ import annotations

import multiprocessing as mp
import os

import pytest

from minigo_core.data import layout, storage


def test_atomic_write_and_read(tmp_path):
    url = str(tmp_path / "a" / "b" / "file.bin")
    storage.write_bytes(url, b"hello")
    assert storage.read_bytes(url) == b"hello"
    assert os.listdir(tmp_path / "a" / "b") == ["file.bin"]


def test_failed_write_leaves_nothing(tmp_path):
    url = str(tmp_path / "out.bin")
    with pytest.raises(RuntimeError):
        with storage.atomic_open(url) as handle:
            handle.write(b"partial")
            raise RuntimeError("killed mid-write")
    assert os.listdir(tmp_path) == []


def test_temporary_names_are_skipped_by_listing(tmp_path):
    storage.write_bytes(str(tmp_path / "game00001.arrow"), b"x")
    (tmp_path / f"{storage.TMP_PREFIX}game00002.arrow.123.abcd").write_bytes(b"half")
    assert storage.list_files(str(tmp_path), ".arrow") == [str(tmp_path / "game00001.arrow")]


def _writer(url: str, payload: bytes, rounds: int) -> None:
    for _ in range(rounds):
        storage.write_bytes(url, payload)


def test_racing_writers_leave_one_complete_file(tmp_path):
    """A retry and a straggler writing the same output: whichever wins, the file is whole."""
    url = str(tmp_path / "model.safetensors")
    payloads = [bytes([i]) * 200_000 for i in (1, 2)]
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(url, p, 20)) for p in payloads]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    data = storage.read_bytes(url)
    assert data in payloads
    assert os.listdir(tmp_path) == ["model.safetensors"]


def test_run_layout_paths():
    assert layout.game_path("r", 7, 42) == "r/games/gen0007/game00042.arrow"
    assert layout.model_path("r/", 3) == "r/models/gen0003.safetensors"
    assert layout.shard_path("r", 8, 3) == "r/window/gen0008/shard003.arrow"


def test_a_retry_removes_what_killed_writers_left(tmp_path):
    # by name (the temporaries of given files), or every one in a directory the job owns; finished files stay
    (tmp_path / "own").mkdir()
    for name in ("model.bin", ".tmp-model.bin.77.deadbeef", ".tmp-other.bin.78.deadbeef", "other.bin"):
        (tmp_path / name).write_bytes(b"x")
    for name in ("checkpoint.pt", ".tmp-checkpoint.pt.79.deadbeef", ".tmp-metrics.jsonl.80.cafe0000"):
        (tmp_path / "own" / name).write_bytes(b"x")
    removed = storage.remove_stale_temporaries([str(tmp_path / "model.bin")])
    assert removed == [str(tmp_path / ".tmp-model.bin.77.deadbeef")]
    assert sorted(os.listdir(tmp_path)) == [".tmp-other.bin.78.deadbeef", "model.bin", "other.bin", "own"]
    assert len(storage.remove_temporaries_in(str(tmp_path / "own"))) == 2
    assert os.listdir(tmp_path / "own") == ["checkpoint.pt"]
    assert storage.remove_temporaries_in(str(tmp_path / "missing")) == []
