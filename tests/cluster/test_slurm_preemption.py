"""Preemption through Slurm: `scancel --signal=TERM` to a self-play job and to a training job of a run.

The tiny config with one generation (no evaluations; the torch backend, whose self-play plays a job's games
one after another, so that the signal lands between two of them) and a longer training (a replay ratio of
100: a few hundred steps) with its 2 ranks on node1 and node2 (`--set-resources train:nodes=2`), through
`profiles/slurm` with one retry. Slurm delivers the SIGTERM to every process of the job's steps (the step's
shell and Snakemake's jobstep too; srun passes it to the training tasks):
- the self-play job, once a game file is written, stops (its game files whole); Snakemake resubmits it
  and the retry keeps the game files written ("kept N game files of an earlier attempt");
- the training job, once step 20 is logged, stops every rank at the next step boundary with a checkpoint
  (exit 143); the retry resumes from it.
The run finishes and is the same run as an undisturbed one (the local profile, the same relative root):
`python -m tools.compare_runs`. The same without Slurm, signal by signal: tests/e2e/test_preemption.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from minigo_core.data import layout

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _wait(predicate, run: subprocess.Popen, what: str, limit_s: float = 600) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        assert run.poll() is None, f"the run ended (exit {run.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} within {limit_s} s"
        time.sleep(0.02)


def test_scancel_signal_term_to_selfplay_and_training_the_retries_resume_as_the_same_run(
    cluster, run_pair, minigo_processes
):
    run_pair.write_config(
        model={"backend": "torch"},  # self-play plays a job's games one after another
        train={"replay_ratio": 100.0},
        evaluate={"opponents": []},
    )
    run_pair.run_reference()

    games = run_pair.b_root / layout.games_dir("", 0).lstrip("/")
    metrics = run_pair.b_root / layout.train_metrics_path("", 1).lstrip("/")

    def job_of(command: str, *option: str) -> str | None:
        return _job_of(minigo_processes, command, *option)

    signalled: dict[str, dict] = {}
    with run_pair.slurm_run("2") as run:
        # the self-play job of 3 games (games 0-2), once one of its game files is written
        _wait(lambda: any(games.glob("game0000[0-2].arrow")) and job_of("selfplay", "--count", "3"), run,
              "a self-play job of 3 games with a game file written")  # fmt: skip
        job = job_of("selfplay", "--count", "3")
        written = sorted(p.name for p in games.glob("game0000[0-2].arrow"))
        assert len(written) < 3, f"every game of the job was written before the signal: {written}"
        subprocess.run(["scancel", "--signal=TERM", job], env=cluster.env, check=True)
        signalled["selfplay"] = {"job": job, "written": written, "at": time.monotonic()}
        # the training job, once step 20 is logged
        _wait(lambda: metrics.exists() and '"step": 20,' in metrics.read_text() and job_of("train"), run,
              "step 20 of the training job")  # fmt: skip
        job = job_of("train")
        subprocess.run(["scancel", "--signal=TERM", job], env=cluster.env, check=True)
        signalled["train"] = {"job": job}
        run.wait(timeout=600)
    text = run_pair.slurm_log()
    # rank 0 checkpointed at a step boundary, both ranks exited 143 (Snakemake shows the failed attempt's log)
    assert "(SIGTERM: a preemption or a time limit); checkpoint" in text, text[-6000:]
    assert "Exited with exit code 143" in text, text[-6000:]
    print(f"signalled: {signalled}")

    # each job failed once and its retry went on from what the first attempt kept
    record = json.loads((run_pair.b_root / layout.selfplay_job_path("", 0, 0).lstrip("/")).read_text())
    kept = [f"game{g:05d}.arrow" for g in record["attempt"]["kept_from_earlier_attempt"]]
    assert set(signalled["selfplay"]["written"]) <= set(kept), (signalled, record["attempt"])
    selfplay_log = Path(layout.selfplay_log_path(str(run_pair.b_root), 0, 0)).read_text()
    assert f"kept {len(kept)} game files of an earlier attempt" in selfplay_log, selfplay_log[-3000:]
    train_log = Path(layout.generation_log_path(str(run_pair.b_root), "train", 1)).read_text()
    assert "resuming from" in train_log, train_log[-3000:]
    end = json.loads(metrics.read_text().splitlines()[-1])
    assert end["event"] == "end" and end["resumed_from_step"] >= 20, end

    run_pair.assert_same_run()


def _job_of(minigo_processes, command: str, *option: str) -> str | None:
    """The Slurm job id of a running `minigo COMMAND` with `option` (e.g. --count 3), if any."""
    jobs = {pid: env[b"SLURM_JOB_ID"].decode() for pid, env in minigo_processes(command).items()
            if b"SLURM_JOB_ID" in env}  # fmt: skip
    for pid, job in jobs.items():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if not option or any(argv[i : i + len(option)] == list(option) for i in range(len(argv))):
            return job
    return None
