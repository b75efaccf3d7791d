"""Are two runs the same run? `minigo_core.data.compare` and its command line, `python -m tools.compare_runs`.

Two copies of a small fake run are the same run; a changed byte of a game file, a changed JSON value that is
not a wall-clock field, a missing or an extra artifact each make them differ, and the difference names the
file; a changed wall-clock field, log, status table or temporary file does not.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from minigo_core.data import compare
from tools import compare_runs

GAME = "games/gen0001/game00000.arrow"
EVAL = "eval/gen0001/vs_gen0.json"
RECORD = "games/gen0001/job00000.json"
METRICS = "train/gen0001/metrics.jsonl"
ELO_CSV = "summary/elo.csv"


def fake_run(root: Path) -> Path:
    """A run's files, small: a game file, a job record, a model, an evaluation, metrics, ratings, a log."""
    files = {
        "config.yaml": "root: runs/tiny\nseed: 7\n",
        GAME: bytes(range(64)),
        "models/gen0001.safetensors": b"\x08\x00weights",
        "games/gen0001.complete.json": json.dumps({"generation": 1, "games": 1}),
        RECORD: json.dumps({"games": 1, "files": [{"game": 0}], "attempt": {"host": "a", "seconds": 1.5}}),
        EVAL: json.dumps({"wins": 3, "games": 4, "started_unix": 1.0, "player": {"seconds": 2.0}}),
        METRICS: "\n".join(json.dumps(line) for line in ({"event": "start", "load_s": 0.1}, {"loss": 2.5})),
        ELO_CSV: "player,elo,model_time_s\ngen0001,81.3,10.9\n",
        "summary/status.txt": "as of 09:44\n",
        "logs/selfplay/job00000.log": "played 1 game\n",
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


@pytest.fixture
def runs(tmp_path):
    a = fake_run(tmp_path / "a" / "runs" / "tiny")
    b = tmp_path / "b" / "runs" / "tiny"
    shutil.copytree(a, b)
    return a, b


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_two_copies_of_a_run_are_the_same_run(runs, capsys):
    a, b = runs
    assert compare.differences(a, b) == []
    assert compare_runs.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out.splitlines()
    # logs and the status table are no artifacts; 4 of the 8 are compared byte for byte
    assert out == [f"compared 8 files of {a} with {b} (4 byte for byte)", "the same run"]


def change_game_byte(b: Path) -> None:
    data = bytearray((b / GAME).read_bytes())
    data[10] ^= 1
    (b / GAME).write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("change", "expected", "line"),
    [
        (change_game_byte, compare.Difference(GAME, "bytes"), f"bytes differ: {GAME}"),
        (lambda b: edit_json(b / EVAL, lambda d: d.update(wins=2)), compare.Difference(EVAL, "data"),
         f"JSON differs: {EVAL}"),
        (lambda b: edit_json(b / RECORD, lambda d: d["files"].append({"game": 1})),
         compare.Difference(RECORD, "data"), f"JSON differs: {RECORD}"),
        (lambda b: (b / METRICS).write_text((b / METRICS).read_text().replace("2.5", "2.25")),
         compare.Difference(METRICS, "data"), f"JSON lines differ: {METRICS}"),
        (lambda b: (b / ELO_CSV).write_text((b / ELO_CSV).read_text().replace("81.3", "80.0")),
         compare.Difference(ELO_CSV, "data"), f"CSV differs: {ELO_CSV}"),
        (lambda b: (b / GAME).unlink(), compare.Difference(GAME, "missing"), "missing in {b}: " + GAME),
        (lambda b: (b / "games/gen0001/game00001.arrow").write_bytes(b"x"),
         compare.Difference("games/gen0001/game00001.arrow", "extra"),
         "only in {b}: games/gen0001/game00001.arrow"),
    ],
    ids=["game-byte", "eval-value", "record-value", "metrics-value", "ratings-value", "missing", "extra"],
)  # fmt: skip
def test_a_changed_or_missing_artifact_makes_them_differ_and_is_named(runs, capsys, change, expected, line):
    a, b = runs
    change(b)
    assert compare.differences(a, b) == [expected]
    assert compare_runs.main([str(a), str(b)]) == 1
    assert capsys.readouterr().out.splitlines()[1:] == [line.format(b=b)]


def add_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.mark.parametrize(
    "change",
    [
        lambda b: edit_json(b / EVAL, lambda d: d.update(started_unix=99.0)),
        lambda b: edit_json(b / RECORD, lambda d: d["attempt"].update(host="b", seconds=7.0)),
        lambda b: (b / METRICS).write_text((b / METRICS).read_text().replace("0.1", "0.3")),
        lambda b: (b / ELO_CSV).write_text((b / ELO_CSV).read_text().replace("10.9", "12.0")),
        lambda b: (b / "logs/selfplay/job00000.log").write_text("another log\n"),
        lambda b: (b / "summary/status.txt").write_text("as of 10:00\n"),
        lambda b: (b / "games/gen0001/.tmp-game00001.arrow.123.abc").write_bytes(b"half"),
        lambda b: add_file(b / "tensorboard/train/events.out.tfevents.gen0001", b"wall times differ"),
    ],
    ids=[
        "eval-clock",
        "record-attempt",
        "metrics-clock",
        "ratings-clock",
        "log",
        "status",
        "temporary",
        "tensorboard",
    ],
)
def test_wall_clock_fields_logs_and_temporary_files_do_not_count(runs, change):
    a, b = runs
    change(b)
    assert compare.differences(a, b) == []
    assert compare_runs.main([str(a), str(b)]) == 0


def test_the_command_line_wants_two_runs(capsys):
    assert compare_runs.main(["only-one"]) == 2
    assert "python -m tools.compare_runs RUN_A RUN_B" in capsys.readouterr().err
