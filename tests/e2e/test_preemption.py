"""Preemption and time limits: SIGTERM, as Slurm sends it, to a self-play job and to a training job.

A self-play job stops within seconds, exit 143, its finished game files whole; the same command again keeps
them and plays the rest. A training job (2 local ranks; SIGTERM to the launcher, which passes it on, or to one
rank alone) stops every rank at the next step boundary with a checkpoint, exit 143; the same command again
resumes from it. Each ends byte-identical to the same job undisturbed (the game files; the model file and
its metrics as `minigo_core.data.compare` compares them). Through Slurm (`scancel --signal=TERM`):
tests/cluster/test_slurm_preemption.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigo_core.base import config
from minigo_core.data import compare, gamefile, layout, storage
from minigo_core.nn import model

REPO = Path(__file__).resolve().parents[2]
GAMES = 8
EXIT_LIMIT_S = 15  # a job must be gone this long after SIGTERM (a scheduler's grace time is longer)
PREEMPT = {
    # one job of 8 games, long enough (600 readouts) that a SIGTERM lands between the first and last game
    "selfplay": {"games": GAMES, "games_per_job": GAMES, "readouts": 600, "fast_readouts": 300},
    # ~70 steps, no periodic checkpoint: the only checkpoint is the one SIGTERM makes
    "train": {"replay_ratio": 10.0, "checkpoint_every": 100000},
}


def minigo(*args: str) -> list[str]:
    return [sys.executable, "-m", "minigo_core.cli", *args]


def no_temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(f"{storage.TMP_PREFIX}*")]


@pytest.fixture(scope="module")
def run(tmp_path_factory, write_config):
    """A root with model 0, an undisturbed self-play job of GAMES games, its window, and the undisturbed
    training job of generation 1 (its model and metrics kept as bytes, the files removed)."""
    base = tmp_path_factory.mktemp("preempt")
    cfg_path = write_config(base, PREEMPT, name="config.yaml")
    cfg = config.load_config(str(cfg_path))
    model_url = layout.model_path(cfg.root, 0)
    model.save_model(model_url, model.random_model(model.ModelConfig.from_run(cfg), seed=cfg.seed), {})
    selfplay = _selfplay_argv(cfg_path, model_url, layout.game_path_pattern(cfg.root, 0))
    done = subprocess.run(selfplay, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    window_dir = layout.window_dir(cfg.root, 1)
    argv = minigo("window", "--config", str(cfg_path), "--generation", "1", "--out-dir", window_dir)
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    train = minigo("train", "--config", str(cfg_path), "--generation", "1", "--window-dir", window_dir,
                   "--parent", model_url, "--out", layout.model_path(cfg.root, 1), "--ranks", "2",
                   "--work-dir", layout.train_dir(cfg.root, 1), "--no-wall-time")  # fmt: skip
    done = subprocess.run(train, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = {
        "model": Path(layout.model_path(cfg.root, 1)).read_bytes(),
        "metrics": Path(layout.train_metrics_path(cfg.root, 1)).read_bytes(),
        "games": {g: Path(layout.game_path(cfg.root, 0, g)).read_bytes() for g in range(GAMES)},
    }
    records = storage.read_json_lines(layout.train_metrics_path(cfg.root, 1))
    steps = [r["step"] for r in records if "step" in r]
    assert max(steps) >= 40, f"the training job is too short to be stopped in its middle: {steps}"
    return {"base": base, "config": cfg_path, "cfg": cfg, "model": model_url, "train": train,
            "reference": reference}  # fmt: skip


def _selfplay_argv(cfg_path: Path, model_url: str, pattern: str, record: str | None = None) -> list[str]:
    argv = minigo("selfplay", "--config", str(cfg_path), "--model", model_url, "--generation", "0",
                  "--game", "0", "--count", str(GAMES), "--out", pattern)  # fmt: skip
    return argv + (["--record", record] if record else [])


def _terminate(proc: subprocess.Popen, pid: int | None = None) -> tuple[int, float, str, str]:
    """SIGTERM to `pid` (default: the process), then (exit code, seconds to exit, stdout, stderr)."""
    t0 = time.monotonic()
    os.kill(pid or proc.pid, signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 60 s after SIGTERM:\n{err[-3000:]}")
    return proc.returncode, time.monotonic() - t0, out, err


def _wait_for(predicate, proc: subprocess.Popen, what: str, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate()
            pytest.fail(f"{what} never happened (exit {proc.returncode}):\n{out[-2000:]}\n{err[-2000:]}")
        time.sleep(0.01)


def test_sigterm_to_a_selfplay_job_keeps_its_finished_games(run, tmp_path):
    out_dir = tmp_path / "games"
    argv = _selfplay_argv(run["config"], run["model"], str(out_dir / "game{game:05d}.arrow"),
                          str(out_dir / "job00000.json"))  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    _wait_for(lambda: any(out_dir.glob("game*.arrow")), proc, "a first game file")
    code, seconds, _, err = _terminate(proc)
    written = sorted(int(p.stem[4:]) for p in out_dir.glob("game*.arrow"))
    assert code == 143, f"exit {code} after SIGTERM (143 makes Snakemake/Slurm retry it):\n{err[-3000:]}"
    assert seconds < EXIT_LIMIT_S, f"the job took {seconds:.1f} s to stop"
    assert "stopped by SIGTERM" in err and f"{len(written)} of its {GAMES} game files are written" in err, err
    assert 1 <= len(written) < GAMES, f"the SIGTERM did not land between the first and last game: {written}"
    assert not (out_dir / "job00000.json").exists() and not no_temporaries(tmp_path)
    for g in written:  # whole files: the reference's bytes
        assert (out_dir / f"game{g:05d}.arrow").read_bytes() == run["reference"]["games"][g]

    retry = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert retry.returncode == 0, retry.stderr[-3000:]
    assert f"kept {len(written)} game files of an earlier attempt" in retry.stdout, retry.stdout[-3000:]
    record = json.loads((out_dir / "job00000.json").read_text())
    assert record["attempt"]["kept_from_earlier_attempt"] == written
    for g in range(GAMES):
        assert gamefile.read_game(str(out_dir / f"game{g:05d}.arrow")) is not None
        assert (out_dir / f"game{g:05d}.arrow").read_bytes() == run["reference"]["games"][g], f"game {g}"


def _rank_pid(launcher: int, rank: int) -> int | None:
    try:
        children = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()
    except OSError:
        return None
    for child in children:
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "--rank" in argv and argv[argv.index("--rank") + 1] == str(rank):
            return int(child)
    return None


@pytest.mark.parametrize("target", ["launcher", "rank1"])
def test_sigterm_to_a_training_job_checkpoints_and_the_rerun_resumes(run, target):
    """SIGTERM to the launcher (it passes it on to the ranks) or to rank 1 alone (rank 0 learns of it in
    the step's all-reduce): every rank stops at the same step boundary, rank 0 writing the checkpoint."""
    cfg = run["cfg"]
    work = Path(layout.train_dir(cfg.root, 1))
    out = Path(layout.model_path(cfg.root, 1))
    shutil.rmtree(work, ignore_errors=True)
    out.unlink(missing_ok=True)
    proc = subprocess.Popen(run["train"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    metrics = work / "metrics.jsonl"
    _wait_for(lambda: metrics.exists() and '"step": 20,' in metrics.read_text(), proc, "step 20")
    code, seconds, _, err = _terminate(proc, None if target == "launcher" else _rank_pid(proc.pid, 1))
    assert code != 0 and seconds < EXIT_LIMIT_S, f"exit {code} {seconds:.1f} s after SIGTERM:\n{err[-3000:]}"
    if target == "launcher":
        assert code == 143, err[-3000:]
    stopped = [line for line in err.splitlines() if "(SIGTERM: a preemption or a time limit)" in line]
    assert len(stopped) == 1 and "rank 0" in stopped[0], f"rank 0 did not checkpoint:\n{err[-3000:]}"
    assert (work / "checkpoint.pt").exists() and not out.exists()
    assert not no_temporaries(run["base"])

    retry = subprocess.run(run["train"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert retry.returncode == 0, retry.stderr[-3000:]
    assert "resuming from" in retry.stderr, retry.stderr[-3000:]
    assert out.read_bytes() == run["reference"]["model"], "the resumed model differs from the undisturbed one"
    rel = "train/gen0001/metrics.jsonl"
    assert compare.same_bytes(rel, metrics.read_bytes(), run["reference"]["metrics"]), "metrics differ"
