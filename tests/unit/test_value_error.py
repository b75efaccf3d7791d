"""`python -m minigo_core.bench value_error`: a fixed set of games between outside players, and a model's
value error on its positions against the games' results, per generation of a run, beside the v = 0
baseline."""

from __future__ import annotations

import json

import numpy as np
import pytest

from minigo_core.bench import value_error
from minigo_core.data import layout
from minigo_core.nn.model import ModelConfig, random_model, save_model


def make_set_argv(path: str) -> list[str]:
    """Four seeded 5x5 games of the random player against itself (fast, and no outside program needed)."""
    return [
        "--make-set",
        path,
        "--games",
        "4",
        "--board-size",
        "5",
        "--players",
        "random,random",
        "--seed",
        "3",
    ]


@pytest.fixture(scope="module")
def position_set(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("set") / "set.json")
    assert value_error.main(make_set_argv(path)) == 0
    return path


def test_the_set_holds_its_games_moves_and_results(position_set, tmp_path):
    data = value_error.read_set(position_set)
    assert data["board_size"] == 5 and len(data["games"]) == 4 and data["players"] == ["random", "random"]
    assert all(g["winner"] in (-1, 0, 1) and g["moves"] for g in data["games"])
    again = str(tmp_path / "again.json")
    assert value_error.main(make_set_argv(again)) == 0
    assert value_error.read_set(again)["games"] == data["games"]  # seeded: the same games
    positions, z, late = value_error.positions_of(data)
    assert len(positions) == sum(len(g["moves"]) for g in data["games"]) == z.size == late.size
    assert positions[0].to_play == 1 and z[0] == data["games"][0]["winner"]  # Black moves first


def test_the_errors_and_the_baseline():
    z = np.array([1, -1, 1, 0], np.float32)
    assert value_error.errors(np.zeros(4, np.float32), z) == {"mse": 0.75, "sign_rate": 0.5}  # chance
    assert value_error.errors(np.array([0.5, -0.5, -0.5, 0], np.float32), z)["sign_rate"] == pytest.approx(
        2 / 3, abs=1e-4
    )


def test_each_generation_of_a_run_is_measured(position_set, tmp_path, capsys):
    root = str(tmp_path / "run")
    for g in (0, 1, 2):
        path = layout.model_path(root, g)
        (tmp_path / "run" / "models").mkdir(parents=True, exist_ok=True)
        save_model(path, random_model(ModelConfig(5, 1, 8, 16, "agz"), seed=g), {"generation": g})
    out = tmp_path / "v.json"
    argv = ["--set", position_set, "--run", root, "--every", "2", "--json", str(out)]
    assert value_error.main(argv) == 0
    result = json.loads(out.read_text())
    assert [r["model"].rsplit("/", 1)[1] for r in result["rows"]] == [
        "gen0000.safetensors",
        "gen0002.safetensors",
    ]
    for r in result["rows"]:
        assert 0 <= r["all"]["mse"] <= 4 and 0 <= r["all"]["sign_rate"] <= 1
    assert "baseline: v = 0" in capsys.readouterr().out


def test_a_bad_set_file_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match="bad.json is not a position set"):
        value_error.read_set(str(bad))
