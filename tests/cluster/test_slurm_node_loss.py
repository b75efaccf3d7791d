"""A node lost under a run (slurm_cluster.py's node2, `lose_node`): the run finishes on node1, the same run.

Both tests run the tiny config with one generation through `profiles/slurm` as test_slurm.py runs it, with
one retry. node2 dies as a node does: its slurmd, its slurmstepd daemons and every process of its jobs are
SIGKILLed, and it is marked down as SlurmdTimeout would. Each run then finishes, and is the same run as an
undisturbed one (the local profile, the same relative root `run`): `python -m tools.compare_runs`. node2 is
brought back at the end (a new slurmd, resumed), so the later Slurm tests find two nodes.

Mid-training: 2 training ranks spread over node1 and node2 by `--set-resources train:nodes=...`, a longer
training (a replay ratio of 200: ~900 steps, checkpoints every 25). Once a checkpoint is written, node2
dies (the training rank there, and any self-play job it runs). Then:
- the training step fails on node1 at once (its peer's connections closed; what rank 0 then says:
  tests/e2e/test_train_lost_peer.py), and the job ends (FAILED or NODE_FAIL); Slurm does not requeue it
  (the profile's `slurm-no-requeue`), Snakemake resubmits it with `nodes` 1 (the expression
  `2 if attempt == 1 else 1`), both ranks on node1, and it resumes from the checkpoint.

Mid-self-play (the common case at scale: most of a run's jobs are self-play): 8 games a generation in jobs
of 6 (job 0 plays games 0-5, job 1 games 6-7), with 2000 readouts and no resignation, so that a job takes
seconds and its games end one after another. The first attempt of every self-play job is sent to node2
(`--set-resources selfplay:slurm_extra=...`, `--nodelist=node2` at attempt 1 only); training runs on one
node. Once job 0 (6 games) runs on node2 and one of its game files is written, its process is frozen
(SIGSTOP: the node dies at that instant, whatever the machine's load) and node2 dies. Then:
- the job ends NODE_FAIL, and Snakemake resubmits it without a node list: on node1, the only node up (so
  too job 1, if its Slurm job had not ended yet; a retry of a job whose games were all written keeps them
  all and only writes its record again);
- the retry keeps the game files the lost attempt wrote ("kept N game files of an earlier attempt"; they
  are byte for byte those that existed at the loss) and plays only the rest;
- no temporary file (`.tmp-*`, storage.TMP_PREFIX) is left under the run's root.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from minigo_core.data import layout, storage

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


# 8 games a generation in jobs of 6: job 0 plays games 0-5, job 1 games 6-7
SELFPLAY = {"games": 8, "games_per_job": 6, "readouts": 2000, "fast_readouts": 1000,
            "resign_disabled_fraction": 1.0}  # fmt: skip
JOB0_GAMES = range(0, 6)


def _job0_on_node2(minigo_processes) -> tuple[int, str] | None:
    """(pid, Slurm job id) of the `minigo selfplay` of job 0 (`--game 0 --count 6`) on node2, if it runs."""
    for pid, env in minigo_processes("selfplay").items():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if env.get(b"SLURMD_NODENAME") == b"node2" and " --game 0 --count 6 " in f" {' '.join(argv)} ":
            return pid, env[b"SLURM_JOB_ID"].decode()
    return None


def _temporaries(root: Path) -> list[str]:
    """Every file or folder under `root` whose name is a temporary one (`.tmp-...`)."""
    return sorted(
        os.path.join(d, n) for d, dirs, files in os.walk(root) for n in dirs + files
        if n.startswith(storage.TMP_PREFIX)
    )  # fmt: skip


def test_node2_lost_mid_selfplay_the_job_retries_on_node1_keeping_its_games_as_the_same_run(
    cluster, run_pair, minigo_processes
):
    run_pair.write_config(selfplay=SELFPLAY, evaluate={"games": 0})
    run_pair.run_reference()

    games = run_pair.b_root / layout.games_dir("", 0).lstrip("/")
    job0_files = [games / Path(layout.game_path("", 0, g)).name for g in JOB0_GAMES]
    # a self-play job's first attempt goes to node2, a retry anywhere (node1: node2 is down by then)
    node2_first = "selfplay:slurm_extra='--nodelist=node2' if attempt == 1 else ''"
    killed: list[tuple[int, str]] = []
    try:
        with run_pair.slurm_run("1", set_resources=(node2_first,)) as run:
            deadline = time.monotonic() + 600
            found = None
            while time.monotonic() < deadline and run.poll() is None and found is None:
                found = _job0_on_node2(minigo_processes)
                time.sleep(0.05)
            assert found is not None, f"job 0 never ran on node2 (the run: {run.poll()})"
            pid, first_job = found
            while time.monotonic() < deadline and run.poll() is None and Path(f"/proc/{pid}").exists():
                if any(f.exists() for f in job0_files):
                    break
                time.sleep(0.01)
            # the node dies now: its self-play job is frozen at once, then killed with the node (a job that
            # already ended, all its games written, is gone: the assert below says so)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
            at_loss = {f.name: f.read_bytes() for f in job0_files if f.exists()}
            assert 1 <= len(at_loss) < len(job0_files), sorted(at_loss)
            killed = cluster.lose_node("node2", reason="lost (test_slurm_node_loss, self-play)")
            lost_at = time.monotonic()
            assert any(p == pid for p, _ in killed), killed
            run.wait(timeout=600)
    finally:
        cluster.restore_node("node2")
    print(f"the run finished {time.monotonic() - lost_at:.0f} s after node2 was lost with job 0's "
          f"{sorted(at_loss)} written; killed: {killed}")  # fmt: skip
    run_pair.slurm_log()

    # Slurm's view (MinJobAge keeps finished jobs in squeue): job 0's first attempt failed with node2, its
    # retry completed on node1
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%T|%N|%k"], capture_output=True, text=True,
                         env=cluster.env, check=True).stdout  # fmt: skip
    jobs = [line.split("|") for line in out.splitlines()]
    comment = next(c for i, _, _, c in jobs if i == first_job)
    attempts = sorted(
        (int(i), state, nodes) for i, state, nodes, c in jobs if c == comment and int(i) >= int(first_job)
    )
    print(f"job 0's attempts ({comment}): {attempts}")
    assert attempts[0][1:] in (("NODE_FAIL", "node2"), ("FAILED", "node2")), attempts
    assert attempts[-1][1:] == ("COMPLETED", "node1"), attempts

    # the retry kept the game files the lost attempt wrote, unchanged, and played only the rest
    selfplay_log = Path(layout.selfplay_log_path(str(run_pair.b_root), 0, 0)).read_text()
    assert f"kept {len(at_loss)} game files of an earlier attempt" in selfplay_log, selfplay_log[-3000:]
    record = json.loads((run_pair.b_root / layout.selfplay_job_path("", 0, 0).lstrip("/")).read_text())
    kept = [Path(layout.game_path("", 0, g)).name for g in record["attempt"]["kept_from_earlier_attempt"]]
    assert sorted(kept) == sorted(at_loss), (sorted(at_loss), record["attempt"])
    for name, data in at_loss.items():
        assert (games / name).read_bytes() == data, name
    print(f"the retry's log:\n{selfplay_log}")

    assert _temporaries(run_pair.b_root) == []
    run_pair.assert_same_run()
