"""`minigo run --budget`: the duration grammar, when the budget ends a run, and a real run it ends early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import ConfigError, from_dict
from minigo_core.data import layout
from minigo_core.pipeline import budget

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text,seconds", [("55m", 3300), ("1h", 3600), ("90s", 90), ("3300", 3300), ("2.5m", 150)]
)
def test_durations(text, seconds):
    assert budget.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5m", "ten minutes", "5d"])
def test_a_bad_duration_names_the_option(text):
    with pytest.raises(ConfigError, match="--budget"):
        budget.parse_duration(text)


def test_the_reserve_defaults_to_a_share_of_the_budget_and_must_be_shorter():
    b = budget.budget_from_args("100s", None, start=1000.0)
    assert (b.seconds, b.reserve, b.deadline) == (100.0, 15.0, 1085.0)
    assert budget.budget_from_args(None, None, 0.0) is None
    with pytest.raises(ConfigError, match="--reserve"):
        budget.budget_from_args("10m", "10m", 0.0)
    with pytest.raises(ConfigError, match="needs --budget"):
        budget.budget_from_args(None, "1m", 0.0)


def _models(root: Path, times: list[float]) -> None:
    for g, t in enumerate(times):
        path = Path(layout.model_path(str(root), g))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"m")
        os.utime(path, (t, t))


def test_the_budget_ends_the_run_when_the_next_generation_would_arrive_too_late(tmp_path):
    cfg = from_dict({"root": str(tmp_path), "generations": 20})
    b = budget.Budget(seconds=100.0, reserve=20.0, start=0.0)  # the last model must exist by t = 80
    _models(tmp_path, [10.0, 30.0])
    assert b.last_generation(cfg, now=31.0) is None  # two models: no rate measured yet
    _models(tmp_path, [10.0, 30.0, 45.0, 60.0])  # a generation every 15 s: the next at 75
    assert b.last_generation(cfg, now=61.0) is None
    _models(tmp_path, [10.0, 30.0, 45.0, 60.0, 70.0])  # median of 15, 15, 10: the next at 85 > 80
    assert b.last_generation(cfg, now=71.0) == 4
    assert b.last_generation(cfg, now=81.0) == 4  # and past the deadline at any rate
    assert b.last_generation(from_dict({"root": str(tmp_path), "generations": 4}), now=81.0) is None
    assert budget.shortened(cfg, 4) == ["--config", "generations=4"]


@pytest.mark.slow
def test_a_budget_ends_a_real_run_early_and_its_last_generation_gets_the_final_matches(tmp_path):
    """A 5x5 run of 40 generations under a budget it cannot finish in: it stops early, and the generation
    it ends at is the run's last (the effective config says so) and has the final match."""
    cfg = {
        "root": str(tmp_path / "run"), "board_size": 5, "generations": 40,
        "model": {"blocks": 1, "filters": 8, "fc_width": 8},
        "selfplay": {"games": 8, "games_per_job": 4, "readouts": 8, "fast_readouts": 4},
        "window": {"generations": 2}, "train": {"batch_per_rank": 16},
        "evaluate": {"games": 4, "final_games": 4, "every": 100, "opponents": ["previous"],
                     "final_opponents": ["random"], "final_equal_time": [], "ladder": False},
    }  # fmt: skip
    config = tmp_path / "cfg.yaml"
    config.write_text(yaml.safe_dump(cfg))
    out = subprocess.run(
        [sys.executable, "-m", "minigo_core.cli", "run", "--config", str(config), "--no-report",
         "--budget", "75s", "--reserve", "15s", "--progress", "lines"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the budget ends the run at generation" in out.stdout
    effective = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    last = effective["generations"]
    assert 2 <= last < 40
    assert Path(layout.model_path(str(tmp_path / "run"), last)).exists()
    assert Path(layout.eval_path(str(tmp_path / "run"), last, "random")).exists()
