"""Matches at equal time per move: the referee's per-side times in the match file, a model searching by a time
budget per move (`minigo evaluate --move-time MS`), `--equal-time` giving the model the opponent's measured
time per move, the `"reproducible"` flag and what reads it (the run comparison, the ratings), and the config
key `evaluate.final_equal_time` in the run's schedule."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from minigo_core.base.config import ConfigError, SearchSettings
from minigo_core.data import compare, layout, schedule, storage
from minigo_core.data.matchfile import ENDINGS, check_time_fields, read_match
from minigo_core.game import go
from minigo_core.game.result import result_string
from minigo_core.jobs.evaluate import cli_main
from minigo_core.pipeline import workflow
from minigo_core.play.equal_time import follow_opponent_time
from minigo_core.play.match import run_match
from minigo_core.play.players import ModelPlayer, PlayerSetup, ResolvedPlayer, make_player, resolve_spec
from minigo_core.play.referee import MatchSettings, MoveTimes, match_seed
from minigo_core.report.run_elo import read_matches

SLEEP_S = 0.05  # the stub program's time per move
BUSY_S = 0.03  # the busy stub's CPU time per move

# A GTP program that sleeps SLEEP_S seconds before every genmove and then passes: an opponent whose time per
# move is known (a pass is always legal, so it needs no board of its own).
STUB = f"""
import sys, time
BUSY = len(sys.argv) > 1
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd = words[0]
    if cmd == "quit":
        print("=\\n", flush=True)
        break
    if cmd == "genmove":
        if BUSY:  # computes: BUSY_S of its CPU time
            t0 = time.process_time()
            while time.process_time() - t0 < {BUSY_S}:
                pass
        else:
            time.sleep({SLEEP_S})
        print("= pass\\n", flush=True)
    elif cmd == "name":
        print("= sleepy-stub\\n", flush=True)
    elif cmd == "version":
        print("= 1\\n", flush=True)
    elif cmd == "list_commands":
        print("= name\\nversion\\nboardsize\\nclear_board\\nkomi\\nplay\\ngenmove\\nquit\\n", flush=True)
    else:
        print("=\\n", flush=True)
"""


@pytest.fixture
def stub_program(tmp_path: Path) -> str:
    """The player spec of the sleeping GTP stub above."""
    path = tmp_path / "sleepy_stub.py"
    path.write_text(STUB)
    return f"gtp:{sys.executable} {path}"


@pytest.fixture
def busy_program(tmp_path: Path) -> str:
    """The player spec of the stub above computing BUSY_S of CPU time a move instead of sleeping."""
    path = tmp_path / "busy_stub.py"
    path.write_text(STUB)
    return f"gtp:{sys.executable} {path} busy"


def genmoves_per_side(results: dict) -> dict[str, int]:
    """Each side's genmoves over a results file's games: the moves played, and the last genmove of a game
    that ended without one (a resignation, an illegal move, a flag)."""
    count = {"player": 0, "opponent": 0}
    for g in results["games"]:
        calls = len(g["moves"]) + int(g["ended_by"] in ("resign", "illegal_move", "time"))
        black = g["black"]
        white = "opponent" if black == "player" else "player"
        count[black] += (calls + 1) // 2
        count[white] += calls // 2
        assert g["move_times"]["black"]["moves"] == (calls + 1) // 2
        assert g["move_times"]["white"]["moves"] == calls // 2
    return count


def write_config(tmp_path: Path, tiny_model: str) -> Path:
    """A 9x9 run whose generation 1 is the tiny random model, evaluated with 8 readouts."""
    root = tmp_path / "run"
    (root / "models").mkdir(parents=True)
    (root / "models" / "gen0001.safetensors").write_bytes(Path(tiny_model).read_bytes())
    config = tmp_path / "config.yaml"
    config.write_text(
        f"root: {root}\nboard_size: 9\nkomi: 7.5\n"
        "evaluate: {games: 2, readouts: 8, softpick_moves: 2, early_stop: false}\n"
        "selfplay: {resign_threshold: -1.0}\n"
    )
    return config


# ------------------------------------------------------------------------------- a move on a time budget


def test_a_time_budgeted_move_stops_within_its_budget(tiny_model):
    budget = 0.2
    search = SearchSettings(readouts=8, resign_threshold=-1.0, move_time=budget, max_readouts=10**6)
    player = make_player(resolve_spec(tiny_model), search, backend="dsp")
    assert isinstance(player, ModelPlayer)
    player.new_game(9, 7.5, seed=3)
    position = go.Position(9, 7.5)
    for _ in range(3):
        start = time.perf_counter()
        move = player.genmove(position)
        took = time.perf_counter() - start
        assert took < 2.0, f"a {budget} s move took {took:.2f} s"  # generous: not a benchmark
        assert position.is_move_legal(move)
        position = position.play_move(move)
    info = player.info()
    # it searched by the clock, not a fixed count: more than one chunk, far below its ceiling
    assert info["move_time"] == budget and info["max_readouts"] == 10**6
    assert info["first_chunk_readouts"] <= info["mean_readouts_per_move"] < 10**6


# ------------------------------------------------------------------------------ the match file's times


def two_games(
    player: ResolvedPlayer, opponent: ResolvedPlayer, seed: int, max_moves: int | None = None
) -> dict:
    """Two games of a match of `minigo evaluate`'s, a model at 8 readouts."""
    match = MatchSettings(
        2, 9, 7.5, seed=match_seed(seed, None, player.name, opponent.name), max_moves=max_moves
    )
    search = SearchSettings(readouts=8, softpick_moves=2, resign_threshold=-1.0)
    return run_match(player, opponent, match, PlayerSetup(search))


def test_the_match_file_records_each_side_s_time_per_move(tiny_model):
    results = two_games(resolve_spec(tiny_model), resolve_spec("uct:16"), 4, max_moves=24)
    check_time_fields(results)
    per_side = results["time_per_move"]
    assert per_side["player"]["name"] == "model:tiny" and per_side["opponent"]["name"] == "uct:16"
    assert {s: per_side[s]["moves"] for s in per_side} == genmoves_per_side(results)
    spent = sum(g["seconds"] for g in results["games"])
    assert sum(t["mean_s"] * t["moves"] for t in per_side.values()) <= spent + 1e-3
    for t in per_side.values():
        assert 0 < t["mean_s"] and 0 < t["p95_s"] and t["cpu_s"] > 0  # both search in this process
    # fixed readouts: reproducible, and said so
    assert results["move_time_ms"] is None and results["reproducible"] is True
    assert "equal_time" not in results and "reproducible_note" not in results


def test_an_outside_program_s_cpu_comes_from_its_process(tiny_model, gnugo_path):
    results = two_games(resolve_spec(tiny_model), resolve_spec("gnugo:1", gnugo_path=gnugo_path), 5)
    gnugo = results["time_per_move"]["opponent"]
    assert gnugo["name"] == "gnugo:1" and gnugo["moves"] == genmoves_per_side(results)["opponent"]
    # GNU Go's genmoves cost this process almost nothing: the CPU is GNU Go's own, read from /proc
    assert gnugo["cpu_s"] > 0


# ------------------------------------------------------------------------------ --move-time, --equal-time


def test_move_time_searches_by_the_budget_and_says_it_is_not_reproducible(tiny_model, tmp_path, capsys):
    config = write_config(tmp_path, tiny_model)
    out = tmp_path / "vs_random.json"
    argv = ["--config", str(config), "--generation", "1", "--opponent", "random", "--out", str(out)]
    assert cli_main([*argv, "--move-time", "30", "--max-moves", "16"]) == 0
    assert "(30 ms a move)" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["move_time_ms"] == 30 and results["reproducible"] is False
    assert "machine" in results["reproducible_note"] and results["max_readouts"] == 50_000
    assert results["player"]["move_time"] == 0.03 and results["player"]["mean_readouts_per_move"] >= 8
    assert results["time_per_move"]["player"]["p95_s"] < 2.0  # generous: the budget is 0.03 s
    summary = read_match(str(out))
    assert summary.timed and summary.move_time_ms == 30 and summary.reproducible is False
    # what the options refuse, naming the option
    bad = {
        "--move-time 0": [*argv, "--move-time", "0"],
        "both": [*argv, "--move-time", "30", "--equal-time"],
        "not a model": [*argv, "--player", "random", "--equal-time"],
        "no model at all": [*argv, "--player", "random", "--move-time", "30"],
        "probe": [*argv, "--equal-time", "--equal-time-probe-games", "0"],
    }
    for name, args in bad.items():
        assert cli_main(args) == 2, name
    err = capsys.readouterr().err
    assert "--move-time" in err and "--equal-time" in err and "not a model" in err


def test_equal_time_gives_the_model_the_opponent_s_measured_time(tiny_model, tmp_path, stub_program, capsys):
    """`--equal-time --equal-time-clock wall` against a stub that sleeps SLEEP_S a move: the probe measured
    the stub's moves (each holds the sleep: the mean is at least SLEEP_S, which the model's moves at 8
    readouts are far from), that mean is the model's budget (exactly, and after each game the mean over probe
    and match), the model then searched by that budget (its moves hold more than the 8 readouts' few
    milliseconds), and the file says the match is not reproducible. The wall times also hold the pipe's round
    trip and the machine's load, so their upper bounds are 10 times the sleep or the budget: a sanity check,
    not a benchmark."""
    config = write_config(tmp_path, tiny_model)
    out = tmp_path / "vs_stub_equal-time.json"
    argv = ["--config", str(config), "--generation", "1", "--opponent", stub_program, "--out", str(out)]
    wall = ["--equal-time-clock", "wall"]
    assert cli_main([*argv, "--equal-time", *wall, "--equal-time-probe-games", "2", "--max-moves", "12"]) == 0
    assert "(equal time: " in capsys.readouterr().out  # the wall clock's
    results = json.loads(out.read_text())
    check_time_fields(results)
    equal = results["equal_time"]
    # the probe measured the stub's sleep (plus the pipe's round trip and the machine's load)
    assert equal["measured_over_moves"] >= 2 and equal["probe_games"] == 2
    assert SLEEP_S <= equal["opponent_mean_s"] < 10 * SLEEP_S
    # ... and that mean is the model's budget
    assert results["move_time_ms"] == equal["move_time_ms"]
    assert results["move_time_ms"] == pytest.approx(equal["opponent_mean_s"] * 1000, abs=0.01)
    # ... for the first game; each later one's follows the opponent's mean over the probe and the match
    assert results["games"][0]["move_time_ms"] == results["move_time_ms"]
    assert all(g["move_time_ms"] > 0 for g in results["games"])
    assert results["player"]["move_time"] == pytest.approx(equal["final_move_time_ms"] / 1000)
    assert SLEEP_S <= equal["final_move_time_ms"] / 1000 < 10 * SLEEP_S
    assert "move_time" not in results["opponent"]  # the opponent plays as it always does
    assert results["reproducible"] is False
    # In the match the opponent's moves held the sleep as in the probe, and the model searched by its budget:
    # a tenth of the sleep at least (8 readouts of the tiny model take a millisecond or so), and at most 10
    # times the largest budget it was given.
    per_side = results["time_per_move"]
    assert SLEEP_S <= per_side["opponent"]["mean_s"] < 10 * SLEEP_S
    largest_budget = max(g["move_time_ms"] for g in results["games"]) / 1000
    assert 0.1 * SLEEP_S < per_side["player"]["mean_s"] < 10 * largest_budget
    assert results["player"]["mean_readouts_per_move"] > 8  # by the budget: more than its fixed readouts


def test_equal_cpu_time_gives_the_model_the_opponent_s_cpu_time(tiny_model, tmp_path, busy_program, capsys):
    """`--equal-time` (CPU time, the default) against a stub that computes BUSY_S of CPU a move: the probe
    measured the stub's CPU a move from its process (/proc: 10 ms ticks, so within a tick of BUSY_S a move on
    average, plus its little work between moves), that is the model's budget of its own CPU time, and the
    model then spent about that much CPU a move (a timed search stops short of a chunk that would overrun, and
    may overrun by part of one)."""
    config = write_config(tmp_path, tiny_model)
    out = tmp_path / "vs_busy_equal-time.json"
    argv = ["--config", str(config), "--generation", "1", "--opponent", busy_program, "--out", str(out)]
    assert cli_main([*argv, "--equal-time", "--equal-time-probe-games", "2", "--max-moves", "16"]) == 0
    said = capsys.readouterr().out
    results = json.loads(out.read_text())
    check_time_fields(results)
    equal = results["equal_time"]
    # the summary says the budget the match ended with (it followed the opponent) and the probe's it began at
    end, probe = equal["final_move_time_ms"], results["move_time_ms"]
    assert (f"(equal CPU time: {end:g} ms a move at the end, {probe:g} from the probe)" in said) or (
        end == probe and f"(equal CPU time: {probe:g} ms a move)" in said
    )
    assert equal["clock"] == "cpu" and equal["opponent_mean_s"] == equal["opponent_mean_cpu_s"]
    assert 0.6 * BUSY_S <= equal["opponent_mean_cpu_s"] < 3 * BUSY_S
    assert results["move_time_ms"] == pytest.approx(equal["opponent_mean_cpu_s"] * 1000, abs=0.01)
    assert results["player"]["move_clock"] == "cpu" and results["reproducible"] is False
    budgets = [g["move_time_ms"] / 1000 for g in results["games"]]
    assert all(0.6 * BUSY_S <= b < 3 * BUSY_S for b in budgets)  # followed the opponent's CPU, not its wall
    player = results["time_per_move"]["player"]
    cpu_per_move = player["cpu_s"] / player["moves"]
    assert 0.25 * min(budgets) <= cpu_per_move <= 3 * max(budgets)
    assert results["player"]["mean_readouts_per_move"] > 8  # by the budget: more than its fixed readouts


def test_cpu_equal_time_needs_an_opponent_whose_cpu_time_can_be_read(
    tiny_model, tmp_path, stub_program, capsys
):
    """The sleeping stub uses (almost) no CPU: equal CPU time has nothing to give the model, and says so,
    naming the wall clock's option; no results file is written. A tick or two of /proc's 10 ms may still land
    on the stub (it did on a loaded machine: 10 ms over 3 moves): 10 moves of 50 ms keep that under 10%."""
    config = write_config(tmp_path, tiny_model)
    out = tmp_path / "vs_stub_equal-time.json"
    argv = ["--config", str(config), "--generation", "1", "--opponent", stub_program, "--out", str(out)]
    assert cli_main([*argv, "--equal-time", "--equal-time-probe-games", "1", "--max-moves", "20"]) != 0
    assert "--equal-time-clock wall" in capsys.readouterr().err
    assert not out.exists()


def test_a_budget_of_cpu_time_runs_on_the_process_s_cpu_clock(tiny_model, monkeypatch):
    """`move_clock` cpu: the timed search reads `time.process_time`. A CPU clock that jumps a whole second at
    each reading ends a 0.5 s budget after its first chunk, while the wall clock lets the same budget run
    several chunks."""
    from minigo_core.play import model_player

    def readouts_a_move(clock: str) -> float:
        search = SearchSettings(readouts=8, resign_threshold=-1.0, move_time=0.5, move_clock=clock)
        player = make_player(resolve_spec(tiny_model), replace(search, max_readouts=10**6), backend="dsp")
        player.new_game(9, 7.5, seed=3)
        player.genmove(go.Position(9, 7.5))
        return player.info()["mean_readouts_per_move"]

    ticks = iter(range(10**6))
    monkeypatch.setattr(model_player.time, "process_time", lambda: float(next(ticks)))
    first_chunk = readouts_a_move("cpu")
    assert first_chunk == make_player(resolve_spec(tiny_model), SearchSettings(
        readouts=8, move_time=0.5), backend="dsp").timed_chunk()  # fmt: skip
    assert readouts_a_move("wall") > first_chunk


def test_equal_cpu_time_follows_the_opponent_s_cpu_through_the_match():
    """On the cpu clock the budget after each game is the opponent's CPU over the probe and the match so far
    (its meter, `cpu_meter`) over its moves; its wall times (here a busy machine's 100 ms) do not enter."""

    class Model:
        search = SearchSettings(readouts=8, move_time=0.03, move_clock="cpu")

    player, opponent_times, cpu = Model(), MoveTimes(), [0.0]
    equal = {"clock": "cpu", "opponent_mean_s": 0.03, "measured_over_moves": 10, "move_time_ms": 30.0}
    after = follow_opponent_time(player, opponent_times, equal, lambda i, g: None, spent=lambda: cpu[0])
    for _ in range(10):
        opponent_times.add(0.1, 0.0)
    cpu[0] = 0.1  # 10 ms a move in the match
    after(0, {})
    assert equal["final_move_time_ms"] == pytest.approx(20.0) and player.search.move_time == pytest.approx(
        0.02
    )
    with pytest.raises(ValueError, match="CPU meter"):
        follow_opponent_time(player, opponent_times, dict(equal), lambda i, g: None)


def test_equal_time_follows_the_opponent_s_time_through_the_match():
    """A probe on a busy machine measured 100 ms a move; in the match the opponent takes 20 ms: after each
    game the budget is the mean over the probe's moves and the match's so far, so it moves to the match's."""

    class Model:
        search = SearchSettings(readouts=8, move_time=0.1)

    player, opponent_times, shown = Model(), MoveTimes(), []
    equal = {"opponent_mean_s": 0.1, "measured_over_moves": 10, "move_time_ms": 100.0}
    after = follow_opponent_time(player, opponent_times, equal, lambda i, g: shown.append(i))
    games = [{}, {}]
    for _ in range(10):
        opponent_times.add(0.02, 0.0)
    after(0, games[0])
    assert games[0]["move_time_ms"] == 100.0 and shown == [0]  # the game played at the probe's budget
    assert equal["final_move_time_ms"] == pytest.approx(60.0) and player.search.move_time == pytest.approx(
        0.06
    )
    for _ in range(20):
        opponent_times.add(0.02, 0.0)
    after(1, games[1])
    assert games[1]["move_time_ms"] == pytest.approx(60.0)
    assert equal["final_move_time_ms"] == pytest.approx(40.0) and player.search.move_time == pytest.approx(
        0.04
    )
    assert "follows" in equal


# ------------------------------------------------------------------- the flag and those that read it


def match_data(moves: list[str], reproducible: bool, opponent: str = "gnugo:1", seconds: float = 1.0) -> dict:
    data = {
        "format": "minigo-match",
        "format_version": 1,
        "player": {"name": "gen0015", "spec": "gen15", "kind": "model", "mean_readouts_per_move": 40.5},
        "opponent": {"name": opponent, "spec": opponent, "kind": "gnugo"},
        "generation": 15,
        "board_size": 9,
        "komi": 7.5,
        "readouts": 32,
        "move_time_ms": None if reproducible else 12.5,
        "reproducible": reproducible,
        "games": [
            {
                "index": 0,
                "winner": "player",
                "moves": moves,
                "seconds": seconds,
                "move_times": {
                    "black": {"moves": 1, "mean_s": seconds, "p95_s": seconds},
                    "white": {"moves": 0, "mean_s": None, "p95_s": None},
                },
            }
        ],
        "totals": {"games": 1, "games_planned": 1},
        "time_per_move": {
            side: {"name": "x", "moves": 1, "mean_s": seconds, "p95_s": seconds, "cpu_s": seconds}
            for side in ("player", "opponent")
        },
    }
    if not reproducible:
        data["equal_time"] = {"opponent_mean_s": 0.0125, "measured_over_moves": 40, "move_time_ms": 12.5}
    return data


def test_the_run_comparison_reads_the_reproducible_flag():
    rel = "eval/gen0015/vs_gnugo-1_equal-time.json"

    def same(a: dict, b: dict) -> bool:
        return compare.same_bytes(rel, json.dumps(a).encode(), json.dumps(b).encode())

    # a reproducible match: the same games (times aside) or not the same match
    assert same(match_data(["C3"], True, seconds=1.0), match_data(["C3"], True, seconds=2.5))
    assert not same(match_data(["C3"], True), match_data(["D4"], True))
    # a time-budgeted one: other games, other measured budget, still the same match; other players are not
    timed = match_data(["C3"], False)
    other_games = match_data(["D4"], False)
    other_games["equal_time"]["opponent_mean_s"] = 0.02
    other_games["move_time_ms"] = 20.0
    assert same(timed, other_games)
    assert not same(timed, match_data(["C3"], False, opponent="gnugo:2"))
    assert not same(timed, match_data(["C3"], True))  # one run timed, the other not


def test_the_ratings_leave_out_time_budgeted_matches(tmp_path, write_match):
    root = str(tmp_path / "run")
    write_match(root, 15, "gnugo:1", ["player", "opponent"], 1.0)
    timed = match_data(["C3"], False)
    storage.write_text(layout.equal_time_eval_path(root, 15, "gnugo-1"), json.dumps(timed))
    matches, skipped = read_matches(root)
    assert skipped == [] and [m.url.endswith("vs_gnugo-1.json") for m in matches] == [True]


def test_malformed_time_fields_are_named():
    check_time_fields({"games": [{"index": 0}]})  # a file from before the time fields
    check_time_fields(match_data(["C3"], False))
    broken = {
        "reproducible": "no",
        "move_time_ms": -5,
        "time_per_move": {"player": {}},
        "equal_time": {"opponent_mean_s": 0.1},
    }
    for key, value in broken.items():
        data = {**match_data(["C3"], False), key: value}
        with pytest.raises(ValueError, match=key):
            check_time_fields(data)
    with pytest.raises(ValueError, match="reproducible: false"):
        check_time_fields({**match_data(["C3"], False), "reproducible": True})
    timed = match_data(["C3"], False)
    timed["equal_time"]["clock"] = "sundial"
    with pytest.raises(ValueError, match="equal_time.clock"):
        check_time_fields(timed)
    game = match_data(["C3"], True)
    game["games"][0]["move_times"]["black"]["mean_s"] = None
    with pytest.raises(ValueError, match="move_times.black.mean_s"):
        check_time_fields(game)


def test_a_game_lost_on_time_is_an_ending_of_the_match_file():
    assert "time" in ENDINGS and result_string(winner=-1, reason="time") == "W+T"


# ---------------------------------------------------------------------------- the config and the schedule


def test_final_equal_time_adds_the_last_generation_s_equal_time_matches(make_config, tmp_path):
    cfg = make_config(
        generations=6, evaluate={"games": 4, "every": 3, "final_equal_time": ["gnugo:1", "gen0"]}
    )
    last = schedule.evaluation_files(cfg, 6)
    assert layout.equal_time_eval_path(cfg.root, 6, "gnugo-1") in last
    assert layout.equal_time_eval_path(cfg.root, 6, "gen0") in last
    assert layout.eval_path(cfg.root, 6, "gen0") in last  # the fixed-readout match stays beside it
    assert layout.equal_time_eval_path(cfg.root, 6, "gnugo-1").endswith("gen0006/vs_gnugo-1_equal-time.json")
    assert not [f for f in schedule.evaluation_files(cfg, 3) if layout.EQUAL_TIME_SUFFIX in f]
    assert workflow.equal_time_slugs(cfg) == ["gnugo-1", "gen0"]
    assert workflow.equal_time_options(cfg, 6)[-1] == "--equal-time"
    # evaluation off: no equal-time match either
    assert schedule.equal_time_specs(make_config(generations=6, evaluate={"games": 0}), 6) == []
    # without GNU Go the run leaves its GNU Go matches out, these too
    missing = str(tmp_path / "no" / "gnugo")  # an explicit path is never looked up on PATH
    no_gnugo = make_config(evaluate={"gnugo": missing, "final_equal_time": ["gnugo:1", "random"]})
    kept, note = workflow.without_unavailable_opponents(no_gnugo)
    assert kept.evaluate.final_equal_time == ("random",) and "gnugo:1" in note


@pytest.mark.parametrize(
    "value, message",
    [
        (["gnugo:99"], r"evaluate\.final_equal_time\[0\]"),
        (["random", "nonsense"], r"evaluate\.final_equal_time\[1\]"),
        ("gnugo:1", r"'evaluate\.final_equal_time' must be a list"),
    ],
)
def test_bad_final_equal_time_is_named(make_config, value, message):
    with pytest.raises(ConfigError, match=message):
        make_config(evaluate={"final_equal_time": value})
