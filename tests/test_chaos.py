"""Kill anything, rerun, same result: a reduced chaos run (`workflow/scripts/chaos.py`, 3 kills).

The tiny config, cut to one generation (four games in two self-play jobs) with one evaluation, runs
undisturbed once; then again while random jobs (and Snakemake itself) are killed with SIGKILL, rerun with
`--rerun-incomplete` until it finishes. Every artifact must then be valid and byte-identical to the
undisturbed run, with no temporary file left and nothing half-written ever visible under a final name. The
full version:
`python workflow/scripts/chaos.py --workdir /tmp/chaos --kills 10` (the whole tiny config).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KILLS = 3


def test_chaos_run_is_byte_identical_to_an_undisturbed_run(tmp_path):
    report_path = tmp_path / "report.json"
    argv = [
        sys.executable, str(REPO / "workflow" / "scripts" / "chaos.py"),
        "--workdir", str(tmp_path / "chaos"), "--kills", str(KILLS), "--seed", "9",
        "--set", "generations=1", "--set", "selfplay.games=4", "--set", "evaluate.opponents=[gen0]",
        "--timeout", "400", "--report", str(report_path),
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=1200)
    assert report_path.exists(), f"chaos.py wrote no report (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    assert proc.returncode != 2, f"the undisturbed reference run failed: {report['problems']}"
    assert report["chaos"]["kills_done"] == KILLS, report["chaos"]
    assert report["artifacts_compared"] >= 10, report
    problems = "\n".join(report["problems"])
    kills = ", ".join(k["killed"] for k in report["chaos"]["kills"] if "killed" in k)
    assert proc.returncode == 0 and not report["problems"], (
        f"after {KILLS} kills ({kills}) and {report['chaos']['attempts']} Snakemake runs:\n{problems}"
    )
