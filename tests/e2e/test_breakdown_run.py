"""`minigo status ROOT --breakdown` on a real tiny run (`minigo run --profile profiles/local`, tiny.yaml):
its parts and idle add up to cores x wall, no category is negative, and self-play and training are seen."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_breakdown_of_a_tiny_run_adds_up(tmp_path, write_config):
    config = write_config(tmp_path)
    run = [
        sys.executable,
        "-m",
        "minigo_core.cli",
        "run",
        "--profile",
        "profiles/local",
        "--config",
        str(config),
    ]
    out = subprocess.run(
        ["timeout", "-k", "10", "900", *run, "--progress", "none", "--", "--cores", "2"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    root = tmp_path / "run"
    status = [sys.executable, "-m", "minigo_core.cli", "status", str(root), "--breakdown"]
    shown = subprocess.run([*status, "--json", "--per-generation"], cwd=REPO, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-4000:]
    data = json.loads(shown.stdout)
    assert data["cores"] == 2 and data["cores_source"].startswith("Snakemake log")  # `--cores 2` above
    assert data["wall_s"] > 0 and data["core_seconds"] == pytest.approx(2 * data["wall_s"])
    categories = data["categories"]
    known = {k: v for k, v in categories.items() if v is not None}
    assert all(v >= 0 for v in known.values()), categories
    assert sum(known.values()) - data["overlap"] == pytest.approx(data["core_seconds"], rel=1e-9)
    assert categories["selfplay_games"] > 0 and categories["training_steps"] > 0, categories
    assert categories["startup"] > 0 and categories["window"] > 0 and categories["evaluation"] > 0
    assert set(data["generations"]) == {"0", "1", "2"}  # tiny.yaml: 2 generations after generation 0
    assert data["generations"]["1"]["training_steps"] > 0 and data["generations"]["1"]["span_s"] > 0
    table = subprocess.run([*status, "--per-generation"], cwd=REPO, capture_output=True, text=True)
    assert table.returncode == 0 and "self-play games" in table.stdout and "idle" in table.stdout
    loop = subprocess.run([*status, "--json", "--until-last-model"], cwd=REPO, capture_output=True, text=True)
    assert loop.returncode == 0, loop.stderr[-4000:]
    learning = json.loads(loop.stdout)
    assert learning["until_last_model"] and 0 < learning["wall_s"] <= data["wall_s"]
    markers = [json.loads((root / f"games/gen{g:04d}.complete.json").read_text()) for g in (0, 1)]
    assert learning["positions"] == data["positions"] == sum(m["positions"] for m in markers)
    assert learning["positions_per_hour"] == pytest.approx(3600 * learning["positions"] / learning["wall_s"])
    assert learning["categories"]["selfplay_games"] == pytest.approx(categories["selfplay_games"])
