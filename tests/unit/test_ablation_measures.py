"""`python -m minigo_core.bench ablation` with a `measures:` section: every row's model gets its value head's
error on a position set and its search scaling (against itself at the readouts before), written once to
`{root}/ROW/measures.json` and shown beside its rating in the table; other settings measure it again; a bad
section is refused before any row runs.

The rows are tiny 5x5 run directories as the driver leaves them (row.yaml, row_result.json, a real random
model as the last generation); the position set is two seeded games of the random player (`value_error`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import load_config
from minigo_core.bench import value_error
from minigo_core.bench.ablation import driver as ablation
from minigo_core.data import layout

REPO = Path(__file__).resolve().parents[2]
RATING = {"readouts": 8, "half_width": 400, "max_games": 4, "jobs": 1, "seed": 3}


@pytest.fixture(scope="module")
def value_set(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("set") / "5x5.json")
    value_error.make_set(path, ["random", "random"], games=2, board_size=5, komi=7.5, seed=3)
    return path


def _spec(tmp_path: Path, sections: dict) -> tuple[Path, dict, list[ablation.Row]]:
    """A tiny 5x5 ablation of two rows (config/tiny.yaml's run) and what `load_spec` makes of it."""
    path = tmp_path / "spec.yaml"
    rows = [{"name": "default", "why": "as it is", "set": {}}, {"name": "other", "why": "another", "set": {}}]
    data = {"root": str(tmp_path / "abl"), "base": "config/tiny.yaml", "common": {"evaluate": {"games": 0}},
            **sections, "rows": rows}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return (path, *ablation.load_spec(str(path)))


def _row(spec: dict, row: ablation.Row, seed: int) -> Path:
    """The row's directory after its run: row.yaml, row_result.json, a real random model as generation 2."""
    from minigo_core.nn import model  # lazy: torch, for this helper only

    row.root.mkdir(parents=True)
    row.config_path.write_text(yaml.safe_dump(ablation.row_config(spec, row), sort_keys=False))
    run = str(row.root / "run")
    Path(layout.models_dir(run)).mkdir(parents=True)
    path = layout.model_path(run, 2)
    net = model.random_model(model.ModelConfig.from_run(load_config(str(row.config_path))), seed=seed)
    model.save_model(path, net, {"generation": 2})
    result = {"name": row.name, "why": row.why, "set": row.overrides, "wall_s": 30.0, "last_generation": 2,
              "model": path}  # fmt: skip
    row.result_path.write_text(json.dumps(result))
    return Path(path)


def _line(tmp_path: Path, name: str) -> str:
    table = (tmp_path / "abl" / "ablation.md").read_text()
    return next(x for x in table.splitlines() if x.startswith(f"| `{name}` |"))


@pytest.mark.slow
def test_each_rows_measures_are_made_once_beside_its_rating(tmp_path, capsys, value_set):
    measures = {"value_set": value_set, "scaling_readouts": [8, 16], "scaling_games": 2, "seed": 4}
    spec_path, spec, rows = _spec(tmp_path, {"rating": RATING, "measures": measures})
    models = {row.name: _row(spec, row, seed) for row, seed in zip(rows, (5, 6), strict=True)}

    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    first = capsys.readouterr().out
    table = (tmp_path / "abl" / "ablation.md").read_text()
    assert "| value MSE | sign right | Elo/doubling 8-16 (95%) |" in table and table.strip() in first
    summary = json.loads((tmp_path / "abl" / "ablation.json").read_text())
    assert summary["measures"]["scaling_readouts"] == [8, 16] and summary["measures"]["seed"] == 4
    games = value_error.read_set(value_set)["games"]
    stamps = {}
    for entry in summary["rows"]:
        name = entry["name"]
        path = tmp_path / "abl" / name / "measures.json"
        data = json.loads(path.read_text())
        assert entry["measures"] == data and data["model"] == str(models[name]) and data["generation"] == 2
        assert data["settings"]["value_set"] == value_set and len(data["settings"]["value_set_sha256"]) == 64
        value, scaling = data["value"], data["scaling"]
        assert value["positions"] == sum(len(g["moves"]) for g in games) and value["games"] == 2
        assert 0 <= value["all"]["mse"] <= 4 and 0 <= value["last_third"]["sign_rate"] <= 1
        assert value["baseline"]["all"]["sign_rate"] == 0.5
        (pair,) = scaling["rows"]  # 16 readouts against 8: one doubling
        assert (pair["readouts"], pair["games"]) == (16, 2) and pair["opponent"].endswith("gen0002@8")
        assert pair["per_doubling_ci95"] == pair["ci95"] and scaling["mean_per_doubling"] == pair["elo"]
        cells = _line(tmp_path, name).split(" | ")[-3:]
        assert cells[:2] == [f"{value['all']['mse']:.3f}", f"{100 * value['all']['sign_rate']:.1f}%"]
        assert cells[2].startswith(f"{pair['elo']:+.0f} ")
        stamps[name] = path.stat().st_mtime_ns

    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0  # nothing measured again
    again = capsys.readouterr().out
    assert "measures of" not in again and table.strip() in again
    assert all((tmp_path / "abl" / n / "measures.json").stat().st_mtime_ns == t for n, t in stamps.items())

    # other settings (the committed 9x9 set: no value error of a 5x5 model): measured again, 2 rows at once
    nine = {**measures, "value_set": "config/value_positions/9x9.json", "jobs": 2}
    spec_path, spec, rows = _spec(tmp_path, {"rating": RATING, "measures": nine})
    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    for name in stamps:
        data = json.loads((tmp_path / "abl" / name / "measures.json").read_text())
        assert data["settings"]["value_set"] == "config/value_positions/9x9.json"
        assert (
            data["value"] == {"board_size": 5, "note": data["value"]["note"]}
            and "9x9" in data["value"]["note"]
        )
        assert " | no 5x5 set | - | " in _line(tmp_path, name)


RATED = {"rating": RATING}


@pytest.mark.parametrize(
    ("sections", "says"),
    [
        ({**RATED, "measures": {"scaling_readouts": [16, 8]}}, "measures.scaling_readouts"),
        ({**RATED, "measures": {"scaling_games": 0}}, "measures.scaling_games"),
        ({**RATED, "measures": {"seeds": 1}}, r"measures\.seeds"),
        ({**RATED, "measures": {"value_set": "config/value_positions/none.json"}}, "measures.value_set"),
        ({**RATED, "measures": 3}, "`measures` must be a mapping"),
        ({"measures": {}}, "it needs `rating:`"),
    ],
)
def test_a_bad_measures_section_is_refused_naming_the_key(tmp_path, sections, says):
    with pytest.raises(SystemExit, match=says):
        _spec(tmp_path, sections)


def test_the_value_spec_measures_its_rows_and_the_older_specs_do_not():
    spec, _ = ablation.load_spec(str(REPO / "config" / "ablation" / "value.yaml"))
    assert spec["measures"].scaling_readouts == (64, 128, 256) and spec["measures"].scaling_games >= 1
    assert spec["measures"].value_set == "config/value_positions/9x9.json"
    for name in ("hour.yaml", "rows.yaml"):
        assert "measures" not in ablation.load_spec(str(REPO / "config" / "ablation" / name))[0]


def test_the_measures_are_of_each_rows_first_seed_that_ran():
    from minigo_core.bench.ablation import ladder

    results = [
        {"name": "a", "row": "a", "seed": 1},
        {"name": "b@s4", "row": "b", "seed": 4},  # a row run at later seeds only: the first of them
        {"name": "a@s2", "row": "a", "seed": 2},
        {"name": "b@s3", "row": "b", "seed": 3},
        {"name": "c"},  # a row of a spec without seeds
    ]
    assert [r["name"] for r in ladder.first_replicates(results)] == ["a", "b@s3", "c"]
