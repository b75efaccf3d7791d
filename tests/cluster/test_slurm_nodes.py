"""Training across two Slurm nodes (slurm_cluster.py's node1 and node2 on this machine): a rank dies.

A 2-rank `minigo train` runs as the two tasks of one `srun -N 2 --ntasks-per-node 1 --kill-on-bad-exit=1` step
inside an `sbatch --wait` job of 2 nodes, as the train rule starts it under the Slurm profile with
`--set-resources train:nodes=2`. The ranks meet at the TCP store that rank 0 hosts on node1 (node names do
not resolve here: the address comes from `scontrol show node node1`). The rank on node2 is SIGKILLed once
training is under way: the job must fail in bounded time, leave no model, and a new job (a retry, with a new
job id and so a new store port) must succeed. Skipped like test_slurm.py where there is no Slurm.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigo_core.data import layout
from minigo_core.nn import model

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slurm, pytest.mark.slow]
BOARD = 9
FAIL_LIMIT_S = 120  # a dead rank must fail the job well within this


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, training_inputs) -> dict:
    """Generation 0 (a random model and synthetic games) and generation 1's window: ~55 training steps of a
    4x64 net, about 10 s on this machine, long enough to kill a rank mid-training."""
    run = {
        "board_size": BOARD,
        "seed": 3,
        "model": {"blocks": 4, "filters": 64, "fc_width": 32, "backend": "torch"},
        "window": {"generations": 1, "sample_fraction": 0.3},
        "train": {"ranks": 2, "batch_per_rank": 16, "checkpoint_every": 20, "backend": "torch",
                  "threads_per_rank": 1, "prefetch_batches": 2, "learning_rate": [[0, 0.02]]},
    }  # fmt: skip
    return training_inputs(tmp_path_factory.mktemp("nodes"), run, games=60, max_moves=100)


def _submit(cluster, prepared: dict, name: str) -> subprocess.Popen:
    """`sbatch --wait` of a 2-node job whose srun step runs the 2 ranks, one per node."""
    base = prepared["base"]
    train = [sys.executable, "-m", "minigo_core.jobs.train", "--config", prepared["config"],
             "--generation", "1", "--window-dir", prepared["window"], "--parent", prepared["parent"], "--out",
             str(base / "gen0001.safetensors"), "--work-dir", str(base / "work"), "--no-wall-time",
             "--timeout", "60"]  # fmt: skip
    step = "srun -N 2 -n 2 --ntasks-per-node 1 -c 1 --kill-on-bad-exit=1 " + shlex.join(train)
    sbatch = ["sbatch", "--wait", "--parsable", "-J", name, "-N", "2", "-n", "2", "--ntasks-per-node", "1",
              "-c", "1", "--mem-per-cpu", "1000", "-t", "10", "-D", str(REPO),
              "-o", str(base / f"{name}.log"), "--wrap", step]  # fmt: skip
    return subprocess.Popen(
        sbatch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env
    )


def _train_ranks() -> dict[int, str]:
    """pid -> SLURMD_NODENAME of every `minigo_core.jobs.train` process started by Slurm on this machine."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"minigo_core.jobs.train" not in argv:
            continue
        node = next((e.split(b"=", 1)[1] for e in environ if e.startswith(b"SLURMD_NODENAME=")), None)
        if node is not None:
            found[int(proc.name)] = node.decode()
    return found


def _started(work: Path) -> dict | None:
    """Rank 0's `start` record (written once every rank has joined), or None."""
    try:
        lines = (work / layout.METRICS).read_text().splitlines()
    except OSError:
        return None
    return next((r for r in map(json.loads, lines) if r["event"] == "start"), None)


def test_rank_killed_on_node2_fails_the_job_in_bounded_time_then_retry_succeeds(cluster, prepared):
    base, work = prepared["base"], prepared["base"] / "work"
    out = base / "gen0001.safetensors"
    job = _submit(cluster, prepared, "train-kill")
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and job.poll() is None and _started(work) is None:
            time.sleep(0.05)
        start = _started(work)
        assert start is not None, f"training never started:\n{(base / 'train-kill.log').read_text()[-3000:]}"
        assert start["nodes"] == ["node1", "node2"], start  # one rank on each node
        victims = [pid for pid, node in _train_ranks().items() if node == "node2"]
        assert len(victims) == 1 and job.poll() is None, (victims, job.poll())
        os.kill(victims[0], signal.SIGKILL)
        killed_at = time.monotonic()
        try:
            job.wait(timeout=FAIL_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the job still runs {FAIL_LIMIT_S} s after its rank on node2 was killed (a hang)")
        waited = time.monotonic() - killed_at
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    log = (base / "train-kill.log").read_text()
    assert job.returncode != 0, f"the job succeeded though a rank was killed:\n{log[-3000:]}"
    assert waited < FAIL_LIMIT_S
    assert not out.exists(), "a failed training job left a model file"
    assert not _train_ranks(), "a rank outlived its failed job"
    print(f"job failed {waited:.1f} s after the kill")

    retry = _submit(cluster, prepared, "train-retry")
    stdout, stderr = retry.communicate(timeout=300)
    log = (base / "train-retry.log").read_text()
    assert retry.returncode == 0, f"the retry failed: {stderr}\n{log[-3000:]}"
    net = model.load_model(str(out), backend="torch")
    assert net.provenance["ranks"] == 2 and net.cfg.board_size == BOARD
    starts = [
        r for r in map(json.loads, (work / layout.METRICS).read_text().splitlines()) if r["event"] == "start"
    ]
    assert len(starts) == 2 and starts[-1]["nodes"] == ["node1", "node2"]
    assert "on node node2 joined at 127.0.0.1:" in log  # node2's rank reached node1's store by its NodeAddr
