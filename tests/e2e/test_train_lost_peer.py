"""A training rank whose peer is lost mid-training does not wait for ever: it fails naming the step, the lost
rank and its node, and the process group's timeout.

Two ranks of `minigo train` started by hand (`--rank R --world-size 2`: no launcher that would stop rank 0
when rank 1 dies, as `srun --kill-on-bad-exit` or `--ranks 2` do), on a window long enough to be mid-training
when rank 1 is hit: killed (its connections close: rank 0 fails at once), or stopped with SIGSTOP (silent, as
a peer on a node that lost power: rank 0 fails after its `--timeout` of a few seconds). Node loss through
Slurm: tests/cluster/test_slurm_node_loss.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigo_core.cluster.slurm import free_port
from minigo_core.data import layout
from minigo_core.nn.peers import PEER_LOST

REPO = Path(__file__).resolve().parents[2]
BOARD = 5
TIMEOUT_S = 4  # the ranks' --timeout


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, training_inputs) -> dict:
    """Generation 0 (a random model, synthetic games) and generation 1's window; thousands of steps (a replay
    ratio of 400), far longer than the tests wait."""
    run = {
        "board_size": BOARD,
        "seed": 3,
        "model": {"blocks": 1, "filters": 8, "fc_width": 8, "backend": "torch"},
        "window": {"generations": 1, "sample_fraction": 1.0},
        "train": {"ranks": 2, "batch_per_rank": 8, "checkpoint_every": 1000, "backend": "torch",
                  "threads_per_rank": 1, "prefetch_batches": 2, "replay_ratio": 400.0,
                  "learning_rate": [[0, 0.01]]},
    }  # fmt: skip
    return training_inputs(tmp_path_factory.mktemp("lost_peer"), run, games=8, max_moves=30)


def _start_ranks(prepared: dict, work: Path) -> list[subprocess.Popen]:
    port = free_port()
    ranks = []
    for rank in (0, 1):
        argv = [sys.executable, "-m", "minigo_core.jobs.train", "--config", prepared["config"],
                "--generation", "1", "--window-dir", prepared["window"], "--parent", prepared["parent"],
                "--out", str(work / "gen0001.safetensors"), "--work-dir", str(work), "--no-wall-time",
                "--rank", str(rank), "--world-size", "2", "--master-addr", "127.0.0.1", "--master-port",
                str(port), "--timeout", str(TIMEOUT_S)]  # fmt: skip
        ranks.append(
            subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    return ranks


def _training(work: Path, ranks: list[subprocess.Popen]) -> None:
    """Wait until the ranks train (rank 0's first `step` record)."""
    deadline = time.monotonic() + 120
    metrics = work / layout.METRICS
    while time.monotonic() < deadline and all(r.poll() is None for r in ranks):
        if metrics.exists() and '"event": "step"' in metrics.read_text():
            return
        time.sleep(0.05)
    pytest.fail(f"the ranks never trained: {[r.poll() for r in ranks]}")


@pytest.mark.parametrize("hit", ["killed", "silent"])
def test_rank_0_names_its_lost_peer_and_the_timeout_instead_of_waiting(prepared, tmp_path, hit):
    ranks = _start_ranks(prepared, tmp_path)
    try:
        _training(tmp_path, ranks)
        os.kill(ranks[1].pid, signal.SIGKILL if hit == "killed" else signal.SIGSTOP)
        hit_at = time.monotonic()
        ranks[0].wait(timeout=TIMEOUT_S + 60)
        waited = time.monotonic() - hit_at
    finally:
        for r in ranks:
            if r.poll() is None:
                r.kill()
            r.wait()
    out = ranks[0].stdout.read()
    assert ranks[0].returncode == PEER_LOST, out[-3000:]  # not aborted at its exit (nn/peers.py)
    assert "rank 0 of 2 on node" in out and f"it waits at most {TIMEOUT_S} s" in out  # named at the start
    assert "rank 0 of 2 (node " in out and ": the all-reduce of step " in out, out[-3000:]
    assert "a peer (rank 1 on node " in out and f"timeout of {TIMEOUT_S} s" in out, out[-3000:]
    if hit == "silent":  # nothing closed: the timeout ended the wait
        assert TIMEOUT_S - 1 < waited < TIMEOUT_S + 30, waited
    else:  # its connections closed: at once
        assert waited < TIMEOUT_S + 30, waited
    assert not (tmp_path / "gen0001.safetensors").exists()
