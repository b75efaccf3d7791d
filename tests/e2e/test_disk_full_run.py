"""A full disk under a whole run: it fails, space is freed, the same command resumes, the same run.

`python -m tools.chaos --kinds disk-full` on the tiny config cut to one generation, no evaluation: run
A undisturbed; run B with its root on a tmpfs of its own, filled to the last byte once 2 of the 3 game files
of a self-play job are written (seed 3; the torch backend: its games one after another), so that job and
every other writer fail on ENOSPC; the attempt ends, the filler is deleted (space freed), and the same
Snakemake command runs again until the run is done. No temporary or half-written file may ever be visible,
the self-play job's retry must keep its 2 game files, and run B must be the same run as run A
(`python -m tools.compare_runs`). Root only (the tmpfs); skipped otherwise. The writers one by one:
tests/unit/test_disk_full.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SEED = 3  # the disk fills once 2 of the 3 game files of a self-play job are written
# one generation, no evaluation; the torch backend, whose self-play plays a job's games one after another
# (the compiled engine plays them together: they end within milliseconds), so the disk fills between two
ONE_GENERATION = ["generations=1", "selfplay.games=4", "evaluate.opponents=[]", "evaluate.ladder=false",
                  "model.backend=torch"]  # fmt: skip
pytestmark = pytest.mark.slow


def test_a_run_on_a_full_disk_fails_then_resumes_once_space_is_freed_as_the_same_run(tmp_path, unavailable):
    if os.geteuid() != 0:
        unavailable("the run's root on a size-limited tmpfs needs root to mount")
    report_path, work = tmp_path / "report.json", tmp_path / "chaos"
    argv = [sys.executable, "-m", "tools.chaos", "--workdir", str(work), "--kinds", "disk-full",
            "--seed", str(SEED), *(f"--set={s}" for s in ONE_GENERATION), "--timeout", "400",
            "--report", str(report_path)]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=1200)
    assert report_path.exists(), f"no chaos report (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    if any("cannot mount a tmpfs" in p for p in report.get("problems", [])):
        unavailable(report["problems"][0])
    table = proc.stdout[proc.stdout.rfind("\nkind ") :]
    assert proc.returncode != 2, f"the undisturbed run failed: {report['problems']}"
    (kill,) = report["kinds"]["disk-full"]["kills"]
    assert kill["disk_filled_bytes"] > 0 and kill["game_files_at_kill"] in ([0, 1], [0, 2], [1, 2]), kill
    assert kill["retry"]["kept"] == kill["game_files_at_kill"], kill  # the retry kept them
    assert report["chaos"]["attempts"] >= 2, "the run did not fail on the full disk"
    assert any("disk_freed" in e for e in report["chaos"]["events"]), report["chaos"]["events"]
    problems = "\n".join(report["problems"])
    assert proc.returncode == 0 and not report["problems"], f"{table}\n{problems}"

    runs = [str(work / "A" / "run"), str(work / "B" / "run")]
    compared = subprocess.run([sys.executable, "-m", "tools.compare_runs", *runs], capture_output=True,
                              text=True, cwd=REPO)  # fmt: skip
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-3000:]
    # the first attempt failed on the full disk, the self-play job naming its next game file (its log, shown
    # by Snakemake, has room for the message: a partly filled page of the tmpfs)
    failed = (work / "B" / "snakemake.attempt01.log").read_text()
    assert "Error in rule selfplay" in failed, failed[-3000:]
    assert re.search(r"cannot write \S+/game00002\.arrow: no space left on device; .* rerun the same command",
                     failed), failed[-3000:]  # fmt: skip
