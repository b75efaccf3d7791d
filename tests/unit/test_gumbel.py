"""Gumbel AlphaZero's search in the reference engine (`minigo_core.search.gumbel`, `mcts.MCTSPlayer` with
`selfplay.search: gumbel`): its improved policy is the compiled engine's, float for float; a position searched
without noise gets the compiled engine's visit counts, root value and move; and a self-play game of the
reference engine plays the search its game file names (the Gumbel game holds the improved policy as its
target), so no file claims a search that was not played."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from minigo_core.base.config import RunConfig, SelfplaySettings, search_settings
from minigo_core.game import go
from minigo_core.nn import fused, model
from minigo_core.search import engine, engine_test, gumbel, mcts
from minigo_core.selfplay import selfplay_game

RUN = {
    "seed": 3,
    "features": "agz",  # the planes of settings_for(..., "agz", 9) below
    "model": {"blocks": 1, "filters": 16, "fc_width": 16, "backend": "dsp"},
    "selfplay": {"readouts": 24, "fast_readouts": 8, "full_search_fraction": 0.5, "search": "gumbel"},
}


@pytest.fixture(scope="module")
def compiled(compiled_library):
    compiled_library(engine.LIBRARY)
    compiled_library(engine_test.LIBRARY)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, make_config) -> str:
    torch.set_num_threads(1)
    cfg = make_config(RUN, base="default", board_size=9)
    net = model.random_model(model.ModelConfig.from_run(cfg), seed=4, backend="torch")
    path = str(tmp_path_factory.mktemp("gumbel") / "gen0001.safetensors")
    model.save_model(path, net, {"generation": 1})
    return path


def test_improved_policy_is_the_compiled_one(compiled):
    rng = np.random.default_rng(7)
    for _ in range(200):
        a = int(rng.integers(2, 30))
        legal = rng.random(a) < 0.8
        legal[0] = True
        prior = rng.random(a) * legal * (rng.random(a) < 0.9)  # some legal moves without prior
        prior[0] += 0.01
        prior /= prior.sum()
        visits = rng.integers(0, 6, a) * legal * (rng.random(a) < 0.5)
        q = rng.uniform(-1, 1, a) * (visits > 0)
        value, c_visit, c_scale = (float(rng.uniform(lo, hi)) for lo, hi in ((-1, 1), (1, 60), (0.1, 2)))
        stats = gumbel.ChildStatistics(prior, visits.astype(np.float64), q, legal, value)
        ours = gumbel.improved_policy(stats, c_visit, c_scale)
        theirs = engine_test.gumbel_improved_policy(prior, visits, q, legal, value, c_visit, c_scale)
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("considered", [1, 4, 16])
def test_reference_gumbel_search_gives_the_compiled_visits(
    compiled, model_file, make_config, random_position, considered
):
    """Noise and random symmetries off: the same network outputs, so the same tree, visit for visit."""
    cfg = make_config(RUN, base="default", board_size=9, selfplay={"gumbel_considered": considered})
    search = dataclasses.replace(search_settings(cfg), softpick_moves=0, random_symmetry=False)
    settings = engine.settings_for(search, "agz", 9)
    reference_net, net = fused.load(model_file), engine.load_network(model_file)
    rng = np.random.default_rng(considered)
    for moves in (0, 3, 20, 45):
        position, played = random_position(rng, moves)
        player = mcts.MCTSPlayer(reference_net, search, 9, 7.5, np.random.default_rng(0))
        ref = player.search(position, full_search=True, noise=False)
        out = engine.Searcher(net, settings, board_size=9, komi=7.5).search(played, noise=False)
        assert ref.readouts == cfg.selfplay.readouts
        np.testing.assert_array_equal(out.visits, ref.visits)
        assert (out.move, out.root_value) == (ref.fmove, ref.root_value)
        np.testing.assert_allclose(ref.policy, out.policy, rtol=0, atol=1e-7)


@pytest.mark.parametrize("search", ["gumbel", "puct"])
def test_a_reference_selfplay_game_plays_the_search_its_file_names(model_file, make_config, search):
    cfg = make_config(RUN, base="default", board_size=9, selfplay={"search": search})
    net = model.load_model(model_file, backend="torch")
    record = selfplay_game.play_selfplay_game(net, cfg, 1, 0, model_file)
    assert record.metadata["search"]["search"] == search
    assert record.metadata["search"]["engine"] == "python"
    assert record.num_positions > 0
    if search == "puct":
        assert record.metadata["target"] == "visits" and record.policy is None
        return
    assert record.metadata["target"] == "policy"
    assert record.policy.shape == record.visits.shape
    np.testing.assert_allclose(record.policy.sum(axis=1), 1.0, rtol=1e-5)
    positions = go.replay(record.moves, 9, cfg.komi)
    for row, k in enumerate(record.move_index):  # the improved policy is over the searched moves only
        assert (record.policy[row][~mcts.search_moves(positions[k])] == 0).all()
        # sequential halving spends the budget on at most `gumbel_considered` root moves this search
        assert record.visits[row].sum() >= cfg.selfplay.readouts


def test_a_game_is_never_recorded_as_a_search_it_did_not_play():
    n = 5
    game = selfplay_game.PlayedGame(go.Position(n, 7.5), [], [], 2 * n * n, True)  # no policy: PUCT
    claims_gumbel = {**dataclasses.asdict(SelfplaySettings(search="gumbel")), "engine": "python"}
    with pytest.raises(ValueError, match="played by puct would be recorded as selfplay.search 'gumbel'"):
        selfplay_game.game_metadata(RunConfig(board_size=n), "agz", {}, {}, game, claims_gumbel)
