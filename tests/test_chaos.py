"""Kill anything, rerun, same result: a reduced chaos run (`python -m tools.chaos`, 3 kills).

The tiny config, cut to one generation (four games in two self-play jobs, of 3 games and 1) with one
evaluation, runs undisturbed once; then again while one process of each planned kind is killed with SIGKILL
-- seed 83 plans a multi-game self-play job, Snakemake itself and a training rank -- rerun with
`--rerun-incomplete` until it finishes. Every planned kill must happen (each waits for its kind), and every
artifact must then be valid and byte-identical to the undisturbed run, with no temporary file left and
nothing half-written ever visible under a final name. The planning is also checked on its own (no run): the
whole tiny config with 8 kills spreads them over most kinds. The full version:
`python -m tools.chaos --workdir /tmp/chaos --kills 8 --seed 23` (the whole tiny config), and
`--profile slurm` on a running test cluster (tests/slurm_cluster.py) for the training ranks on two nodes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from minigo_core.pipeline import workflow
from tools.chaos.kills import kill_plan, kinds_of_dry_run, plannable_kinds
from tools.chaos.processes import KINDS, classify
from tools.chaos.runs import config_data

REPO = Path(__file__).resolve().parents[1]
KILLS, SEED = 3, 83  # plans selfplay (a job of 3 games), snakemake, train-rank
REDUCED = ["generations=1", "selfplay.games=4", "evaluate.opponents=[gen0]"]


def tiny(overrides=()):
    return workflow.run_config(config_data(REPO / "config" / "tiny.yaml", list(overrides)))


def test_the_plan_of_the_whole_tiny_config_spreads_8_kills_over_most_kinds():
    kinds = plannable_kinds(tiny())
    assert "selfplay" in kinds and "selfplay-single" not in kinds  # 4 games in jobs of 3: one job of K = 3
    plan = kill_plan(kinds, 8, np.random.default_rng(23))
    assert len(plan) == 8 and len(set(plan)) >= 5, plan
    # in the order the pipeline starts them (Snakemake anywhere)
    jobs = [k for k in plan if k != "snakemake"]
    assert jobs == sorted(jobs, key=KINDS.index)
    assert "train-rank-node2" in plannable_kinds(tiny(), slurm=True)
    reduced = kill_plan(plannable_kinds(tiny(REDUCED)), KILLS, np.random.default_rng(SEED))
    assert len(set(reduced)) == KILLS and "selfplay" in reduced, reduced


def test_kinds_of_processes_and_of_a_dry_run():
    selfplay = [sys.executable, "-m", "minigo_core.cli", "selfplay", "--game", "0", "--count", "3"]
    assert classify(selfplay) == "selfplay"
    assert classify(selfplay[:-1] + ["1"]) == "selfplay-single"
    assert classify(["srun", "-n", "2", sys.executable, "-m", "minigo_core.cli", "train"]) == "train"
    assert classify([sys.executable, "-m", "minigo_core.jobs.train", "--rank", "1"]) == "train-rank"
    assert classify([sys.executable, "/x/snakemake", "--mode", "subprocess"]) == "snakemake-job"
    assert classify(["bash", "-c", "minigo_core.cli"]) is None
    dry_run = "rule selfplay:\n    wildcards: generation=0001, job=00001\nlocalrule ratings:\n    jobid: 3\n"
    kinds, planned = kinds_of_dry_run(dry_run, [3, 1])
    assert kinds == {"selfplay-single", "ratings", "snakemake"} and planned == "selfplay x1, ratings x1"
    assert kinds_of_dry_run("Nothing to be done (all requested files are present).", [3, 1]) == (
        set(),
        "nothing",
    )


def test_chaos_run_is_byte_identical_to_an_undisturbed_run(tmp_path):
    report_path = tmp_path / "report.json"
    argv = [sys.executable, "-m", "tools.chaos", "--workdir", str(tmp_path / "chaos"), "--kills", str(KILLS),
            "--seed", str(SEED), *(f"--set={item}" for item in REDUCED), "--timeout", "400",
            "--report", str(report_path)]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=1200)
    assert report_path.exists(), f"no chaos report (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    assert proc.returncode != 2, f"the undisturbed reference run failed: {report['problems']}"
    plan = report["kill_plan"]
    assert len(set(plan)) == KILLS and "selfplay" in plan, plan
    kinds = report["kinds"]
    table = proc.stdout[proc.stdout.rfind("\nkind ") :]
    assert all(kinds[k]["killed"] == kinds[k]["planned"] for k in plan), f"not every kill happened:\n{table}"
    (selfplay,) = kinds["selfplay"]["kills"]
    assert selfplay["games_per_job"] == 3 and selfplay["attempt"] >= 1, selfplay
    assert report["artifacts_compared"] >= 10, report
    problems = "\n".join(report["problems"])
    assert proc.returncode == 0 and not report["problems"], (
        f"after {KILLS} kills and {report['chaos']['attempts']} Snakemake runs:\n{table}\n{problems}"
    )
