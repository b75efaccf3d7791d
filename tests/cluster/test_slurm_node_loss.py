"""A node lost under a run (slurm_cluster.py's node2, `lose_node`): the run finishes on node1, the same run.

The tiny config with one generation, run through `profiles/slurm` as test_slurm.py runs it (2 training ranks
spread over node1 and node2 by `--set-resources train:nodes=...`), but with a longer training (a replay
ratio of 200: ~900 steps, checkpoints every 25) and one retry. Once a checkpoint is written, node2 dies:
its slurmd, its slurmstepd daemons and every process of its jobs are SIGKILLed (the training rank there,
and any self-play job it runs), and it is marked down as SlurmdTimeout would. Then:
- the training step fails on node1 at once (its peer's connections closed; what rank 0 then says:
  tests/e2e/test_train_lost_peer.py), and the job ends (FAILED or NODE_FAIL); Slurm does not requeue it
  (the profile's `slurm-no-requeue`), Snakemake resubmits it with `nodes` 1 (the expression
  `2 if attempt == 1 else 1`), both ranks on node1, and it resumes from the checkpoint;
- the run finishes, and is the same run as an undisturbed one (the local profile, the same relative root
  `run`): `python -m tools.compare_runs`.
node2 is brought back at the end (a new slurmd, resumed), so the later Slurm tests find two nodes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from minigo_core.data import layout

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _train_ranks(minigo_processes) -> dict[int, str]:
    """pid -> SLURMD_NODENAME of every training rank (a `minigo train` task of an srun step) on this host."""
    return {
        pid: env[b"SLURMD_NODENAME"].decode()
        for pid, env in minigo_processes("train").items()
        if env.get(b"SLURM_STEP_ID", b"batch") not in (b"batch", b"extern") and b"SLURMD_NODENAME" in env
    }


def test_node2_lost_mid_training_the_run_finishes_on_node1_as_the_same_run(
    cluster, run_pair, minigo_processes
):
    run_pair.write_config(
        train={"replay_ratio": 200.0, "checkpoint_every": 25}, evaluate={"opponents": ["gen0"]}
    )
    run_pair.run_reference()

    checkpoint = run_pair.b_root / layout.train_dir("", 1).lstrip("/") / layout.CHECKPOINT
    killed: list[tuple[int, str]] = []
    try:
        # the first attempt spreads the ranks over 2 nodes; a retry, with node2 down, runs them on node1
        with run_pair.slurm_run("2 if attempt == 1 else 1") as run:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and run.poll() is None:
                if checkpoint.exists() and "node2" in _train_ranks(minigo_processes).values():
                    break
                time.sleep(0.05)
            ranks = _train_ranks(minigo_processes)
            assert run.poll() is None and sorted(ranks.values()) == ["node1", "node2"], (ranks, run.poll())
            killed = cluster.lose_node("node2", reason="lost (test_slurm_node_loss)")
            lost_at = time.monotonic()
            assert any(pid in ranks and ranks[pid] == "node2" for pid, _ in killed), killed
            run.wait(timeout=600)
    finally:
        cluster.restore_node("node2")
    print(f"the run finished {time.monotonic() - lost_at:.0f} s after node2 was lost; killed: {killed}")
    run_pair.slurm_log()

    # the retry's ranks, both on node1, named the process group's timeout and resumed from the checkpoint
    # (the failed attempt's log is gone: Snakemake removes a job's log before its retry)
    train_log = Path(layout.generation_log_path(str(run_pair.b_root), "train", 1)).read_text()
    for rank in (0, 1):
        assert f"rank {rank} of 2 on node node1 joined at" in train_log, train_log[-3000:]
    assert "it waits at most 600 s for the others in a collective" in train_log, train_log[-3000:]
    assert "resuming from" in train_log, train_log[-3000:]
    metrics = [json.loads(line) for line in (checkpoint.parent / layout.METRICS).read_text().splitlines()]
    end = metrics[-1]
    assert end["event"] == "end" and end["resumed_from_step"] > 0 and end["steps_run"] < end["steps"], end

    run_pair.assert_same_run()
