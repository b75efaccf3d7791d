"""`python -m minigo_core.bench ablation` with a `rating:` section: every row's last model rated on the
committed fixed 5x5 ladder (`config/ladder/5x5.json`) by `minigo ladder rate`, each row's cost figures read
from its run directory, the table sorted by Elo; a second invocation plays nothing again.

The rows are run directories made here as an older driver left them (`row_result.json` beside the run):
placeholder files (`minigo_core.bench.dag.build_run`) with a real random model as the last generation, job
records and training metrics with known figures. `minigo run` itself is tested elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import load_config
from minigo_core.bench.ablation import driver as ablation
from minigo_core.bench.ablation import warm
from minigo_core.bench.dag import build_run
from minigo_core.data import layout
from minigo_core.rating.ladder_rate import read_rating

REPO = Path(__file__).resolve().parents[2]
RATING = {"readouts": 8, "half_width": 400, "max_games": 8, "jobs": 2, "seed": 3}


def _write(path: str | Path, data: object) -> None:
    text = "".join(json.dumps(d) + "\n" for d in data) if isinstance(data, list) else json.dumps(data)
    Path(path).write_text(text)


def _old_row(spec: dict, row: ablation.Row, seed: int) -> Path:
    """The row's directory as the driver leaves it after its run: row.yaml, row_result.json and a run of 3
    generations (3 games each in one job of 5 recorded positions and 2 s; 10 and 15 training steps of 0.1 s on
    2 ranks), the last model a real one."""
    from minigo_core.nn import model  # lazy: torch, for this helper only

    row.root.mkdir(parents=True)
    row.config_path.write_text(yaml.safe_dump(ablation.row_config(spec, row), sort_keys=False))
    run = str(row.root / "run")
    cfg = load_config(str(build_run(run, row.config_path, done=3, games=3, generations=3)))
    for g in range(3):
        _write(layout.complete_marker_path(run, g), {"games": 3})
        job = {"attempt": {"threads": 1, "games_wall_s": 2.0}, "files": [{"positions": 5}]}
        _write(layout.selfplay_job_path(run, g, 0), job)
    for g, (first, last) in ((1, (0, 10)), (2, (10, 25))):
        start = {"event": "start", "start_step": first, "ranks": 2}
        step = {"event": "step", "step": last, "step_ms": 100.0, "loss": 1.0, "global_step": last}
        _write(layout.train_metrics_path(run, g), [start, step])
    for path in Path(run, "eval").rglob("*.json"):  # an ablation row plays no evaluation
        path.unlink()
    last = layout.model_path(run, 2)
    model.save_model(last, model.random_model(model.ModelConfig.from_run(cfg), seed=seed), {"generation": 2})
    result = {"name": row.name, "why": row.why, "set": row.overrides, "budget_s": 30.0, "wall_s": 31.5,
              "last_generation": 2, "model": last, "games": 6, "exit": -2}  # fmt: skip
    _write(row.result_path, result)
    return Path(last)


def _table_text(tmp_path: Path) -> str:
    return (tmp_path / "abl" / "ablation.md").read_text()


def _spec(tmp_path: Path, section: dict, rows: list[dict]) -> tuple[Path, dict, list[ablation.Row]]:
    """The spec file of a tiny 5x5 ablation (config/tiny.yaml's run) and what `load_spec` makes of it."""
    common = {"evaluate": {"games": 0}}
    path = tmp_path / "spec.yaml"
    data = {"budget_minutes": 0.5, "root": str(tmp_path / "abl"), "base": "config/tiny.yaml",
            "common": common, **section, "rows": rows}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return (path, *ablation.load_spec(str(path)))


@pytest.mark.slow
def test_rows_are_rated_on_the_fixed_5x5_ladder_once_with_their_costs(tmp_path, capsys):
    rows = [
        {"name": "default", "why": "as it is", "set": {}},
        {"name": "replay-4", "why": "4 examples a position", "set": {"train": {"replay_ratio": 4.0}}},
        {"name": "not-run", "why": "no result: --rate-only must not start it", "set": {}},
    ]
    spec_path, spec, specs = _spec(tmp_path, {"rating": RATING}, rows)
    models = {row.name: _old_row(spec, row, seed) for row, seed in zip(specs[:2], (5, 6), strict=True)}

    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    first = capsys.readouterr().out
    assert not (tmp_path / "abl" / "not-run").exists()
    stamps = {}
    for name, model_path in models.items():
        path = tmp_path / "abl" / name / "rating.json"
        rating = read_rating(str(path))  # the standard rating file: LadderError if not
        assert rating["spec"] == str(model_path) and rating["board_size"] == 5 and rating["seed"] == 3
        assert 0 < rating["games"] == sum(r["games"] for r in rating["rungs"].values()) <= 8
        assert rating["max_games"] == 8 and rating["target_half_width"] == 400
        assert rating["command"][:3] == ["minigo", "ladder", "rate"] and rating["cpu_seconds"] >= 0
        assert load_config(str(path.parent / "rating.yaml")).evaluate.readouts == 8
        stamps[name] = path.stat().st_mtime_ns

    summary = json.loads((tmp_path / "abl" / "ablation.json").read_text())
    assert summary["cpu"] and summary["rating"] == {**RATING, "half_width": 400.0}
    assert summary["base"]["file"] == "config/tiny.yaml" and len(summary["base"]["sha256"]) == 64
    assert summary["command"][-2:] == [str(spec_path), "--rate-only"]
    by_name = {row["name"]: row for row in summary["rows"]}
    assert set(by_name) == {"default", "replay-4"}
    elos = [row["rating"]["elo"] for row in summary["rows"]]
    assert elos == sorted(elos, reverse=True)
    for row in by_name.values():
        assert (row["last_generation"], row["games"], row["positions"], row["train_steps"]) == (2, 9, 15, 25)
        assert row["loop_core_s"] == 3 * 2.0 + (10 + 15) * 0.1 * 2 and row["wall_s"] == 31.5
    assert by_name["default"]["elo_vs_default"] == 0.0 and "| (baseline) |" in _table_text(tmp_path)
    other = by_name["replay-4"]
    assert other["elo_vs_default"] == round(other["rating"]["elo"] - by_name["default"]["rating"]["elo"], 1)

    table = _table_text(tmp_path)
    assert table.strip() in first
    line = next(x for x in table.splitlines() if x.startswith("| `replay-4` |"))
    lo, hi = other["rating"]["ci95"]
    assert f"| 2 | 9 | 15 | 25 | 11 | 32 | {other['rating']['elo']:.0f} [{lo:.0f}, {hi:.0f}]" in line

    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    again = capsys.readouterr().out
    assert "rating default" not in again and table.strip() in again
    for name in models:
        assert (tmp_path / "abl" / name / "rating.json").stat().st_mtime_ns == stamps[name]


def test_a_bad_rating_section_is_refused_naming_the_key(tmp_path):
    spec_path = tmp_path / "spec.yaml"
    for rating, says in (({"readouts": 0}, "rating.readouts"), ({"half_width": "wide"}, "rating.half_width"),
                         ({"game": 3}, "rating.game")):  # fmt: skip
        spec = {
            "rating": rating,
            "rows": [{"name": "default"}],
            "base": "config/tiny.yaml",
            "common": {"selfplay": {"parallel_readouts": 8, "readouts": 16, "fast_readouts": 8}},
        }
        spec_path.write_text(yaml.safe_dump(spec))
        with pytest.raises(SystemExit, match=says):
            ablation.load_spec(str(spec_path))


def test_a_spec_file_that_is_missing_not_yaml_or_nameless_is_refused_naming_the_file(tmp_path):
    spec_path = tmp_path / "spec.yaml"
    with pytest.raises(SystemExit, match=r"spec\.yaml: cannot be read"):
        ablation.load_spec(str(spec_path))
    spec_path.write_text("rows:\n  - name: a\n    why: a note: with a colon\n")
    with pytest.raises(SystemExit, match=r"spec\.yaml: not valid YAML at line 3"):
        ablation.load_spec(str(spec_path))
    spec_path.write_text("rows:\n  - why: no name\n")
    with pytest.raises(SystemExit, match=r"spec\.yaml: rows\[0\] needs a mapping with a `name`"):
        ablation.load_spec(str(spec_path))


def test_the_hour_spec_rates_on_the_ladder_and_its_rows_are_valid_configs():
    spec, rows = ablation.load_spec(str(REPO / "config" / "ablation" / "hour.yaml"))
    assert spec["rating"].readouts >= 1 and [r.name for r in rows[:2]] == ["base", "default"]
    assert any(r.from_scratch for r in rows) and not rows[0].from_scratch
    for row in rows:
        ablation.row_config(spec, row)  # validates: a bad row fails here, not after the rows' hours


@pytest.mark.slow
def test_a_spec_without_rating_still_plays_its_tournament(tmp_path, capsys):
    section = {
        "tournament": {"readouts": 8, "games_per_pair": 2, "opponents": ["random"], "opponent_games": 2}
    }
    rows = [{"name": "default", "why": "as it is", "set": {}}, {"name": "other", "why": "another", "set": {}}]
    spec_path, spec, specs = _spec(tmp_path, section, rows)
    for row, seed in zip(specs, (5, 6), strict=True):
        _old_row(spec, row, seed)
    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    summary = json.loads((tmp_path / "abl" / "ablation.json").read_text())
    assert summary["anchor"] == "random" and set(summary["elo"]) == {"default", "other", "random"}
    assert summary["games"]["default"] == 2 + 2 and _table_text(tmp_path).strip() in capsys.readouterr().out
    assert not list(tmp_path.glob("abl/*/rating.json"))


def test_a_row_whose_run_left_nothing_shows_dashes(tmp_path, capsys):
    spec_path, spec, (row,) = _spec(
        tmp_path, {"rating": RATING}, [{"name": "default", "why": "w", "set": {}}]
    )
    row.root.mkdir(parents=True)
    _write(
        row.result_path, {"name": "default", "why": "w", "set": {}, "wall_s": 12.0, "last_generation": None}
    )
    assert ablation.main(["--spec", str(spec_path), "--rate-only"]) == 0
    assert "| `default` | w | - | - | - | - | - | 12 | no model | - |" in _table_text(tmp_path)
    assert not (row.root / "rating.json").exists() and "no model" in capsys.readouterr().out


def test_a_warm_start_copies_the_finished_generations_only(tmp_path):
    """The base's generations with a model and a completion marker are copied; a later generation's files
    (a model whose games are not complete, a half-played game folder), the lock and the config are not."""
    base = tmp_path / "base" / "run"
    for g in range(4):
        Path(layout.model_path(str(base), g)).parent.mkdir(parents=True, exist_ok=True)
        Path(layout.model_path(str(base), g)).write_bytes(b"model %d" % g)
        (base / "train" / f"gen{g:04d}").mkdir(parents=True)
        (base / "logs" / "selfplay" / f"gen{g:04d}").mkdir(parents=True)
    (base / "games").mkdir()
    for g in range(3):  # generation 3's games were cut off
        Path(layout.complete_marker_path(str(base), g)).write_text("{}")
    (base / "games" / "gen0003").mkdir()
    (base / "minigo-run.lock").write_text("pid")
    (base / "config.yaml").write_text("base's")
    (base / "logs" / "snakemake").mkdir()
    assert warm.last_finished(base) == 2
    assert warm.last_finished(tmp_path / "nothing") is None
    row = tmp_path / "row" / "run"
    warm.copy_generations(base, row, 2)
    assert sorted(p.name for p in (row / "models").iterdir()) == [
        f"gen{g:04d}{layout.MODEL_SUFFIX}" for g in range(3)
    ]
    assert sorted(p.name for p in (row / "train").iterdir()) == ["gen0000", "gen0001", "gen0002"]
    assert sorted(p.name for p in (row / "logs" / "selfplay").iterdir()) == ["gen0000", "gen0001", "gen0002"]
    assert not (row / "games" / "gen0003").exists() and not (row / "logs" / "snakemake").exists()
    assert not (row / "minigo-run.lock").exists() and not (row / "config.yaml").exists()
    assert Path(layout.model_path(str(row), 2)).read_bytes() == b"model 2"


def test_a_stacked_row_is_compared_with_the_row_it_stacks_on(tmp_path):
    from minigo_core.bench.ablation import ladder

    def rating(elo: float, half: float) -> dict:
        return {"elo": elo, "ci95": [elo - half, elo + half], "games": 100, "anchor": "gnugo:1"}

    results = [
        {"name": n, "why": n, "set": {}, "last_generation": None} for n in ("default", "vmix", "vmix-x")
    ]
    ratings = {"default": rating(1000, 30), "vmix": rating(1200, 40), "vmix-x": rating(1250, 30)}
    rows = ladder.entries(tmp_path, results, ratings, against={"vmix-x": "vmix", "vmix": "default"})
    by = {e["name"]: e for e in rows}
    assert by["vmix-x"]["elo_vs_default"] == 250 and by["vmix-x"]["elo_vs"] == 50
    assert by["vmix-x"]["elo_vs_half_width"] == 50 and by["vmix-x"]["against"] == "vmix"
    assert "against" not in by["vmix"] and "elo_vs" not in by["default"]
    text = ladder.table(rows)
    assert "vs the row it stacks on (95%)" in text and "+50 +- 50 vs `vmix`" in text
    assert "vs the row it stacks on" not in ladder.table(ladder.entries(tmp_path, results, ratings))
    spec_path = tmp_path / "spec.yaml"  # `against` must name a row of the spec
    spec = {"base": "config/tiny.yaml", "rows": [{"name": "default"}, {"name": "x", "against": "nope"}]}
    spec_path.write_text(yaml.safe_dump(spec))
    with pytest.raises(SystemExit, match="against: 'nope' is not a row"):
        ablation.load_spec(str(spec_path))


def test_the_value_spec_stacks_its_later_rows_on_its_vmix_row():
    spec, rows = ablation.load_spec(str(REPO / "config" / "ablation" / "value.yaml"))
    stacked = [
        e for e in yaml.safe_load((REPO / "config/ablation/value.yaml").read_text())["rows"] if "against" in e
    ]
    assert stacked and all(e["against"] == "vmix-0.5" for e in stacked)
    mixes = {e["name"]: e["set"]["window"]["value_root_mix"] for e in stacked}
    assert all(w == 0.5 for name, w in mixes.items() if not name.startswith("vmix-0."))  # levers on 0.5
    assert all(w == float(name.split("-")[1]) for name, w in mixes.items() if name.startswith("vmix-0."))
