"""KataGo's score utility in the search (`selfplay.score_utility`): off, today's games bit for bit; on, the
search prefers larger predicted margins, the compiled engine and the reference agree, and what is recorded
(root values, resignation) stays the value head's win/loss value; the key reaches every player and bad
values are refused naming it."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os

import numpy as np
import pytest
import torch

from minigo_core.base import native
from minigo_core.base.config import ConfigError, SearchSettings, play_settings, search_settings
from minigo_core.data import gamefile
from minigo_core.game import coords, features, go
from minigo_core.jobs.gtp import play_search
from minigo_core.jobs.selfplay import cli_main
from minigo_core.nn import fused, model
from minigo_core.play import match, players
from minigo_core.search import engine, mcts

if os.environ.get("CI") != "true":
    try:
        engine.lib()
    except native.NativeUnavailable as exc:  # pragma: no cover - a checkout without `make setup`
        pytest.skip(str(exc), allow_module_level=True)

# The 5x5 job of `_play_job` (config/tiny.yaml's run): 16 readouts a full search, 8 a fast one.
JOB = {"seed": 5, "selfplay": {"readouts": 16, "fast_readouts": 8}}
SEARCHES = {
    "puct": {"search": "puct", "parallel_readouts": 8},
    "gumbel": {"search": "gumbel", "parallel_readouts": 1},
}
# `_digest` of `_play_job`'s two games with the score utility off, as the engines played them before the key
# existed (commit 92d949c): the key at 0 must leave every game exactly as it was. A deliberate change to the
# search or to the tiny model changes these too.
BEFORE_THE_KEY = {
    ("puct", "compiled"): "b1062036229c3bd612d69b72c2451997",
    ("puct", "python"): "62fb75a1da02081ad5feaf011f734e0d",
    ("gumbel", "compiled"): "7a61b46a91e5e365705d305dec8482e0",
    ("gumbel", "python"): "791e6cc8aa5d63965785fa805902bf06",
}


def _model(path, cfg, **tensors: float) -> str:
    """A random model of `cfg` (seed 3), with each tensor named in `tensors` set to that constant; saved."""
    torch.set_num_threads(1)
    net = model.random_model(model.ModelConfig.from_run(cfg), seed=3, backend="torch")
    state = net.state_dict()
    with torch.no_grad():
        for name, value in tensors.items():
            state[name.replace("__", ".")].fill_(value)
    model.save_model(str(path), net, {"generation": 1})
    return str(path)


def _play_job(tmp_path, write_config, make_config, search, engine_name, tensors=None, **selfplay):
    """Two games of a 5x5 self-play job (generation 2) by `search` on `engine_name`, over `JOB`."""
    layer = {**JOB, "selfplay": {**JOB["selfplay"], **SEARCHES[search], **selfplay}}
    cfg_path = write_config(tmp_path, layer, name=f"{search}-{engine_name}.yaml")
    model_path = tmp_path / "gen0001.safetensors"
    if not model_path.exists():
        _model(model_path, make_config(layer), **(tensors or {}))
    pattern = str(tmp_path / f"{search}-{engine_name}" / "game{game:05d}.arrow")
    argv = ["--config", str(cfg_path), "--model", str(model_path), "--generation", "2", "--game", "0",
            "--count", "2", "--out", pattern, "--engine", engine_name]  # fmt: skip
    assert cli_main(argv) == 0
    return [gamefile.read_game(pattern.format(game=g)) for g in range(2)]


def _digest(records) -> str:
    h = hashlib.sha256()
    for rec in records:
        h.update(json.dumps([str(m) for m in rec.moves]).encode())
        h.update(json.dumps(rec.metadata["result"], sort_keys=True).encode())
        for a in (rec.move_index, rec.visits, rec.root_value, rec.value_target, rec.policy):
            if a is not None:
                h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


@pytest.mark.parametrize("engine_name", ["compiled", "python"])
@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_off_plays_the_games_of_before_the_key(tmp_path, write_config, make_config, search, engine_name):
    records = _play_job(tmp_path, write_config, make_config, search, engine_name, score_utility=0.0)
    assert _digest(records) == BEFORE_THE_KEY[search, engine_name]
    for rec in records:  # nor are the game files' metadata changed: the key is left out while it is off
        assert "score_utility" not in rec.metadata["search"]
        assert "score_utility_scale" not in rec.metadata["search"]


# ---- on: the search follows the score head where the value head saturates ----
SATURATED = {"value_fc2__weight": 0.0, "value_fc2__bias": 50.0}  # v = tanh(50) = 1 at every position
UNIFORM = {"policy_fc__weight": 0.0, "policy_fc__bias": 0.0}  # every move the same prior


@pytest.fixture(scope="module")
def saturated_model(tmp_path_factory, make_config) -> str:
    """A 5x5 model whose value head says 1 (a win for the mover) everywhere and whose policy is uniform; its
    score head (random weights) tells positions apart."""
    path = tmp_path_factory.mktemp("score_utility") / "saturated.safetensors"
    return _model(path, make_config(JOB), **SATURATED, **UNIFORM, score_fc__bias=0.0)


def _one_ply(weight: float, considered: int) -> SearchSettings:
    """A Gumbel search that visits every root move once (budget = moves considered = legal moves), no noise,
    no random symmetry: each root move's Q is its child's own evaluation."""
    return SearchSettings(search="gumbel", readouts=considered, gumbel_considered=considered,
                          random_symmetry=False, score_utility=weight, score_utility_scale=9.0)  # fmt: skip


def test_on_the_search_picks_the_largest_predicted_margin_where_the_value_saturates(saturated_model):
    position = go.Position(5, 7.5).play_move((2, 2)).play_move((1, 1))
    played = [coords.to_flat((2, 2), 5), coords.to_flat((1, 1), 5)]
    legal = np.flatnonzero(mcts.search_moves(position))
    net = fused.load(saturated_model)
    children = [position.play_move(coords.from_flat(int(a), 5)) for a in legal]
    heads = net.predict_all(features.extract_batch(children, "agz"))
    assert (heads.value == 1.0).all()  # the value head cannot tell the moves apart
    best = int(legal[int(np.argmin(heads.score))])  # the opponent's smallest margin: the mover's largest
    assert len(set(heads.score.tolist())) == len(legal)  # no tie: one move is the best
    compiled_net = engine.load_network(saturated_model)
    for weight, expected in ((0.0, int(legal[0])), (0.5, best)):
        settings = _one_ply(weight, len(legal))
        ref = mcts.MCTSPlayer(net, settings, 5, 7.5, np.random.default_rng(0)).search(position, noise=False)
        searcher = engine.Searcher(
            compiled_net, engine.settings_for(settings, "agz", 5), board_size=5, komi=7.5
        )
        out = searcher.search(played, noise=False)
        assert ref.fmove == out.move == expected
        np.testing.assert_array_equal(out.visits, ref.visits)
        # the root value is the win/loss one: the root's own 1 and every child's -1, whatever the weight
        assert out.root_value == ref.root_value == pytest.approx((1 - len(legal)) / (1 + len(legal)))
        stats = searcher.root_stats()
        assert stats.net_value == 1.0 and (stats.q[stats.visits > 0] == -1.0).all()
    assert best != int(legal[0])  # the utility changed the move


@pytest.mark.parametrize(("search", "parallel", "init_unvisited"),
                         [("puct", 1, "parent"), ("puct", 8, "loss"), ("gumbel", 1, "parent")])  # fmt: skip
def test_on_the_compiled_engine_searches_as_the_reference(
    tmp_path, make_config, search, parallel, init_unvisited
):
    """Noise and random symmetries off, a random model (value and score both vary): the same visits, root
    value and move from the compiled search and mcts.py, bit for bit; and not those of the search without."""
    cfg = make_config(JOB)
    path = _model(tmp_path / "random.safetensors", cfg, score_fc__bias=0.2)
    reference_net, net = fused.load(path), engine.load_network(path)
    rng = np.random.default_rng(parallel)
    changed = 0
    for moves in (0, 3, 8, 14):
        position, played = go.Position(5, 7.5), []
        for _ in range(moves):
            m = int(rng.choice(np.flatnonzero(mcts.search_moves(position))))
            position, played = position.play_move(coords.from_flat(m, 5)), played + [m]
        visits = {}
        for weight in (0.0, 0.7):
            settings = SearchSettings(search=search, readouts=48, parallel_readouts=parallel,
                                      gumbel_considered=8, init_unvisited=init_unvisited,
                                      random_symmetry=False, score_utility=weight,
                                      score_utility_scale=4.0)  # fmt: skip
            player = mcts.MCTSPlayer(reference_net, settings, 5, 7.5, np.random.default_rng(0))
            ref = player.search(position, noise=False)
            out = engine.Searcher(
                net, engine.settings_for(settings, "agz", 5), board_size=5, komi=7.5
            ).search(played, noise=False)
            np.testing.assert_array_equal(out.visits, ref.visits)
            assert out.root_value == ref.root_value and -1 <= out.root_value <= 1
            assert out.move == ref.fmove
            visits[weight] = out.visits
        changed += not np.array_equal(visits[0.0], visits[0.7])
    assert changed >= 2


@pytest.mark.parametrize("engine_name", ["compiled", "python"])
@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_on_recorded_root_values_and_resignation_stay_win_loss(tmp_path, write_config, make_config, search,
                                                                engine_name):  # fmt: skip
    """Every position's value head says 1 and its score head +25 points, the mover's view: a position's
    utility is 1 + 0.78 w, outside [-1, 1]. The recorded root values are sums of the +-1 win/loss values
    (an integer times 1 / the root's visits: one leaf a batch, so each visit is one leaf's), and a root value
    below -1, which the utility's would be, never makes a player resign at resign_threshold -1."""
    tensors = {**SATURATED, "score_fc__weight": 0.0, "score_fc__bias": 1.0}
    records = _play_job(tmp_path, write_config, make_config, search, engine_name, tensors=tensors,
                        parallel_readouts=1, score_utility=1.0, resign_threshold=-1.0,
                        resign_disabled_fraction=0.0)  # fmt: skip
    rows = 0
    for rec in records:
        assert rec.metadata["search"]["score_utility"] == 1.0
        assert not rec.metadata["result"]["resigned"]
        visits = rec.visits.sum(axis=1) + 1  # the root's own evaluation, then every child's visit
        assert (np.abs(rec.root_value) <= 1).all()
        np.testing.assert_allclose(rec.root_value * visits, np.round(rec.root_value * visits), atol=1e-3)
        rows += len(visits)
    assert rows > 4


# ---- the key reaches every player; bad values are refused ----
def test_the_weight_reaches_the_players_of_evaluation_ratings_and_gtp(tmp_path, make_config, write_config):
    layer = {**JOB, "selfplay": {"score_utility": 0.4, "score_utility_scale": 6.0}}
    cfg = make_config(layer)
    gtp_args = argparse.Namespace(config=str(write_config(tmp_path, layer)), resign_threshold=None,
                                  search="config", parallel_readouts=None, move_time=None,
                                  max_readouts=8)  # fmt: skip
    searches = {
        "self-play": search_settings(cfg),
        "play_settings": play_settings(cfg, 8),
        "for_play": search_settings(cfg).for_play(8),
        "match": match.match_search(cfg),
        "ladder": match.player_setup(cfg).search,
        "gtp": play_search(gtp_args, 8),
    }
    for name, search in searches.items():
        assert (search.score_utility, search.score_utility_scale) == (0.4, 6.0), name
        compiled = engine.settings_for(search, "agz", 5)
        assert (compiled.score_utility, compiled.score_utility_scale) == (0.4, 6.0), name
    assert SearchSettings().score_utility == 0.0  # a player without a run config: off


@pytest.mark.parametrize(
    ("selfplay", "model_section"),
    [
        ({"score_utility": -0.1}, {}),
        ({"score_utility": 1.5}, {}),
        ({"score_utility": "on"}, {}),
        ({"score_utility": 0.3, "score_utility_scale": 0.0}, {}),
        ({"score_utility_scale": -2.0}, {}),
        ({"score_utility": 0.3}, {"aux_heads": False}),
    ],
)
def test_bad_values_are_refused_naming_the_key(make_config, selfplay, model_section):
    key = "selfplay.score_utility_scale" if "score_utility_scale" in selfplay else "selfplay.score_utility"
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        make_config(JOB, selfplay=selfplay, model=model_section)


def test_a_model_without_the_score_head_is_refused_naming_the_key(tmp_path, make_config):
    cfg = make_config(JOB, model={"aux_heads": False})
    path = _model(tmp_path / "plain.safetensors", cfg)
    settings = SearchSettings(readouts=8, score_utility=0.5)
    with pytest.raises(ValueError, match=r"selfplay\.score_utility"):
        engine.Searcher(
            engine.load_network(path), engine.settings_for(settings, "agz", 5), board_size=5, komi=7.5
        )
    with pytest.raises(ValueError, match=r"selfplay\.score_utility"):
        mcts.MCTSPlayer(fused.load(path), settings, 5, 7.5, np.random.default_rng(0))
    player = players.make_player(players.resolve_spec(path), settings, backend="dsp")
    player.new_game(5, 7.5, 1)
    with pytest.raises(ValueError, match=r"selfplay\.score_utility"):
        player.genmove(go.Position(5, 7.5))
    bad = engine.settings_for(dataclasses.replace(settings, score_utility=2.0), "agz", 5)  # past the config
    with pytest.raises(ValueError, match=r"selfplay\.score_utility"):
        engine.Searcher(engine.load_network(path), bad, board_size=5, komi=7.5)


def test_leaf_utility_is_katago_static_score_utility():
    on = SearchSettings(score_utility=0.5, score_utility_scale=9.0)
    assert mcts.leaf_utility(on, 0.25, 9.0) == pytest.approx(0.25 + 0.5 * 0.5)  # atan(1) = pi / 4
    assert mcts.leaf_utility(on, -0.25, -9.0) == -mcts.leaf_utility(on, 0.25, 9.0)  # either player's view
    assert mcts.leaf_utility(on, 1.0, 1e9) == pytest.approx(1.5) and math.isfinite(
        mcts.leaf_utility(on, 1, 1e300)
    )
    assert mcts.leaf_utility(SearchSettings(), 0.25, 9.0) == 0.25  # off: the value itself


def test_the_reference_reads_the_score_head_of_every_network(tmp_path, make_config):
    """The fused network, a DualNet on the dsp backend (the fused network inside) and one on the torch backend
    give the reference search the same heads (torch's to float tolerance), and it searches with each."""
    path = _model(tmp_path / "m.safetensors", make_config(JOB), score_fc__bias=0.3)
    position = go.Position(5, 7.5).play_move((2, 2))
    planes = features.extract_batch([position, position.play_move((1, 3))], "agz")
    expected = fused.load(path).predict_all(planes)
    settings = SearchSettings(readouts=8, random_symmetry=False, score_utility=0.5)
    for backend in ("dsp", "torch"):
        net = model.load_model(path, backend=backend)
        heads = net.predict_all(planes)
        for got, want in zip(heads, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert np.abs(heads.score).max() > 1  # points, not the head's margin / N*N
        result = mcts.MCTSPlayer(net, settings, 5, 7.5, np.random.default_rng(0)).search(position)
        assert result.visits.sum() >= 8 and -1 <= result.root_value <= 1
