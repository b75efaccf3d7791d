"""The compiled searcher as analysis uses it: several positions batched in slots, the tree kept across chunks
and across moves, a timed search that records what its tree holds, and GUI analysis (`kata-analyze`) that
streams from it with the network's ownership and score heads."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_gtp_analysis import Session, check_records, parse_analysis_line

from minigo_core.base.config import RunConfig, SearchSettings, play_settings
from minigo_core.game import coords, features, go
from minigo_core.gtp.analysis import Analysis
from minigo_core.gtp.server import build_model_server
from minigo_core.play.players import ModelPlayer, load_network
from minigo_core.search import engine

N = 9
OPENING = [40, 30, 50, 22]  # E5 D6 F4 E7


@pytest.fixture(scope="module")
def aux_model(tmp_path_factory) -> str:
    from minigo_core.nn.model import ModelConfig, random_model, save_model

    path = str(tmp_path_factory.mktemp("aux") / "aux.safetensors")
    save_model(path, random_model(ModelConfig(N, 1, 8, 16, "agz", aux_heads=True), seed=4), {"generation": 0})
    return path


def searcher(model: str, search: str = "puct", readouts: int = 32, symmetry: bool = True) -> engine.Searcher:
    play = dataclasses.replace(play_settings(RunConfig(board_size=N), readouts), search=search,
                               random_symmetry=symmetry)  # fmt: skip
    settings = engine.settings_for(play, "agz", N)
    return engine.Searcher(engine.load_network(model), settings, board_size=N, komi=7.5, seed=1)


@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_positions_searched_together_match_each_searched_alone(aux_model, search):
    positions = [OPENING[:1], OPENING[:3], OPENING]
    together = searcher(aux_model, search, symmetry=False)  # (a slot's symmetries come from its own stream)
    assert together.search_many(positions) == [None, None, None]
    for k, moves in enumerate(positions):
        alone = searcher(aux_model, search, symmetry=False)
        expected = alone.search(moves)
        got = together.result(k)
        np.testing.assert_array_equal(got.visits, expected.visits)
        assert got.move == expected.move and got.root_value == pytest.approx(expected.root_value)


def test_a_slot_left_alone_keeps_its_tree_and_bad_positions_say_why(aux_model):
    s = searcher(aux_model)
    s.search_many([OPENING, OPENING[:2]])
    kept = s.root_stats(0).root_visits
    assert s.search_many([None, OPENING[:2]]) == [None, None]
    assert s.root_stats(0).root_visits == kept
    assert s.root_stats(1).root_visits > kept  # slot 1 searched its position again, on its kept tree
    why = s.search_many([[40, 40], OPENING])
    assert why[0] is not None and "illegal" in why[0] and why[1] is None


def test_the_tree_is_kept_across_chunks(aux_model):
    s = searcher(aux_model)
    s.set_readouts(40)
    s.search(OPENING)
    first = s.root_stats()
    s.set_readouts(60)
    s.search(OPENING)
    second = s.root_stats()
    assert second.root_visits == first.root_visits + 60
    assert second.tree_nodes > first.tree_nodes


def test_the_tree_is_kept_across_a_move_and_the_reply(aux_model):
    s = searcher(aux_model, readouts=400)
    s.search(OPENING)
    best = int(np.argmax(s.root_stats().visits))
    line, visits = s.pv_visits(best)
    assert len(line) >= 2 and visits[1] > 1
    s.set_readouts(1)
    s.search(OPENING + line[:2])  # our move, then the reply the tree expected: two plies down
    assert s.root_stats().root_visits >= visits[1]  # the reply's subtree came along, plus one readout
    s.search([41, 31])  # a position off the tree: a fresh one
    assert s.root_stats().root_visits <= 2


def model_player(model: str) -> ModelPlayer:
    net = load_network(model, "dsp", 1, "compiled")
    search = SearchSettings(readouts=32, max_readouts=50_000, search="puct", parallel_readouts=4)
    player = ModelPlayer(net, search,
                         engine_name="compiled")  # fmt: skip
    player.new_game(N, 7.5, 3)
    return player


def test_a_longer_budget_gives_more_root_visits_and_the_tree_holds_every_chunk(aux_model):
    position = go.Position(N)
    for a in OPENING:
        position = position.play_move(coords.from_flat(a, N))
    visits = {}
    for budget in (0.02, 0.4):
        player = model_player(aux_model)
        player.genmove_within(position, budget)
        visits[budget] = player.timed_root_visits[-1]
        asked = player.timed[1]  # the readouts of every chunk of this move
        assert player.timed_root_visits[-1] >= asked  # all of them are in the tree (not just the last chunk)
        assert player.timed_tree_nodes[-1] >= player.timed_root_visits[-1]
        info = player.info()
        assert info["mean_root_visits_per_move"] == pytest.approx(visits[budget])
    assert visits[0.4] > visits[0.02]


def test_analysis_runs_the_players_compiled_search_and_keeps_its_tree_across_moves(aux_model):
    player = model_player(aux_model)
    analysis = Analysis(player, N, 7.5, seed=0)
    position = go.Position(N).play_move(coords.from_flat(40, N))
    assert analysis.start(position) and analysis.compiled
    analysis.run(300, None, 0.0, lambda: None)
    best = analysis.best_move()
    report = analysis.report()
    assert report.moves[0].visits == max(m.visits for m in report.moves)
    child_visits = int(analysis.visits_per_move()[best])
    assert analysis.start(position.play_move(coords.from_flat(best, N)))
    assert analysis.visits >= child_visits  # the chosen move's subtree is the new root's


def test_a_position_with_set_up_stones_falls_back_to_the_reference_search(aux_model):
    board = np.zeros((N, N), np.int8)
    board[4, 4], board[2, 2] = go.BLACK, go.WHITE
    analysis = Analysis(model_player(aux_model), N, 7.5, seed=0)
    assert analysis.start(go.Position.from_board(board, go.BLACK, 7.5)) and not analysis.compiled
    analysis.run(16, None, 0.0, lambda: None)
    assert analysis.visits >= 16 and analysis.report().moves


def test_kata_analyze_ownership_is_the_ownership_head(aux_model):
    gtp = build_model_server(aux_model, SearchSettings(readouts=24, resign_threshold=-1.0))
    session = Session(gtp)
    try:
        session.send("1 play b E5")
        assert session.line() == "=1 " and session.line() == ""
        session.send("2 kata-analyze w 5 ownership true")
        assert session.line() == "=2"
        line = session.line()
        while not line.startswith("info"):
            line = session.line()
        moves, own = parse_analysis_line(line, N, "kata")
        check_records(moves, N, "kata")
        session.send("")
    finally:
        session.close()
    position = go.Position(N).play_move(coords.from_gtp("E5", N))
    net = load_network(aux_model, "dsp", 1, "compiled")
    head = net.predict_all(features.extract_batch([position], "agz"))
    assert own is not None
    np.testing.assert_allclose(own, head.ownership[0], atol=1e-4)  # kata-analyze: the mover's view
