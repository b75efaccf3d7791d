"""`python -m minigo_core.bench search_scaling`: a model's Elo against its readouts, each row a real match
(the model against itself at the previous readouts, or against a given player), and the Elo per doubling."""

from __future__ import annotations

import json

import pytest

from minigo_core.bench import search_scaling
from minigo_core.nn.model import ModelConfig, random_model, save_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("m") / "m.safetensors")
    save_model(path, random_model(ModelConfig(5, 1, 8, 16, "agz"), seed=3), {"generation": 0, "test": True})
    return path


def test_the_model_against_itself_at_half_the_readouts(tiny_model, tmp_path, capsys):
    out = tmp_path / "s.json"
    argv = ["--model", tiny_model, "--readouts", "2,4,8", "--games", "4", "--config", "config/tiny.yaml"]
    assert search_scaling.main([*argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [r["readouts"] for r in result["rows"]] == [4, 8]
    assert [r["opponent"] for r in result["rows"]] == ["model:m@2", "model:m@4"]
    assert all(r["games"] == 4 and 0 <= r["score"] <= 4 for r in result["rows"])
    chain = result["elo_by_readouts"]  # the anchor at 0, then the differences added up
    assert list(chain) == ["2", "4", "8"] and chain["2"] == 0.0
    assert chain["8"] == pytest.approx(result["rows"][0]["elo"] + result["rows"][1]["elo"], abs=0.2)
    assert "Elo per doubling of the readouts, 2 to 8" in capsys.readouterr().out
    again = tmp_path / "again.json"
    assert search_scaling.main([*argv, "--json", str(again)]) == 0  # a match replays exactly
    assert [r["score"] for r in json.loads(again.read_text())["rows"]] == [r["score"] for r in result["rows"]]


def test_every_row_against_one_opponent(tiny_model, tmp_path):
    out = tmp_path / "s.json"
    argv = ["--model", tiny_model, "--readouts", "1,4", "--games", "2", "--opponent", "random"]
    assert search_scaling.main([*argv, "--config", "config/tiny.yaml", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["readouts"], r["opponent"]) for r in rows] == [(1, "random"), (4, "random")]
    assert "per_doubling" in rows[1] and rows[1]["per_doubling"] == pytest.approx(
        (rows[1]["elo"] - rows[0]["elo"]) / 2
    )


@pytest.mark.parametrize("text", ["64", "64,32", "0,2", "a,b"])
def test_bad_readouts_are_refused(text):
    with pytest.raises(SystemExit):
        search_scaling.main(["--model", "m", "--readouts", text])


def test_a_sweep_gets_a_finite_difference():
    elo, lo, hi = search_scaling.elo_of(4.0, 4)
    assert elo == lo > 0 and hi == float("inf")  # the interval's inner bound
