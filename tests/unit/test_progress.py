"""`minigo run`'s status line (`minigo_core.report.progress`): fed Snakemake lines and a fake clock, on a
temporary run root with fake model files and results files; no Snakemake is started."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from minigo_core.data import layout
from minigo_core.pipeline import runner
from minigo_core.rating.bradley_terry import fit_bradley_terry
from minigo_core.report import progress as progress_module
from minigo_core.report.progress import (
    CLEAR,
    ProgressDisplay,
    RunProgress,
    fit_parts,
    format_elo,
    latest_model,
)
from minigo_core.report.status import format_duration

START = 1_000_000.0


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def add_model(root: str, generation: int) -> None:
    path = Path(layout.model_path(root, generation))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


@pytest.fixture()
def add_match(write_match):
    """`add_match(root, generation, opponent, winners)`: a results file as `minigo evaluate` writes it,
    finished at START."""
    return lambda root, generation, opponent, winners: write_match(root, generation, opponent, winners, START)


@pytest.fixture()
def root(tmp_path) -> str:
    return str(tmp_path / "run")


# ------------------------------------------------------------------------------------------- formatting


def test_durations():
    assert format_duration(0) == "0:00"
    assert format_duration(59.6) == "1:00"
    assert format_duration(312) == "5:12"
    assert format_duration(3600 + 125) == "1:02:05"
    assert format_duration(-5) == "0:00"
    assert format_duration(float("nan")) == "0:00"


def test_parts_are_dropped_least_important_first():
    parts = [(9, ["gen 7/24"]), (3, ["jobs 45/120"]), (1, ["5:12 elapsed"]), (2, ["long elo", "elo"])]
    assert fit_parts(parts, 100, " | ") == "gen 7/24 | jobs 45/120 | 5:12 elapsed | long elo"
    assert fit_parts(parts, 40, " | ") == "gen 7/24 | jobs 45/120 | long elo"
    assert fit_parts(parts, 30, " | ") == "gen 7/24 | jobs 45/120 | elo"
    assert fit_parts(parts, 12, " | ") == "gen 7/24"
    assert fit_parts(parts, 5, " | ") == "gen 7"
    assert fit_parts([(1, []), (2, ["x"])], 10, " | ") == "x"


def test_elo_text():
    assert format_elo("gnugo:1", -320.4, -410, -230, 6) == "GNU Go 1: -320 Elo [-410, -230] (gen 6)"
    assert format_elo("gnugo:10", 12, -50, 70, 8, short=True) == "GNU Go 10: +12 Elo (gen 8)"


# --------------------------------------------------------------------------------------------- the state


def test_the_line_says_generation_jobs_time_and_elo(root, add_match):
    for g in range(3):
        add_model(root, g)
    add_match(root, 1, "gen0", ["player"] * 6 + ["opponent"] * 4)
    add_match(root, 2, "gen0", ["player"] * 7 + ["opponent"] * 3)
    add_match(root, 1, "gnugo:1", ["player"] + ["opponent"] * 9)
    add_match(root, 2, "gnugo:1", ["player"] * 3 + ["draw"] + ["opponent"] * 6)
    p = RunProgress(root, 24, START)
    p.begin_invocation()
    assert p.render(START) == "gen -/24 · 0:00 elapsed · estimating time left"
    for line in ["Building DAG of jobs...", "total                 120", "Select jobs to execute..."]:
        p.feed(line)
    p.poll(START + 1)
    line = p.render(START + 312)
    assert line.startswith("gen 2/24 · jobs 0/120 · 5:12 elapsed · estimating time left · GNU Go 1: ")
    p.feed("45 of 120 steps (38%) done")
    games = [("gen0001", "gen0", 1.0)] * 6 + [("gen0001", "gen0", 0.0)] * 4
    games += [("gen0002", "gen0", 1.0)] * 7 + [("gen0002", "gen0", 0.0)] * 3
    games += [("gen0001", "gnugo:1", 1.0)] + [("gen0001", "gnugo:1", 0.0)] * 9
    games += [("gen0002", "gnugo:1", s) for s in [1.0, 1.0, 1.0, 0.5] + [0.0] * 6]
    ratings = fit_bradley_terry(games, anchor="gnugo:1")
    low, high = ratings.interval("gen0002")
    elo = format_elo("gnugo:1", ratings.elo["gen0002"], low, high, 2)
    assert elo.startswith("GNU Go 1: -") and "Elo [" in elo
    assert p.render(START + 312) == f"gen 2/24 · jobs 45/120 · 5:12 elapsed · estimating time left · {elo}"
    # a new invocation counts its own jobs
    p.begin_invocation()
    assert "jobs" not in p.render(START + 320)


def test_time_left_counts_generations_finished_under_this_command(root):
    for g in range(3):
        add_model(root, g)  # a resumed run: generations 0..2 were done before
    p = RunProgress(root, 10, START)
    p.poll(START + 1)
    assert p.generation == 2 and p.seconds_left(START + 1) is None
    add_model(root, 3)
    p.poll(START + 1.5)  # not due yet (models are looked at every 2 s)
    assert p.generation == 2
    p.poll(START + 101)
    assert p.generation == 3
    assert p.seconds_left(START + 101) == pytest.approx(100 * 7)
    add_model(root, 4)
    add_model(root, 5)  # two at once: the average is per generation
    p.poll(START + 301)
    assert p.seconds_left(START + 301) == pytest.approx(100 * 5)
    assert "~8:20 left" in p.render(START + 301)
    assert "~7:20 left" in p.render(START + 361)  # the estimate counts down between models
    for g in range(6, 11):
        add_model(root, g)
    p.poll(START + 400)
    assert p.render(START + 400).startswith("gen 10/10 · 6:40 elapsed · finishing")


def test_a_fresh_run_times_from_the_first_model(root):
    p = RunProgress(root, 4, START)
    p.poll(START)
    assert p.generation is None
    add_model(root, 0)
    p.poll(START + 3)  # the bootstrap model is no generation's work
    assert p.seconds_left(START + 3) is None
    add_model(root, 1)
    p.poll(START + 63)
    assert p.seconds_left(START + 63) == pytest.approx(60 * 3)
    assert latest_model(root, 4) == 1


def test_evaluations_are_reread_only_when_they_change(root, add_match, monkeypatch):
    add_model(root, 0)
    add_model(root, 1)
    add_match(root, 1, "gen0", ["player"] * 3 + ["opponent"])
    reads = []
    listings = []
    real_read, real_list = progress_module.read_match, progress_module.eval_file_times
    monkeypatch.setattr(progress_module, "read_match", lambda url: reads.append(url) or real_read(url))
    monkeypatch.setattr(progress_module, "eval_file_times", lambda r: listings.append(r) or real_list(r))
    p = RunProgress(root, 4, START)
    p.poll(START)
    assert len(reads) == 1 and len(listings) == 1
    # no GNU Go match yet: the newest win rate against another opponent
    assert p.render(START).endswith(" · vs gen0: 75% [30%, 95%] (gen 1)")
    p.poll(START + 5)  # within 10 s: not even listed
    assert len(listings) == 1
    p.poll(START + 10)  # listed, nothing changed: nothing read
    assert len(listings) == 2 and len(reads) == 1
    add_match(root, 1, "gnugo:2", ["opponent"] * 4)
    p.poll(START + 20)
    assert len(reads) == 2  # only the new file
    assert "GNU Go 2: -" in p.render(START + 20) and "(gen 1)" in p.render(START + 20)


def test_unreadable_results_files_are_skipped(root):
    path = Path(layout.eval_path(root, 1, "gnugo-1"))
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    (path.parent / ".tmp-vs_gen0.json.123.abcd").write_text("{}")
    p = RunProgress(root, 4, START)
    p.poll(START)
    assert p.strength == []


# ------------------------------------------------------------------------------------------- the display


def scripted_lines() -> list[str]:
    return ["Building DAG of jobs...", "total 40"] + [
        f"{n} of 40 steps ({100 * n // 40}%) done" for n in range(41)
    ]


def test_live_redraws_one_line_in_place(root):
    add_model(root, 0)
    clock = Clock()
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 24, START), mode="live", stream=out, clock=clock, width=200)
    display.begin()
    display.tick()
    assert out.getvalue() == CLEAR + "gen 0/24 · 0:00 elapsed · estimating time left"
    display.line("12 of 40 steps (30%) done")
    assert "12/40" not in out.getvalue()  # drawn at the next beat, not per job
    clock.now += 0.5
    display.tick()
    assert out.getvalue().endswith(CLEAR + "gen 0/24 · jobs 12/40 · 0:00 elapsed · estimating time left")
    display.tick()  # nothing changed: nothing written
    written = len(out.getvalue())
    display.line("Error in rule train:")
    assert out.getvalue()[written:] == (
        CLEAR
        + "  Error in rule train:\n"
        + CLEAR
        + "gen 0/24 · jobs 12/40 · 0:00 elapsed · estimating time left"
    )
    clock.now += 60.5
    display.tick()
    assert out.getvalue().endswith(CLEAR + "gen 0/24 · jobs 12/40 · 1:01 elapsed · estimating time left")
    display.end()
    assert out.getvalue().endswith("1:01 elapsed · estimating time left\n")
    assert "\n" not in out.getvalue()[: out.getvalue().index("  Error")]


def test_live_fits_the_terminal(root, add_match):
    add_model(root, 3)
    add_match(root, 3, "gnugo:1", ["opponent"] * 10)
    clock = Clock()
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 24, START), mode="live", stream=out, clock=clock, width=50)
    display.begin()
    display.line("5 of 40 steps (12%) done")
    display.tick()
    line = out.getvalue().split(CLEAR)[-1]
    assert len(line) < 50 and line == "gen 3/24 · jobs 5/40 · estimating time left"


def test_lines_print_on_a_new_generation_or_once_a_minute(root):
    clock = Clock()
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 24, START), mode="lines", stream=out, clock=clock)
    display.begin()
    for n, line in enumerate(scripted_lines()):
        display.line(line)
        if n == 10:
            add_model(root, 0)
        if n == 30:
            display.line("Error in rule selfplay_job0001:")
            add_model(root, 1)
        clock.now += 5
        display.tick()
    display.end()
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    stamp = r"  \[\d\d:\d\d:\d\d\] "
    assert [re.sub(stamp, "", s) for s in lines] == [
        "gen 0/24 · jobs 8/40 · 0:55 elapsed · estimating time left",  # gen 0 appeared
        "gen 0/24 · jobs 20/40 · 1:55 elapsed · estimating time left",  # a minute later
        "  Error in rule selfplay_job0001:",
        "gen 1/24 · jobs 28/40 · 2:35 elapsed · ~38:20 left",  # gen 1 appeared: 100 s a generation
        "gen 1/24 · jobs 40/40 · 3:35 elapsed · ~37:20 left",  # a minute later (the end adds no copy)
    ]
    assert all(re.match(stamp, s) for s in lines if "Error" not in s)


def test_lines_stay_quiet_when_nothing_moves(root):
    clock = Clock()
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 24, START), mode="lines", stream=out, clock=clock)
    display.begin()
    display.line("3 of 40 steps (7%) done")
    for _ in range(300):  # ten quiet minutes
        clock.now += 2
        display.tick()
    assert len(out.getvalue().splitlines()) == 1  # one line for the news, none for the silence
    display.end()
    assert len(out.getvalue().splitlines()) == 1


def test_none_shows_only_errors(root):
    add_model(root, 0)
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 24, START), mode="none", stream=out, clock=Clock())
    with display.invocation():
        for line in ["1 of 2 steps (50%) done", "WorkflowError:", "    message: it broke", "2 of 2 steps"]:
            display.line(line)
        display.tick()
    assert out.getvalue() == "  WorkflowError:\n      message: it broke\n"


def test_the_mode_defaults_to_the_stream(root):
    assert ProgressDisplay(RunProgress(root, 2, START), stream=io.StringIO()).mode == "lines"
    assert ProgressDisplay(None, mode="live", stream=io.StringIO()).mode == "none"
    with pytest.raises(ValueError, match="live, lines, none"):
        ProgressDisplay(RunProgress(root, 2, START), mode="fancy")


# ----------------------------------------------------------------------------------------- the runner


def fake_snakemake(tmp_path: Path) -> list[str]:
    """A stand-in for Snakemake: prints a few of its lines."""
    script = "\n".join(
        [
            f"print({line!r})"
            for line in ["Building DAG of jobs...", *scripted_lines()[:5], "Error in rule x:"]
        ]
    )
    return [sys.executable, "-c", script]


def test_run_snakemake_logs_everything_and_shows_errors(tmp_path, root):
    log_path = tmp_path / "logs" / "one.log"
    out = io.StringIO()
    display = ProgressDisplay(RunProgress(root, 2, START), mode="lines", stream=out)
    assert runner.run_snakemake(fake_snakemake(tmp_path), log_path, progress=display) == 0
    logged = log_path.read_text()
    assert "2 of 40 steps (5%) done" in logged and "Error in rule x:" in logged
    assert "  Error in rule x:\n" in out.getvalue()
    assert "of 40 steps" not in out.getvalue()
    echoed: list[str] = []
    assert runner.run_snakemake(fake_snakemake(tmp_path), log_path, echo=echoed.append) == 0
    assert echoed == ["  Error in rule x:"]


def test_the_progress_options(monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "run", lambda args: seen.append(args.progress) or 0)
    for argv in ([], ["--progress", "lines"], ["--quiet-progress"], ["--progress", "live", "--", "-n"]):
        assert runner.cli_main(argv) == 0
    assert seen == [None, "lines", "none", "live"]
