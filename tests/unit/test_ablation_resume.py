"""An ablation row cut off before its result goes on where it stopped, for what is left of its budget.

The row's run is a stand-in for `minigo run` (`ablation.run_command` patched): a Python process that writes
the next generation's model file (its bytes the row's name) and completion marker every 0.2 s until the
row's `generations`, as the workflow does; what is tested is the driver: its progress file, the budget it
spends across pieces, the unlock before a resumed piece, that a changed row config starts over, and a
branch's copy of its source's generations. `minigo run` itself is tested elsewhere."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from minigo_core.bench.ablation import driver as ablation
from minigo_core.data import layout

FAKE_RUN = """
import sys, time, pathlib, yaml
from minigo_core.data import layout
if "--unlock" in sys.argv:
    open(sys.argv[1], "a").write("unlock\\n"); sys.exit(0)
cfg = yaml.safe_load(open(sys.argv[2]))
open(sys.argv[1], "a").write("run\\n")
for g in range(cfg["generations"] + 1):
    path = pathlib.Path(layout.model_path(cfg["root"], g))
    if path.exists():
        continue
    time.sleep(0.2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pathlib.Path(sys.argv[2]).parent.name.encode())  # the row's name
    marker = pathlib.Path(layout.complete_marker_path(cfg["root"], g))
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("{}")
"""


@pytest.fixture
def fake_run(tmp_path, monkeypatch):
    calls = tmp_path / "calls.txt"
    script = tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN)
    monkeypatch.setattr(ablation, "run_command", lambda row: [sys.executable, str(script), str(calls),
                                                              str(row.config_path)])  # fmt: skip
    monkeypatch.setattr(ablation, "PROGRESS_EVERY_S", 0.1)
    return calls


def _spec(tmp_path: Path, generations: int) -> tuple[dict, ablation.Row]:
    path = tmp_path / "spec.yaml"
    data = {"budget_minutes": 1, "root": str(tmp_path / "abl"), "base": "config/tiny.yaml",
            "common": {"generations": generations, "evaluate": {"games": 0}},
            "rows": [{"name": "default", "why": "w", "set": {}}]}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    spec, (row,) = ablation.load_spec(str(path))
    return spec, row


def _cut_off(spec: dict, row: ablation.Row, spent: float, models: int) -> None:
    """The row's folder as a driver killed mid-run leaves it: row.yaml, its progress, some models."""
    data = ablation.row_config(spec, row)
    row.root.mkdir(parents=True)
    row.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    (row.root / ablation.PROGRESS_FILE).write_text(
        json.dumps({"spent_s": spent, "pieces": 1, "warm_start": None})
    )
    for g in range(models):
        path = Path(layout.model_path(data["root"], g))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"before the cut")


def test_a_row_runs_to_its_generations_and_records_its_time(tmp_path, fake_run):
    spec, row = _spec(tmp_path, generations=2)
    result = ablation.run_row(spec, row, budget_s=60.0)
    assert result["last_generation"] == 2 and result["exit"] == 0 and result["pieces"] == 1
    progress = json.loads((row.root / ablation.PROGRESS_FILE).read_text())
    assert 0.4 < progress["spent_s"] == result["wall_s"] < 30
    assert fake_run.read_text() == "run\n"  # no unlock before a first piece


def test_a_cut_off_row_resumes_with_what_is_left_of_its_budget(tmp_path, fake_run):
    spec, row = _spec(tmp_path, generations=3)
    _cut_off(spec, row, spent=7.5, models=2)
    result = ablation.run_row(spec, row, budget_s=60.0)
    data = ablation.row_config(spec, row)
    assert Path(layout.model_path(data["root"], 1)).read_bytes() == b"before the cut"  # kept, not redone
    assert Path(layout.model_path(data["root"], 3)).read_bytes() == b"default"
    assert result["last_generation"] == 3 and result["pieces"] == 2
    assert 7.5 + 0.3 < result["wall_s"] < 7.5 + 30  # the earlier piece's seconds count
    assert fake_run.read_text() == "unlock\nrun\n"


def test_a_row_whose_budget_was_spent_is_not_run_again(tmp_path, fake_run):
    spec, row = _spec(tmp_path, generations=3)
    _cut_off(spec, row, spent=61.0, models=2)
    result = ablation.run_row(spec, row, budget_s=60.0)
    assert result["last_generation"] == 1 and result["exit"] is None and not fake_run.exists()


def test_the_budget_stops_a_resumed_row(tmp_path, fake_run):
    spec, row = _spec(tmp_path, generations=500)
    _cut_off(spec, row, spent=50.0, models=1)  # 10 s left: time for the stand-in to start on a loaded machine
    result = ablation.run_row(spec, row, budget_s=60.0)
    # at most 10 s / 0.2 s = 50 models in the piece: the budget, not the 500 generations, ended it
    assert 59.9 <= result["wall_s"] < 75 and 1 <= result["last_generation"] <= 51


def test_a_row_cut_off_under_another_config_starts_again(tmp_path, fake_run):
    spec, row = _spec(tmp_path, generations=2)
    _cut_off(spec, row, spent=7.5, models=2)
    row.config_path.write_text(row.config_path.read_text().replace("seed: ", "seed: 9", 1))
    result = ablation.run_row(spec, row, budget_s=60.0)
    data = ablation.row_config(spec, row)
    assert Path(layout.model_path(data["root"], 1)).read_bytes() == b"default"  # redone
    assert result["pieces"] == 1 and result["wall_s"] < 7.5


def test_a_row_resumes_under_a_config_that_only_adds_keys(tmp_path, fake_run):
    """A later commit's run config may have keys the cut-off row's row.yaml lacks (their bases carry the
    value that keeps the table's behaviour): the row goes on, and its row.yaml gains them."""
    spec, row = _spec(tmp_path, generations=2)
    _cut_off(spec, row, spent=7.5, models=2)
    data = yaml.safe_load(row.config_path.read_text())
    del data["evaluate"]["share"]
    row.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = ablation.run_row(spec, row, budget_s=60.0)
    assert result["pieces"] == 2 and "share" in yaml.safe_load(row.config_path.read_text())["evaluate"]


def test_a_signal_stops_the_row_and_keeps_its_time(tmp_path, fake_run):
    """SIGTERM to the driver (or SIGINT, even when the shell started it with SIGINT ignored) stops the row's
    run and records the seconds it had, so a later invocation goes on from there."""
    import signal
    import threading

    spec, row = _spec(tmp_path, generations=500)
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        ablation._stop_on_signals()
        threading.Timer(1.0, lambda: signal.raise_signal(signal.SIGTERM)).start()
        with pytest.raises(KeyboardInterrupt):
            ablation.run_row(spec, row, budget_s=60.0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    progress = json.loads((row.root / ablation.PROGRESS_FILE).read_text())
    assert 0.8 < progress["spent_s"] < 30 and progress["pieces"] == 1
    assert not row.result_path.exists()


def test_a_row_may_run_at_its_own_wall_budget(tmp_path, monkeypatch):
    """An equal-time row: `budget_minutes` on the row is its budget (each seed's replicate too), the spec's
    for the others; a budget that is not a positive number is refused before any row runs."""
    path = tmp_path / "spec.yaml"
    rows = [
        {"name": "default", "set": {}},
        {"name": "big", "set": {"model": {"blocks": 2}}, "budget_minutes": 0.5},
    ]
    data = {"budget_minutes": 2, "root": str(tmp_path / "abl"), "base": "config/tiny.yaml", "seeds": [1, 2],
            "rating": {"readouts": 8}, "common": {"generations": 2, "evaluate": {"games": 0}},
            "rows": rows}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    budgets = {}

    def run_row(spec, row, budget_s, base=None):
        budgets[row.name] = budget_s
        return {"name": row.name, "last_generation": 2, "wall_s": 1.0, "model": None}

    monkeypatch.setattr(ablation, "run_row", run_row)
    assert ablation.main(["--spec", str(path), "--no-rating"]) == 0
    assert budgets == {"default": 120.0, "big": 30.0, "default@s2": 120.0, "big@s2": 30.0}
    rows[1]["budget_minutes"] = 0
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SystemExit, match="row big: budget_minutes must be a positive number"):
        ablation.load_spec(str(path))


def _branch_spec(tmp_path: Path, **extra) -> Path:
    late = {"name": "late", "why": "w", "set": {"train": {"learning_rate": [[0, 0.03], [900, 0.001]]}},
            "branch": {"row": "default", "generation": 2}, **extra}  # fmt: skip
    data = {"budget_minutes": 1, "root": str(tmp_path / "abl"), "base": "config/tiny.yaml",
            "common": {"generations": 4, "evaluate": {"games": 0}},
            "rows": [{"name": "default", "why": "w", "set": {}}, late]}  # fmt: skip
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_branch_goes_on_from_its_source_after_its_generation(tmp_path, fake_run):
    """`branch: {row: default, generation: 2}`: the row's generations 0..2 are the source's files, 3 and 4
    its own run's; its wall time counts the source's share (2 of its 4 generations)."""
    spec_path = _branch_spec(tmp_path)
    assert ablation.main(["--spec", str(spec_path), "--no-rating"]) == 0
    spec, (default, late) = ablation.load_spec(str(spec_path))
    made = [Path(layout.model_path(str(late.root / "run"), g)).read_bytes() for g in range(5)]
    assert made == [b"default"] * 3 + [b"late"] * 2
    src, result = (json.loads(r.result_path.read_text()) for r in (default, late))
    assert result["last_generation"] == 4 and result["warm_start"]["row"] == "default"
    assert result["warm_start"]["generation"] == 2
    assert result["warm_start"]["wall_s"] == pytest.approx(src["wall_s"] / 2, abs=0.1)
    assert result["total_wall_s"] == pytest.approx(result["wall_s"] + result["warm_start"]["wall_s"], abs=0.1)


@pytest.mark.parametrize(
    "extra,message",
    [
        ({"branch": {"row": "late", "generation": 2}}, "not a row above it"),
        ({"branch": {"row": "default", "generation": 4}}, "below the row's generations"),
        ({"branch": {"row": "default", "generation": 0}}, "generation >= 1"),
        ({"branch": {"row": "default"}}, "needs `row` and `generation`"),
        ({"from_scratch": True}, "do not go together"),
    ],
)
def test_a_bad_branch_is_refused_before_any_row_runs(tmp_path, extra, message):
    with pytest.raises(SystemExit, match=message):
        ablation.load_spec(str(_branch_spec(tmp_path, **extra)))


def test_a_branch_s_replicate_goes_on_from_the_source_s_replicate_of_its_seed(tmp_path):
    path = _branch_spec(tmp_path)
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "seeds": [1, 2], "rating": {"readouts": 8}}))
    spec, rows = ablation.load_spec(str(path))
    late2 = next(r for r in rows if r.name == "late@s2")
    with pytest.raises(SystemExit, match="run default@s2 first"):
        ablation.branch_source(rows, late2)
    run = tmp_path / "abl" / "default@s2" / "run"
    for g in range(4):
        Path(layout.model_path(str(run), g)).parent.mkdir(parents=True, exist_ok=True)
        Path(layout.model_path(str(run), g)).write_bytes(b"m")
        Path(layout.complete_marker_path(str(run), g)).parent.mkdir(parents=True, exist_ok=True)
        Path(layout.complete_marker_path(str(run), g)).write_text("{}")
    (tmp_path / "abl" / "default@s2" / ablation.PROGRESS_FILE).write_text(json.dumps({"spent_s": 30.0}))
    start = ablation.branch_source(rows, late2)
    assert start["name"] == "default@s2" and start["generation"] == 2 and start["wall_s"] == 20.0
