"""The run config: the shipped configs load; a catalogue of bad configs is rejected naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import ConfigError, RunConfig, from_dict, learning_rate_at, load_config
from minigo_core.data.storage import check_root_writable

REPO = Path(__file__).resolve().parents[2]


def base() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def with_value(key: str, value):
    data = copy.deepcopy(base())
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return data


def test_shipped_configs_load():
    for path in [REPO / "config.yaml", *sorted((REPO / "config").glob("*.yaml"))]:
        cfg = load_config(path)
        assert 5 <= cfg.board_size <= 19


def test_defaults_follow_minigo():
    cfg = from_dict({"board_size": 19})
    assert cfg.softpick_moves == 30
    assert abs(cfg.dirichlet_alpha - 0.03) < 1e-12
    assert from_dict({"board_size": 9}).softpick_moves == 6


def _differences(defaults, shipped, prefix: str = "") -> list[str]:
    """Keys whose value differs between the dataclass defaults and config.yaml, or that only one has."""
    out = []
    for key in sorted(set(defaults) | set(shipped), key=str):
        name = prefix + str(key)
        if key not in shipped:
            out.append(f"{name}: a dataclass field missing from config.yaml")
        elif key not in defaults:
            out.append(f"{name}: in config.yaml, not a dataclass field")
        elif isinstance(defaults[key], dict) and isinstance(shipped[key], dict):
            out += _differences(defaults[key], shipped[key], name + ".")
        elif [defaults[key], type(defaults[key]) is bool] != [shipped[key], type(shipped[key]) is bool]:
            out.append(f"{name}: dataclass default {defaults[key]!r}, config.yaml {shipped[key]!r}")
    return out


def test_the_dataclass_defaults_are_config_yaml_key_for_key():
    # One source of defaults: a key left out of a config means what config.yaml says.
    assert _differences(RunConfig().to_dict(), base()) == []
    assert from_dict({}) == load_config(REPO / "config.yaml")
    assert _differences({"a": {"b": 1, "c": 2.0}, "d": 1}, {"a": {"c": 2, "e": 3}, "d": True}) == [
        "a.b: a dataclass field missing from config.yaml",
        "a.e: in config.yaml, not a dataclass field",
        "d: dataclass default 1, config.yaml True",
    ]


def test_selfplay_job_and_search_settings():
    s = from_dict({}).selfplay  # the library's defaults: config.yaml's, 448 games per job, Gumbel
    assert (s.games_per_job, s.search, s.model_lag) == (448, "gumbel", 1)
    assert (s.gumbel_considered, s.gumbel_c_visit, s.gumbel_c_scale) == (4, 50.0, 1.0)
    assert load_config(REPO / "config.yaml").selfplay.games_per_job > 1
    assert load_config(REPO / "config" / "paper.yaml").selfplay.games_per_job == 64
    tiny = load_config(REPO / "config" / "tiny.yaml").selfplay
    assert -(-tiny.games // tiny.games_per_job) >= 2  # the tests' runs have several self-play jobs
    gumbel = with_value("selfplay.search", "gumbel")
    gumbel["selfplay"].update(gumbel_considered=2, gumbel_c_visit=40, gumbel_c_scale=0.1)
    s = from_dict(gumbel).selfplay
    assert (s.search, s.gumbel_considered, s.gumbel_c_visit, s.gumbel_c_scale) == ("gumbel", 2, 40.0, 0.1)


def test_learning_rate_schedule_is_piecewise_constant():
    schedule = ((0, 0.02), (100, 0.01), (200, 0.001))
    assert learning_rate_at(schedule, 0) == 0.02
    assert learning_rate_at(schedule, 99) == 0.02
    assert learning_rate_at(schedule, 100) == 0.01
    assert learning_rate_at(schedule, 10_000) == 0.001


# (key, bad value, words the message must contain besides the key)
BAD = [
    ("board_size", 4, "5 to 19"),
    ("board_size", 20, "5 to 19"),
    ("board_size", "9", "integer"),
    ("board_size", 9.0, "integer"),
    ("komi", "seven", "number"),
    ("komi", float("nan"), "number"),
    ("features", "alphago", "agz"),
    ("generations", 0, "1..10000"),
    ("seed", -1, "2^63"),
    ("model.blocks", 0, "1..40"),
    ("model.filters", -8, "1..512"),
    ("model.backend", "cuda", "dsp"),
    ("model.layers", 3, "allowed keys"),
    ("selfplay.games", 0, "1..1000000"),
    ("selfplay.games_per_job", 0, ">= 1"),
    ("selfplay.games_per_job", 2.5, "integer"),
    ("selfplay.readouts", 0, "parallel_readouts"),
    ("selfplay.fast_readouts", 1000, "selfplay.readouts"),
    ("selfplay.full_search_fraction", 0, "(0, 1]"),
    ("selfplay.resign_threshold", 0.5, "[-1, 0]"),
    ("selfplay.init_unvisited", "zero", "parent or loss"),
    ("selfplay.search", "alphazero", "puct or gumbel"),
    ("selfplay.search", "", "non-empty string"),
    ("selfplay.gumbel_considered", 0, ">= 1"),
    ("selfplay.gumbel_considered", 4.0, "integer"),
    ("selfplay.gumbel_c_visit", 0, "> 0"),
    ("selfplay.gumbel_c_visit", "fifty", "number"),
    ("selfplay.gumbel_c_scale", -1.0, "> 0"),
    ("selfplay.threads", 0, "1..1024"),
    ("selfplay.model_lag", 2, "model g-1"),
    ("selfplay.model_lag", -1, "0 (games"),
    ("window.generations", 0, "1..100"),
    ("window.sample_fraction", 1.5, "(0, 1]"),
    ("window.max_bad_fraction", -0.1, "[0, 1]"),
    ("train.ranks", 0, "1..4096"),
    ("train.batch_per_rank", 0, "1..65536"),
    ("train.learning_rate", [[5, 0.1]], "step 0"),
    ("train.learning_rate", [[0, 0.1], [0, 0.01]], "step"),
    ("train.learning_rate", [[0, -1.0]], "learning rate"),
    ("train.learning_rate", 0.1, "list"),
    ("train.momentum", 1.0, "[0, 1)"),
    ("train.backend", "tpu", "dsp"),
    ("train.replay_ratio", 0, "one pass over the window"),
    ("train.replay_ratio", "four", "number"),
    ("evaluate.readouts", 0, ">= 1"),
    ("evaluate.parallel_readouts", 0, "1..256"),
    ("evaluate.opponents", ["gnugo:11"], "gnugo:LEVEL"),
    ("evaluate.opponents", ["kata"], "gen0"),
    ("evaluate.target", "best", "gen0"),
    ("evaluate.early_stop", "yes", "true or false"),
    ("unknown_key", 1, "allowed keys"),
    ("model", [1, 2], "mapping"),
]


@pytest.mark.parametrize("key,value,words", BAD, ids=[f"{k}={v!r}" for k, v, _ in BAD])
def test_bad_config_is_rejected_naming_the_key(key, value, words):
    with pytest.raises(ConfigError) as info:
        from_dict(with_value(key, value))
    message = str(info.value)
    assert key.split(".")[-1] in message
    assert words in message


def test_bad_config_file_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("board_size: [9\n")
    with pytest.raises(ConfigError, match="broken.yaml"):
        load_config(path)
    path.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_root_under_a_file_is_rejected(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="'root'"):
        check_root_writable(from_dict({"root": str(blocker / "run")}))
    check_root_writable(from_dict({"root": str(tmp_path / "fine")}))
    assert not [p for p in (tmp_path / "fine").iterdir()], "the write probe must be removed"


def test_ablation_rows_are_valid_run_configs():
    from minigo_core.bench.ablation import driver as ablation  # lazy: the benchmarks are no library API

    spec, rows = ablation.load_spec(str(REPO / "config" / "ablation" / "rows.yaml"))
    assert len(rows) >= 8 and rows[0].name == "default" and not rows[0].overrides
    for row in rows:
        data = ablation.row_config(spec, row)  # validates: a bad row fails here, not after an hour
        assert data["root"].endswith(f"{row.name}/run") and data["evaluate"]["games"] == 0
    merged = ablation.merge({"a": {"b": 1, "c": 2}, "d": 3}, {"a": {"b": 5}, "e": 6})
    assert merged == {"a": {"b": 5, "c": 2}, "d": 3, "e": 6}
