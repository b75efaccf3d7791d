"""Time controls: the clock commands, the budget rule (`timecontrol`), the timed search, and whole games
against GNU Go through a referee that enforces the clock."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from minigo_core.game import go
from minigo_core.gtp.server import GTPServer
from minigo_core.play import timecontrol
from minigo_core.play.players import Player
from minigo_core.play.timecontrol import Clock, TimeSettings, TimeSettingsError, move_budget
from minigo_core.search import timed_search


class BudgetPlayer(Player):
    """Passes; records the time budget of each genmove."""

    def __init__(self) -> None:
        self.budgets: list[float | None] = []

    def genmove(self, position):
        return None

    def genmove_within(self, position, seconds):
        self.budgets.append(seconds)
        return None


# ----------------------------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "args, expected",
    [
        (["10", "0", "0"], TimeSettings("absolute", 10)),
        (["0", "5", "0"], TimeSettings("none")),  # byo-yomi time without stones: no limit (GTP 2, 4.2)
        (["60", "30", "5"], TimeSettings("canadian", 60, 30, stones=5)),
    ],
)
def test_gtp_time_settings_read_as_the_specification_says(args, expected):
    assert TimeSettings.from_gtp(args) == expected


@pytest.mark.parametrize(
    "args, expected",
    [
        (["none"], TimeSettings("none")),
        (["absolute", "300"], TimeSettings("absolute", 300)),
        (["byoyomi", "0", "10", "3"], TimeSettings("byoyomi", 0, 10, periods=3)),
        (["canadian", "60", "30", "5"], TimeSettings("canadian", 60, 30, stones=5)),
        (["byoyomi", "60", "0", "3"], TimeSettings("absolute", 60)),
    ],
)
def test_kgs_time_settings(args, expected):
    settings = TimeSettings.from_kgs(args)
    assert settings == expected
    assert TimeSettings.from_kgs(settings.kgs_command().split()[1:]) == settings


@pytest.mark.parametrize(
    "args", [[], ["fischer", "1"], ["absolute"], ["byoyomi", "1", "2"], ["absolute", "-1"], ["absolute", "x"]]
)
def test_bad_kgs_time_settings_are_refused(args):
    with pytest.raises(TimeSettingsError):
        TimeSettings.from_kgs(args)


def test_clock_commands_answer_and_refuse_as_gtp_says():
    server = GTPServer(BudgetPlayer())
    bad_lines = ("time_left b 5", "time_left x 5 0", "time_left b five 0", "time_left b 5 -1")
    for bad in (*bad_lines, "time_settings 1 2"):
        assert server.handle_line(bad) == "? syntax error\n\n", bad
    assert server.handle_line("kgs-time_settings fischer 10") == "? syntax error\n\n"
    assert server.handle_line("kgs-time_settings byoyomi 0 10 3") == "= \n\n"
    assert server.handle_line("time_left w 7 2") == "= \n\n"  # kgsGtp's byo-yomi: 2 periods left
    white = server.clocks[go.WHITE]
    assert white.in_overtime and white.period_left == 7 and white.periods_left == 2
    assert server.handle_line("time_left b 0 0") == "= \n\n"  # main time over: a fresh period
    assert server.clocks[go.BLACK].in_overtime and server.clocks[go.BLACK].periods_left == 3
    assert "kgs-time_settings" in server.handle_line("list_commands")


def test_genmove_gets_the_clock_s_budget():
    player = BudgetPlayer()
    server = GTPServer(player)
    server.handle_line("genmove b")
    server.handle_line("time_settings 10 0 0")
    server.handle_line("time_left w 10 0")
    server.handle_line("genmove w")
    server.handle_line("time_left b 2 0")
    server.handle_line("genmove b")
    assert player.budgets[0] is None  # no clock: by readouts
    assert player.budgets[1] == pytest.approx(move_budget(Clock(TimeSettings("absolute", 10)), 9, 1))
    assert player.budgets[2] < player.budgets[1]


# ------------------------------------------------------------------------------------------------- budget


def test_no_clock_means_no_budget():
    assert move_budget(Clock(TimeSettings("none")), 9, 0) is None


def test_sudden_death_shares_the_main_time_and_keeps_the_reserve():
    clock = Clock(TimeSettings("absolute", 10))
    first = move_budget(clock, 9, 0)
    assert first == pytest.approx((10 - timecontrol.RESERVE_S) / 36.45 - timecontrol.LATENCY_S)
    for k in range(81):  # the longest game (2 N*N moves), each move costing its budget and 20 ms more
        clock.spend(move_budget(clock, 9, 2 * k) + 0.02)
    assert clock.main_left > 0


def test_byoyomi_spends_a_share_of_one_period():
    clock = Clock(TimeSettings("byoyomi", 0, 10, periods=3))
    assert clock.in_overtime
    expected = timecontrol.OVERTIME_SHARE * 10 - timecontrol.LATENCY_S
    assert move_budget(clock, 19, 100) == pytest.approx(expected)
    clock.time_left(10, 1)  # the last period: the same share, never more than the period
    assert move_budget(clock, 19, 100) == pytest.approx(expected) and expected < 10


def test_canadian_divides_the_period_by_the_stones_left():
    clock = Clock(TimeSettings("canadian", 0, 60, stones=10))
    clock.time_left(30, 5)
    expected = timecontrol.OVERTIME_SHARE * (30 - timecontrol.RESERVE_S) / 5 - timecontrol.LATENCY_S
    assert move_budget(clock, 19, 200) == pytest.approx(expected)
    in_main = Clock(TimeSettings("canadian", 5, 60, stones=10))  # almost no main time: overtime follows
    overtime_only = Clock(TimeSettings("canadian", 0, 60, stones=10))
    assert move_budget(in_main, 19, 0) >= move_budget(overtime_only, 19, 0)


def test_the_referee_s_clock_flags_a_side_that_runs_out():
    absolute = Clock(TimeSettings("absolute", 2))
    assert absolute.spend(1.5) and not absolute.spend(0.6)
    canadian = Clock(TimeSettings("canadian", 1, 2, stones=2))
    assert canadian.spend(1.5) and canadian.gtp_time_left() == (1.5, 1)  # a move of the first period
    assert canadian.spend(1.4) and canadian.gtp_time_left() == (2, 2)  # the period's stones done: new period
    assert not canadian.spend(2.1)
    byoyomi = Clock(TimeSettings("byoyomi", 0, 1, periods=2))
    assert byoyomi.spend(0.9) and byoyomi.gtp_time_left() == (1, 2)  # within the period: it is kept
    assert byoyomi.spend(1.5) and byoyomi.periods_left == 1  # one period lost
    assert not byoyomi.spend(1.2)


def _fake_search(seconds_per_readout: float):
    """A clock and a step that spends `seconds_per_readout` a readout; `chunks` records each step's n."""
    now, chunks = [0.0], []

    def step(n: int) -> int:
        now[0] += n * seconds_per_readout
        chunks.append(n)
        return sum(chunks)

    return (lambda: now[0]), step, chunks


def test_search_for_grows_its_chunks_and_stops_within_the_budget():
    clock, step, chunks = _fake_search(0.001)
    assert timed_search.search_for(step, 0.1, 10**6, 8, clock) == 100
    assert chunks == [8, 8, 16, 32, 36] and clock() <= 0.1  # the last chunk cut to the budget


def test_search_for_keeps_to_the_ceiling_and_makes_at_least_one_chunk():
    clock, step, chunks = _fake_search(0.001)
    assert timed_search.search_for(step, 100.0, 20, 8, clock) == 20 and chunks == [8, 8, 4]
    clock, step, chunks = _fake_search(0.001)
    assert timed_search.search_for(step, 0.0, 10**6, 8, clock) == 8 and chunks == [8]


def test_search_for_does_not_start_a_last_chunk_below_a_quarter_of_the_readouts():
    clock, step, chunks = _fake_search(0.001)
    assert timed_search.search_for(step, 0.070, 10**6, 8, clock) == 64  # room for 6 after 64: not started
    assert chunks == [8, 8, 16, 32]


# ------------------------------------------------------------------------------------- a model on a clock


@pytest.mark.parametrize("engine_name", ["compiled", "python"])
def test_a_model_player_stops_at_its_time_budget(tiny_model, engine_name):
    """A 0.2 s budget with a readout ceiling far beyond it: the search ends on its budget (fewer readouts than
    the ceiling, at least its first chunk) and answers a legal move. The wall time is bounded loosely (10x
    the budget, for a loaded machine): an ignored budget fails the readout count, not the clock."""
    from minigo_core.base.config import SearchSettings
    from minigo_core.play.players import ModelPlayer, load_network

    backend = "dsp" if engine_name == "compiled" else "torch"
    net = load_network(tiny_model, backend, 1, engine_name)
    ceiling = 100_000  # the compiled engine takes seconds for these, the reference minutes
    player = ModelPlayer(net, SearchSettings(readouts=ceiling, resign_threshold=-1), engine_name=engine_name)
    player.new_game(9, 7.5, 1)
    position = go.Position(9, 7.5)
    budget = 0.2
    start = time.perf_counter()
    move = player.genmove_within(position, budget)
    took = time.perf_counter() - start
    assert position.is_move_legal(move)
    moves, readouts = player.timed  # moves searched by a budget, and their readouts
    assert moves == 1 and player.timed_chunk() <= readouts < ceiling, player.timed  # stopped by the budget
    assert took < 10 * budget, f"a {budget} s move took {took:.2f} s"


def test_set_up_stones_use_the_reference_search_for_that_game_only(tiny_model):
    """A position the compiled engine cannot reach from the empty board (a loaded SGF's set-up stones) is
    searched by the reference; the next game is the compiled engine's again."""
    from minigo_core.base.config import SearchSettings
    from minigo_core.play.players import ModelPlayer, load_network
    from minigo_core.search import engine, mcts

    net = load_network(tiny_model, "dsp", 1, "compiled")
    player = ModelPlayer(net, SearchSettings(readouts=16, resign_threshold=-1), engine_name="compiled")
    board = go.Position(9, 7.5).board.copy()
    board[4, 4] = go.BLACK
    player.new_game(9, 7.5, 1)
    player.genmove(go.Position.from_board(board, to_play=go.WHITE, komi=7.5))
    assert isinstance(player._mcts, mcts.MCTSPlayer)
    player.new_game(9, 7.5, 2)
    player.genmove(go.Position(9, 7.5))
    assert isinstance(player._mcts, engine.Searcher)


def _gtp_argv(model: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "minigo_core.cli", "gtp", "--model", model, "--backend", "dsp", *extra]


SEARCHED = re.compile(
    r"move (\d+) searched by a ([\d.]+) s budget: (\d+) readouts in ([\d.]+) s, stopped by its (.+)$", re.M
)


def _refereed_game(
    tiny_model, gnugo_path, clock: TimeSettings, log: Path, max_moves: int | None = None
) -> dict:
    """A game of the model (Black, `minigo gtp` in a subprocess) against GNU Go, refereed on `clock`. The
    server runs with -v, its stderr to `log` (a `SEARCHED` line for each move searched by a budget), and a
    readout ceiling of 10^6 (tens of seconds here: only a search that ignores its budget reaches it)."""
    from minigo_core.play.gtp_program import gnugo_argv
    from minigo_core.play.players import GTPPlayer
    from minigo_core.play.referee import referee_game

    server = _gtp_argv(tiny_model, "--resign-threshold", "-1", "-v", "--max-readouts", "1000000")
    argv = ["sh", "-c", 'exec "$@" 2>"$0"', str(log), *server]
    with GTPPlayer(argv, "minigo-gtp") as minigo, GTPPlayer(gnugo_argv(1, gnugo_path), "gnugo:1") as gnugo:
        return referee_game(minigo, gnugo, 9, 7.5, seeds=(3, 4), max_moves=max_moves, clock=clock)


def _model_not_flagged(game: dict) -> bool:
    """The game ended on the board (scored, or at the move cap), or by GNU Go's flag (its moves are not this
    server's plan: on a loaded machine they can outrun the clock), never by the model's."""
    return game["ended_by"] in ("score", "move_cap") or game.get("note") == "gnugo:1 lost on time"


def test_a_whole_game_on_10_seconds_sudden_death_against_gnugo(tiny_model, gnugo_path, tmp_path):
    """`time_settings 10 0 0`: the model searches every move by the clock's budget and stops on it (its log,
    -v; the readout ceiling is far away), the first budget being the rule's share of a fresh 10 s
    (`timecontrol`); it is never flagged (`_model_not_flagged`), its clock used and some of it kept."""
    settings = TimeSettings.from_gtp(["10", "0", "0"])
    log = tmp_path / "server.log"
    game = _refereed_game(tiny_model, gnugo_path, settings, log)
    assert _model_not_flagged(game) and game["ended_by"] != "move_cap", game
    assert 0 < game["clock_left"]["black"][0] < 10  # the model used its clock, and kept some
    assert len(game["moves"]) > 20
    searched = SEARCHED.findall(log.read_text())
    assert len(searched) == game["move_times"]["black"]["moves"], searched  # every genmove, by the clock
    assert all(stopped == "time budget" for *_, stopped in searched), searched
    # the first move's plan (the rule, `timecontrol`): the main time less the reserve, shared over the moves
    first = (settings.main - timecontrol.RESERVE_S) / timecontrol.expected_moves_left(9, 0)
    assert float(searched[0][1]) == pytest.approx(first - timecontrol.LATENCY_S, abs=1e-3)


@pytest.mark.parametrize("kgs", [["byoyomi", "0", "1", "5"], ["canadian", "0", "6", "6"]])
def test_short_overtime_clocks_are_never_lost_on_time(tiny_model, gnugo_path, tmp_path, kgs):
    """Byo-yomi periods of 1 s (sent as kgs-time_settings) and canadian 6 s for 6 stones, 16 moves: the
    server plans every move within its period, by its own log (-v), not by the wall time a loaded machine
    adds to its moves.

    Asserted: each of the model's moves was searched by the clock's budget and stopped by that budget (not
    by the far readout ceiling); the first move of each period (byo-yomi: every move) planned a fresh
    period's share by the rule of `timecontrol` (the server read the clock), and one period's moves planned
    less than the period in all (byo-yomi: one move within one period, never the periods in reserve;
    canadian: the period's stones within it). The model is not flagged (`_model_not_flagged`): its plan
    leaves a quarter of each period and more (canadian: about 2 s of the 6), and byo-yomi has four spare
    periods, so what a loaded machine adds to its moves does not use up its clock, while a plan past the
    period would."""
    settings = TimeSettings.from_kgs(kgs)
    log = tmp_path / "server.log"
    game = _refereed_game(tiny_model, gnugo_path, settings, log, max_moves=16)
    assert _model_not_flagged(game), game
    text = log.read_text()
    searched = SEARCHED.findall(text)
    assert len(searched) == game["move_times"]["black"]["moves"] > 1, text  # every genmove, by the clock
    assert all(stopped == "time budget" for *_, stopped in searched), text
    budgets = [float(budget) for _, budget, *_ in searched]
    # a fresh period's plan for one move (the rule, `timecontrol`): byo-yomi a share of one period, canadian a
    # share of the period less the reserve, split over its stones
    per_period = 1 if settings.kind == "byoyomi" else settings.stones
    share = settings.period if per_period == 1 else (settings.period - timecontrol.RESERVE_S) / per_period
    fresh = timecontrol.OVERTIME_SHARE * share - timecontrol.LATENCY_S
    for k in range(0, len(budgets), per_period):
        period = budgets[k : k + per_period]
        assert period[0] == pytest.approx(fresh, abs=1e-3), (k, budgets)
        assert sum(period) < settings.period, (k, budgets)
