"""A full disk (ENOSPC) under every writer: game files and a self-play job, window shards, checkpoints,
models and training metrics, packs, JSON. Each writer fails naming the file and "no space left on device",
leaves no temporary or partial file, and the same call succeeds once space is freed (a self-play job keeping
the games written before the disk filled).

The full disk is a tmpfs of a few hundred KB (root only: CI runs as root; skipped otherwise) filled by a
filler file to a chosen number of free bytes. The whole run on a full disk is tests/e2e/test_disk_full_run.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minigo_core.base import config
from minigo_core.base.runtime import Runtime
from minigo_core.data import gamefile, layout, pack, storage, window
from minigo_core.nn import model
from minigo_core.selfplay import selfplay_job

REPO = Path(__file__).resolve().parents[2]
FS_KB = 512
GAMES = 3


class SmallDisk:
    """A size-limited tmpfs at `path`; `fill(free)` leaves `free` bytes, `free_up()` deletes the filler."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler"

    def fill(self, free: int = 0) -> None:
        with open(self.filler, "ab", buffering=0) as handle:
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * 65536)
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * 512)
        size = self.filler.stat().st_size
        os.truncate(self.filler, max(0, size - free))

    def free_up(self) -> None:
        self.filler.unlink(missing_ok=True)

    def files(self) -> list[str]:
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if p != self.filler)


@pytest.fixture()
def disk(tmp_path, unavailable):
    if os.geteuid() != 0:
        unavailable("a size-limited tmpfs needs root to mount")
    path = tmp_path / "small"
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={FS_KB}k", "tmpfs", str(path)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode:
        unavailable(f"cannot mount a tmpfs at {path}: {proc.stderr.strip()}")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def assert_disk_full(exc: BaseException, path: str) -> None:
    message = str(exc)
    assert isinstance(exc, storage.DiskFullError) and exc.errno == errno.ENOSPC, repr(exc)
    assert path in message and "no space left on device" in message, message
    assert "free space" in message.lower() and "rerun the same command" in message, message


def no_temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(f"{storage.TMP_PREFIX}*")]


@pytest.fixture(scope="module")
def played(tmp_path_factory, write_config):
    """A tiny run root with a random generation-0 model and GAMES games of generation 0 (one job)."""
    base = tmp_path_factory.mktemp("played")
    cfg_path = write_config(base, {"selfplay": {"games": GAMES, "games_per_job": GAMES}}, name="config.yaml")
    cfg = config.load_config(str(cfg_path))
    model_url = layout.model_path(cfg.root, 0)
    model.save_model(model_url, model.random_model(model.ModelConfig.from_run(cfg), seed=cfg.seed), {})
    job = _job(cfg, str(cfg_path), model_url, layout.game_path_pattern(cfg.root, 0))
    selfplay_job.run_job(job)
    games = {g: Path(job.out(g)).read_bytes() for g in job.games}
    return {"config": cfg_path, "cfg": cfg, "model": model_url, "games": games}


def _job(cfg, cfg_path: str, model_url: str, pattern: str) -> selfplay_job.SelfplayJob:
    games = selfplay_job.JobGames(generation=0, first_game=0, count=GAMES, out=pattern)
    return selfplay_job.open_job(cfg, games, config=cfg_path, model=model_url, backend="dsp",
                                 runtime=Runtime(), engine_name="compiled", start=0.0)  # fmt: skip


# ------------------------------------------------------------------------------------------ every writer
def test_an_atomic_write_on_a_full_disk_names_the_file_and_leaves_nothing(disk):
    """storage.write_bytes/write_text: JSON, job records, match files, markers, the effective config."""
    url = str(disk.path / "eval" / "vs_gen0.json")
    disk.fill(free=4096)
    with pytest.raises(storage.DiskFullError) as info:
        storage.write_bytes(url, b"x" * 100_000)
    assert_disk_full(info.value, url)
    assert disk.files() == ["eval"], disk.files()
    disk.free_up()
    storage.write_bytes(url, b"x" * 100_000)  # the same call, once space is freed
    assert Path(url).stat().st_size == 100_000


def test_a_game_file_on_a_full_disk(disk, played):
    record = gamefile.read_game(layout.game_path(played["cfg"].root, 0, 0))
    url = str(disk.path / "game00000.arrow")
    disk.fill()
    with pytest.raises(storage.DiskFullError) as info:
        gamefile.write_game(url, record)
    assert_disk_full(info.value, url)
    assert disk.files() == []


def test_a_selfplay_job_keeps_the_games_written_before_the_disk_filled(disk, played, monkeypatch, capsys):
    cfg, pattern = played["cfg"], str(disk.path / "game{game:05d}.arrow")
    say_written = selfplay_job._say_written

    def fill_after_the_first_game(*args, **kwargs):
        say_written(*args, **kwargs)
        disk.fill()

    monkeypatch.setattr(selfplay_job, "_say_written", fill_after_the_first_game)
    job = _job(cfg, str(played["config"]), played["model"], pattern)
    with pytest.raises(storage.DiskFullError) as info:
        selfplay_job.run_job(job)
    (first,) = job.files  # the game that ended first was written, the next write failed
    assert_disk_full(info.value, info.value.path)
    assert disk.files() == [f"game{first:05d}.arrow"], disk.files()

    monkeypatch.setattr(selfplay_job, "_say_written", say_written)
    disk.free_up()
    retry = _job(cfg, str(played["config"]), played["model"], pattern)
    selfplay_job.run_job(retry)  # the same job again: keeps the written game, plays the others
    assert retry.kept == [first]
    assert f"kept 1 game files of an earlier attempt: {first}" in capsys.readouterr().out
    for g, data in played["games"].items():
        assert (disk.path / f"game{g:05d}.arrow").read_bytes() == data, f"game {g} differs"


def test_window_shards_on_a_full_disk(disk, played):
    cfg = played["cfg"]
    reference = window.build_window(cfg, 1, str(Path(cfg.root) / "window-reference"))
    out_dir = str(disk.path / "window")
    disk.fill()
    with pytest.raises(storage.DiskFullError) as info:
        window.build_window(cfg, 1, out_dir)
    assert_disk_full(info.value, info.value.path)
    assert info.value.path.startswith(out_dir + "/shard"), info.value.path
    assert not (Path(out_dir) / "manifest.json").exists()
    assert not no_temporaries(disk.path)
    disk.free_up()
    manifest = window.build_window(cfg, 1, out_dir)
    assert [s["sha256"] for s in manifest["shards"]] == [s["sha256"] for s in reference["shards"]]


def test_a_checkpoint_a_model_and_the_metrics_on_a_full_disk(disk, played):
    from minigo_core.nn import train_job, training

    cfg = played["cfg"]
    trainer = training.Trainer.from_parent(played["model"], cfg.train, seed=1, local_rank=0, world=1)
    checkpoint, model_url = str(disk.path / "checkpoint.pt"), str(disk.path / "gen0001.safetensors")
    metrics = str(disk.path / "metrics.jsonl")
    disk.fill()
    with pytest.raises(storage.DiskFullError) as info:
        trainer.save_checkpoint(checkpoint, {"generation": 1}, 5, [])
    assert_disk_full(info.value, checkpoint)
    with pytest.raises(storage.DiskFullError) as info:
        trainer.save_model(model_url, {"generation": 1})
    assert_disk_full(info.value, model_url)
    with pytest.raises(storage.DiskFullError) as info:
        train_job._append_metrics(metrics, {"event": "step", "padding": "x" * 10_000})
    assert_disk_full(info.value, metrics)
    assert disk.files() in ([], ["metrics.jsonl"]), disk.files()  # a cut-off line is skipped by its readers
    assert storage.read_json_lines(metrics) == []
    disk.free_up()
    trainer.save_checkpoint(checkpoint, {"generation": 1}, 5, [])
    assert trainer.resume(checkpoint, {"generation": 1}, note=print).step == 5


def test_a_pack_on_a_full_disk(disk, played):
    root = played["cfg"].root
    members = []
    for g, data in played["games"].items():
        rel = pack.rel_path(layout.game_path("", 0, g))
        members.append(pack.Member("game", rel, len(data), storage.sha256_bytes(data), 0.0, data))
    url = str(disk.path / "gen0000.pack.arrow")
    disk.fill(free=4096)
    with pytest.raises(storage.DiskFullError) as info:
        pack.write_pack(url, 0, members)
    assert_disk_full(info.value, url)
    assert disk.files() == []
    disk.free_up()
    pack.write_pack(url, 0, members)
    assert pack.open_pack(url) is not None and Path(root).exists()


def test_a_command_on_a_full_disk_says_what_to_do(disk, played):
    out = str(disk.path / "game00007.arrow")
    disk.fill()
    argv = ["selfplay", "--config", str(played["config"]), "--model", played["model"], "--generation", "0",
            "--game", "7", "--out", out]  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "minigo_core.cli", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"cannot write {out}: no space left on device" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert disk.files() == []
