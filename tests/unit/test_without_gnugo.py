"""A run where GNU Go is not installed goes on where it can: the workflow leaves out the matches against
GNU Go and says so with the command that installs it; the fixed-scale rating plays the ladder's other rungs
and records which it left out. Also: where the project's files are found (base/project_files.py).

GNU Go is made missing by pointing `evaluate.gnugo` at a path that does not exist (an explicit path is
never looked up on PATH)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from minigo_core.base import project_files
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.pipeline.workflow import without_unavailable_opponents
from minigo_core.play import gtp_program
from minigo_core.rating.ladder import read_ladder
from minigo_core.rating.ladder_rate import playable_rungs

REPO = Path(__file__).resolve().parents[2]


def _no_gnugo(tmp_path: Path) -> str:
    return str(tmp_path / "no" / "gnugo")


def test_the_workflow_leaves_out_gnugo_opponents_and_says_how_to_install(make_config, tmp_path):
    cfg = make_config(
        evaluate={
            "opponents": ["previous", "gnugo:1", "uct:8"],
            "final_opponents": ["random", "gnugo:3"],
            "gnugo": _no_gnugo(tmp_path),
        }
    )
    kept, note = without_unavailable_opponents(cfg)
    assert kept.evaluate.opponents == ("previous", "uct:8")
    assert kept.evaluate.final_opponents == ("random",)
    assert kept.evaluate.target == cfg.evaluate.target
    assert "gnugo:1, gnugo:3" in note and "sudo apt-get install -y gnugo" in note
    assert replace(kept, evaluate=cfg.evaluate) == cfg  # nothing else changed


def test_the_workflow_keeps_everything_when_gnugo_is_not_needed_or_there(make_config, tmp_path):
    cfg = make_config(evaluate={"opponents": ["previous"], "gnugo": _no_gnugo(tmp_path)})
    assert without_unavailable_opponents(cfg) == (cfg, "")
    fake = tmp_path / "gnugo"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    cfg = make_config(evaluate={"opponents": ["gnugo:1"], "gnugo": str(fake)})
    assert without_unavailable_opponents(cfg) == (cfg, "")


def test_the_ladder_without_gnugo_keeps_the_other_rungs_at_their_ratings(tmp_path):
    ladder = read_ladder(9)
    kept, left_out, note = playable_rungs(ladder, _no_gnugo(tmp_path))
    gnugo_rungs = [r.player for r in ladder.rungs if PlayerSpec.parse(r.player).kind == "gnugo"]
    assert gnugo_rungs and left_out == gnugo_rungs
    assert [r for r in ladder.rungs if r.player not in left_out] == kept.rungs
    assert kept.anchor == ladder.anchor and kept.anchor_elo == ladder.anchor_elo  # the same fixed scale
    assert "sudo apt-get install -y gnugo" in note and "gnugo:10" in note


def test_ladder_rate_without_gnugo_rates_on_the_other_rungs(tmp_path, write_config):
    ladder = read_ladder(5)
    assert any(PlayerSpec.parse(r.player).kind == "gnugo" for r in ladder.rungs), "5x5 table: no GNU Go rung"
    config = write_config(tmp_path, evaluate={"gnugo": _no_gnugo(tmp_path)})
    out = tmp_path / "rating.json"
    result = subprocess.run(
        [sys.executable, "-m", "minigo_core.cli", "ladder", "rate", "random", "--board-size", "5",
         "--config", str(config), "--max-games", "2", "--seed", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "rating on the ladder's other rungs" in result.stderr
    rating = json.loads(out.read_text())
    assert rating["rungs_left_out"]["rungs"] and all(
        PlayerSpec.parse(r).kind == "gnugo" for r in rating["rungs_left_out"]["rungs"]
    )
    assert not set(rating["rungs"]) & set(rating["rungs_left_out"]["rungs"])


def test_the_default_gnugo_path_falls_back_to_path(tmp_path, monkeypatch):
    """GNU Go installed without root (on PATH, not in /usr/games) is found with the config's default path."""
    default = _no_gnugo(tmp_path)
    monkeypatch.setattr(gtp_program, "DEFAULT_GNUGO", default)  # as if /usr/games/gnugo were not installed
    fake = tmp_path / "bin" / "gnugo"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert gtp_program.find_gnugo(default) == str(fake)
    with pytest.raises(FileNotFoundError, match="evaluate.gnugo"):
        gtp_program.find_gnugo(str(tmp_path / "elsewhere" / "gnugo"))  # another path is never looked up


def test_project_files_from_a_checkout_and_by_relative_path(tmp_path, monkeypatch):
    assert project_files.is_checkout() and project_files.project_dir() == REPO
    monkeypatch.chdir(tmp_path)
    assert project_files.find("config/tiny.yaml") == REPO / "config" / "tiny.yaml"
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "tiny.yaml").write_text("root: here\n")
    assert project_files.find("config/tiny.yaml") == tmp_path / "config" / "tiny.yaml"  # the caller's first
    with pytest.raises(FileNotFoundError, match=r"config file config/none.yaml not found, neither in"):
        project_files.find("config/none.yaml", "config file")
