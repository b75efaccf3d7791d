"""`minigo status ROOT --breakdown`: a synthetic run directory whose every figure is known, so each category
and the total can be checked exactly (`minigo_core/report/breakdown.py` says which field each one reads)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from minigo_core.data import layout
from minigo_core.jobs import status as status_cmd
from minigo_core.report import breakdown

T0 = 1_700_000_000  # an integer epoch second: Snakemake's stamps are whole seconds, read as their middle


def _write(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def _stamp(t: float) -> str:
    return "[" + time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(t)) + "]"


# (rule, start second, outputs, threads, inputs), paths inside the run: their mtimes are set in `make_run`
JOBS = [
    ("run_config", 0, ["config.yaml"], 1, []),
    ("bootstrap", 2, ["models/gen0000.safetensors"], 1, ["config.yaml"]),
    ("selfplay", 4, ["games/gen0000/job00000.json"], 1, ["models/gen0000.safetensors"]),
    ("games_complete", 8, ["games/gen0000.complete.json"], 1, ["config.yaml", "games/gen0000/job00000.json"]),
    ("window", 9, ["window/gen0001/manifest.json"], 1, ["games/gen0000.complete.json"]),
    (
        "train",
        11,
        ["models/gen0001.safetensors", "train/gen0001/metrics.jsonl"],
        2,
        ["window/gen0001/manifest.json"],
    ),
    ("evaluate", 17, ["eval/gen0001/vs_gen0.json"], 1, ["models/gen0001.safetensors"]),
    ("ratings", 22, ["summary/elo.json"], 1, ["eval/gen0001/vs_gen0.json"]),  # after the last artifact
]


def snakemake_log(root: Path) -> str:
    lines = ["Provided cores: 2", "Rules claiming more threads will be scaled down."]
    for rule, start, outputs, threads, inputs in JOBS:
        lines += [
            "",
            _stamp(T0 + start),
            f"localrule {rule}:",
            f"    input: {', '.join(str(root / i) for i in inputs)}",
        ]
        lines += [f"    output: {', '.join(str(root / o) for o in outputs)}", "    jobid: 1"]
        lines += [f"    threads: {threads}"] if threads > 1 else []
        lines += [_stamp(T0 + start + 1), "Finished jobid: 1 (Rule: x)"]
    return "\n".join(lines) + "\n"


@pytest.fixture()
def make_run(tmp_path, write_config):
    """A finished synthetic run: generation 0 (bootstrap, one self-play job) and generation 1 (window,
    training of 2 ranks, one evaluation), and `minigo run`'s Snakemake log."""
    config = write_config(tmp_path)
    root = tmp_path / "run"
    root.mkdir()
    shutil.copy(config, layout.effective_config_path(str(root)))
    os.utime(layout.effective_config_path(str(root)), (T0 + 1.5, T0 + 1.5))
    _write(root / "models/gen0000.safetensors", "m", T0 + 3.5)
    attempt = {"threads": 1, "process_start_epoch": T0 + 4.7, "startup_s": 0.4, "startup_cpu_s": 0.3}
    attempt.update({"games_wall_s": 2.0, "games_cpu_s": 1.5})
    _write(root / "games/gen0000/job00000.json", json.dumps({"attempt": attempt}), T0 + 7.5)
    _write(root / "games/gen0000.complete.json", "{}", T0 + 9.0)
    manifest = {"timings": {"read_s": 0.8, "shuffle_write_s": 0.2, "total_s": 1.0}}
    _write(root / "window/gen0001/manifest.json", json.dumps(manifest), T0 + 11.0)
    metrics = [
        {"event": "start", "start_step": 0, "ranks": 2, "load_s": 0.1},
        {"event": "step", "step": 2, "step_ms": 500.0},
        {"event": "step", "step": 4, "step_ms": 500.0},
        {"event": "end", "wall_s": 4.0, "load_s": 0.1},
    ]
    _write(root / "train/gen0001/metrics.jsonl", "".join(json.dumps(m) + "\n" for m in metrics), T0 + 16.0)
    _write(root / "models/gen0001.safetensors", "m", T0 + 16.5)
    match = {"wall_seconds": 3.0, "started_unix": T0 + 18.0, "finished_unix": T0 + 21.0}
    _write(root / "eval/gen0001/vs_gen0.json", json.dumps(match), T0 + 21.5)
    _write(root / "summary/elo.json", "{}", T0 + 23.0)
    _write(Path(layout.snakemake_log_path(str(root), "20231114-000000", 1)), snakemake_log(root), T0 + 24)
    return root


def test_each_category_is_read_from_its_files_and_they_add_up_to_cores_times_wall(make_run):
    b = breakdown.collect(str(make_run))
    assert (b.cores, b.cores_source) == (2, "Snakemake log (Provided cores)")
    # the first job's start (stamp T0, read as T0 + 0.5) to the last artifact (the results file, T0 + 21.5)
    assert b.start == T0 + 0.5 and b.end == T0 + 21.5 and b.wall_s == 21.0 and b.total == 42.0
    expected = {
        "selfplay_games": 2.0,  # games_wall_s x threads
        "training_steps": 4.0,  # (2 x 500 ms + 2 x 500 ms) x 2 ranks x 1 thread per rank
        # self-play span 3 - 2 of games; window 1.5 - 1; training (span 5 - 2 s of steps) x 2; eval 4 - 3
        "startup": 1.0 + 0.5 + 6.0 + 1.0,
        "window": 1.0,  # timings.total_s x read_threads
        "evaluation": 3.0,  # wall_seconds x selfplay.threads
        "other_jobs": 1.0 + 1.0 + 0.5,  # run_config, bootstrap, games_complete spans; not ratings
        "scheduling": None,  # not measurable: in idle
    }
    for key, value in expected.items():
        assert b.run[key] == pytest.approx(value) if value is not None else b.run[key] is None, key
    parts = sum(v for k, v in b.run.items() if v is not None and k != "idle")
    assert b.run["idle"] == pytest.approx(42.0 - 21.0)
    assert parts + b.run["idle"] - b.overlap == pytest.approx(b.total, rel=1e-12) and b.overlap == 0
    assert b.selfplay_games_cpu == 1.5
    # newest input to start: self-play 4.5 - 3.5, games-complete 8.5 - 7.5, window 9.5 - 9, train 11.5 - 11
    assert b.dispatch_jobs == 4 and b.dispatch_s == pytest.approx(3.0)
    gen1 = b.generations[1]
    assert gen1["training_steps"] == pytest.approx(4.0) and gen1["span_s"] == pytest.approx(13.0)
    assert b.generations[0]["selfplay_games"] == pytest.approx(2.0) and b.generations[0]["span_s"] is None


def test_missing_files_leave_their_category_unknown_and_the_sum_holds(make_run):
    os.remove(make_run / "eval/gen0001/vs_gen0.json")
    shutil.rmtree(layout.snakemake_logs_dir(str(make_run)))
    (make_run / "train/gen0001/metrics.jsonl").write_text("not json\n")
    b = breakdown.collect(str(make_run), cores=3)
    assert (b.cores, b.cores_source) == (3, "--cores")
    assert b.run["evaluation"] is None and b.run["other_jobs"] is None and b.run["training_steps"] is None
    # without a log: self-play start-up is the record's startup_s; the wall starts at the config's mtime
    assert b.run["startup"] == pytest.approx(0.4) and b.start == T0 + 1.5
    parts = sum(v for k, v in b.run.items() if v is not None and k != "idle")
    assert parts + b.run["idle"] - b.overlap == pytest.approx(b.total, rel=1e-12)
    assert any("evaluation: no file found" in note for note in b.notes)
    assert any("metrics.jsonl has no step records" in note for note in b.notes)
    text = breakdown.format_table(b, per_generation=True)
    assert "evaluation" in text and "os.cpu_count" not in text


def test_an_empty_directory_is_all_unknown(tmp_path):
    b = breakdown.collect(str(tmp_path))
    assert b.total == 0 and all(b.run[k] is None for k in breakdown.PARTS) and b.run["idle"] == 0
    assert "os.cpu_count" in breakdown.format_table(b)


def test_jobs_holding_more_than_the_cores_are_reported_as_overlap(make_run):
    attempt = {"threads": 1, "games_wall_s": 40.0, "startup_s": 0.0}
    _write(make_run / "games/gen0000/job00001.json", json.dumps({"attempt": attempt}), T0 + 7.0)
    b = breakdown.collect(str(make_run), cores=1)
    parts = sum(v for k, v in b.run.items() if v is not None and k != "idle")
    assert b.run["idle"] == 0 and b.overlap == pytest.approx(parts - 21.0)
    assert parts + b.run["idle"] - b.overlap == pytest.approx(b.total, rel=1e-12)
    assert "overlap" in breakdown.format_table(b)


def test_the_command_prints_the_table_and_json(make_run, capsys):
    assert status_cmd.cli_main([str(make_run), "--breakdown", "--per-generation"]) == 0
    out = capsys.readouterr().out
    assert "self-play games" in out and "idle" in out and "core-s per generation" in out
    assert status_cmd.cli_main([str(make_run), "--breakdown", "--json", "--cores", "4"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cores"] == 4 and data["core_seconds"] == pytest.approx(4 * 21.0)
    assert set(data["categories"]) == {key for key, _ in breakdown.CATEGORIES} and "generations" not in data
    assert sum(v for v in data["categories"].values() if v is not None) == pytest.approx(data["core_seconds"])


def test_a_niced_evaluation_counts_its_measured_cpu_not_its_wall_time(make_run):
    # a match that ran niced beside self-play and training: 3 s of wall, but 0.8 s of CPU (games and GNU Go)
    path = make_run / "eval/gen0001/vs_gen0.json"
    match = {"wall_seconds": 3.0, "started_unix": T0 + 18.0, "finished_unix": T0 + 21.0}
    _write(path, json.dumps({**match, "cpu_seconds": 0.8, "startup_cpu_seconds": 0.25}), T0 + 21.5)
    b = breakdown.collect(str(make_run))
    assert b.run["evaluation"] == pytest.approx(0.8)
    # start-up: the process's CPU before its first game, in place of the job's span minus its wall time
    assert b.run["startup"] == pytest.approx(1.0 + 0.5 + 6.0 + 0.25)
    parts = sum(v for k, v in b.run.items() if v is not None and k != "idle")
    assert parts + b.run["idle"] - b.overlap == pytest.approx(b.total, rel=1e-12)


def test_until_last_model_leaves_out_what_was_written_after_it(make_run):
    record = make_run / "games/gen0000/job00000.json"
    data = json.loads(record.read_text())
    data["files"] = [{"game": 0, "positions": 40}, {"game": 1, "positions": 32}]
    _write(record, json.dumps(data), T0 + 7.5)
    whole = breakdown.collect(str(make_run))
    loop = breakdown.collect(str(make_run), until_last_model=True)
    assert whole.positions == loop.positions == 72
    assert loop.end == T0 + 16.5 and loop.wall_s == 16.0  # the newest model file, not the results file
    assert loop.positions_per_hour == pytest.approx(72 * 3600 / 16.0)
    assert whole.run["evaluation"] == pytest.approx(3.0) and loop.run["evaluation"] is None
    assert loop.run["selfplay_games"] == whole.run["selfplay_games"]
    assert loop.run["training_steps"] == whole.run["training_steps"]
    parts = sum(v for k, v in loop.run.items() if v is not None and k != "idle")
    assert parts + loop.run["idle"] - loop.overlap == pytest.approx(loop.total, rel=1e-12)
    assert loop.to_json()["until_last_model"] is True
    assert "per wall-hour" in breakdown.format_table(loop) and "% of the core-s" in breakdown.format_table(
        loop
    )


def test_window_parts_count_as_window_and_leave_the_games_complete_job(make_run):
    # generation 0's games-complete job (span 9 - 8.5 = 0.5 s x 1 thread) spent 0.1 s x 2 readers on the
    # window parts of its games (`data/parts.py`): window time of generation 0, not other jobs
    parts = {"timings": {"check_s": 0.05, "total_s": 0.1}, "threads": 2}
    _write(Path(layout.parts_manifest_path(str(make_run), 0)), json.dumps(parts), T0 + 8.8)
    b = breakdown.collect(str(make_run))
    assert b.run["window"] == pytest.approx(1.0 + 0.2) and b.generations[0]["window"] == pytest.approx(0.2)
    assert b.run["other_jobs"] == pytest.approx(1.0 + 1.0 + 0.5 - 0.2)
    assert b.generations[0]["other_jobs"] == pytest.approx(1.0 + 0.5 - 0.2)  # bootstrap, games-complete
    parts_sum = sum(v for k, v in b.run.items() if v is not None and k != "idle")
    assert parts_sum + b.run["idle"] - b.overlap == pytest.approx(b.total, rel=1e-12)
