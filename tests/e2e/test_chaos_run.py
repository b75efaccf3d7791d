"""Kill anything, rerun, same result: a reduced chaos run (`python -m tools.chaos`, 3 kills).

The tiny config, cut to one generation (four games in two self-play jobs, of 3 games and 1) with one
evaluation, runs undisturbed once; then again while one process of each planned kind is killed with SIGKILL
-- seed 83 plans a multi-game self-play job, Snakemake itself and a training rank -- rerun with
`--rerun-incomplete` until it finishes. Every planned kill must happen (each waits for its kind), and every
artifact must then be valid and byte-identical to the undisturbed run, with no temporary file left and
nothing half-written ever visible under a final name. The planning alone (no run) is checked in
tests/unit/test_chaos.py. The full version:
`python -m tools.chaos --workdir /tmp/chaos --kills 8 --seed 23` (the whole tiny config), and
`--profile slurm` on a running test cluster (tests/cluster/slurm_cluster.py) for the training ranks on two
nodes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KILLS, SEED = 3, 83  # plans selfplay (a job of 3 games), snakemake, train-rank (test_chaos.py)
REDUCED = ["generations=1", "selfplay.games=4", "evaluate.opponents=[gen0]"]


def _chaos(tmp_path, argv: list[str]) -> tuple[subprocess.CompletedProcess, dict, str]:
    report_path = tmp_path / "report.json"
    argv = [sys.executable, "-m", "tools.chaos", "--workdir", str(tmp_path / "chaos"), *argv,
            "--timeout", "400", "--report", str(report_path)]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=1200)
    assert report_path.exists(), f"no chaos report (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    assert proc.returncode != 2, f"the undisturbed reference run failed: {report['problems']}"
    return proc, report, proc.stdout[proc.stdout.rfind("\nkind ") :]


def test_a_pack_killed_loses_nothing_and_the_run_is_the_same(tmp_path):
    # the tiny config with a window of 1: generations 0 and 1 are packed (after windows 1 and 2)
    packing = ["storage.pack_old_generations=true", "window.generations=1", "evaluate.opponents=[gen0]"]
    proc, report, table = _chaos(
        tmp_path, ["--kinds", "pack", "--seed", "3", *(f"--set={s}" for s in packing)]
    )
    assert report["kinds"]["pack"]["killed"] == 1, f"the pack was not killed:\n{table}"
    run = tmp_path / "chaos" / "B" / "run" / "games"
    assert sorted(p.name for p in run.glob("*.pack.arrow")) == ["gen0000.pack.arrow", "gen0001.pack.arrow"]
    assert not (run / "gen0000").exists()  # the loose files went
    problems = "\n".join(report["problems"])
    assert proc.returncode == 0 and not report["problems"], f"{table}\n{problems}"


def test_chaos_run_is_byte_identical_to_an_undisturbed_run(tmp_path):
    argv = ["--kills", str(KILLS), "--seed", str(SEED), *(f"--set={item}" for item in REDUCED)]
    proc, report, table = _chaos(tmp_path, argv)
    plan = report["kill_plan"]
    assert len(set(plan)) == KILLS and "selfplay" in plan, plan
    kinds = report["kinds"]
    assert all(kinds[k]["killed"] == kinds[k]["planned"] for k in plan), f"not every kill happened:\n{table}"
    (selfplay,) = kinds["selfplay"]["kills"]
    assert selfplay["games_per_job"] == 3 and selfplay["attempt"] >= 1, selfplay
    assert report["artifacts_compared"] >= 10, report
    problems = "\n".join(report["problems"])
    assert proc.returncode == 0 and not report["problems"], (
        f"after {KILLS} kills and {report['chaos']['attempts']} Snakemake runs:\n{table}\n{problems}"
    )
