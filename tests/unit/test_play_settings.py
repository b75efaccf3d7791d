"""`python -m minigo_core.bench play_settings`: one model under other search settings against the config's,
each row a real match that replays exactly."""

from __future__ import annotations

import json

import pytest

from minigo_core.bench import play_settings


def test_a_row_per_setting_against_the_config_search(ladders_model, tmp_path, capsys):
    out = tmp_path / "p.json"
    argv = ["--model", ladders_model, "--config", "config.yaml", "--readouts", "8", "--games", "4"]
    argv += ["--set", "gumbel_considered=2", "--set", "gumbel_c_scale=0.3,gumbel_c_visit=20"]
    assert play_settings.main([*argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["base"]["search"] == "gumbel" and result["base"]["gumbel_considered"] == 4
    sets = [r["set"] for r in result["rows"]]
    assert sets == [{"gumbel_considered": 2}, {"gumbel_c_scale": 0.3, "gumbel_c_visit": 20.0}]
    assert all(r["games"] == 4 and 0 <= r["score"] <= 4 and r["cpu_seconds"] > 0 for r in result["rows"])
    printed = capsys.readouterr().out
    assert printed.startswith("CPU: ") and "gumbel_c_scale=0.3,gumbel_c_visit=20.0" in printed
    again = tmp_path / "again.json"
    assert play_settings.main([*argv, "--json", str(again)]) == 0  # a match replays exactly
    assert [r["score"] for r in json.loads(again.read_text())["rows"]] == [r["score"] for r in result["rows"]]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("readouts=64", "KEY one of"),  # the bench sets the readouts of both sides
        ("gumbel_considered", "KEY=VALUE"),
        ("gumbel_considered=many", "takes a int"),
        ("random_symmetry=maybe", "takes a bool"),
        ("", "at least one"),
    ],
)
def test_bad_settings_are_refused_by_name(text, says, capsys):
    with pytest.raises(SystemExit):
        play_settings.main(["--model", "m", "--set", text])
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("search=foo", "selfplay.search"),
        ("gumbel_considered=0", "selfplay.gumbel_considered"),
        ("gumbel_c_scale=-1", "selfplay.gumbel_c_scale"),
        ("parallel_readouts=0", "evaluate.parallel_readouts"),
    ],
)
def test_values_out_of_range_exit_naming_the_config_key(ladders_model, text, key):
    argv = ["--model", ladders_model, "--config", "config.yaml", "--readouts", "4", "--games", "2"]
    with pytest.raises(SystemExit) as err:
        play_settings.main([*argv, "--set", text])
    assert f"config key '{key}'" in str(err.value) and "out of range" in str(err.value)


def test_a_bad_later_row_exits_before_any_game(ladders_model, capsys):
    argv = ["--model", ladders_model, "--config", "config.yaml", "--readouts", "4", "--games", "2"]
    with pytest.raises(SystemExit) as err:
        play_settings.main([*argv, "--set", "gumbel_considered=8", "--set", "gumbel_c_visit=-5"])
    assert "selfplay.gumbel_c_visit" in str(err.value)
    assert "game 1/" not in capsys.readouterr().err  # the first row was not played
