"""Policy-surprise weighting (issue 44, item 4): the compiled engine records each position's surprise, KL of
the search's policy target from the network's prior, in the game file; `window.policy_surprise_weight` s
draws a game's positions with weight (1 - s) + s KL / mean KL instead of uniformly; 0 (the default) is the
uniform draw, the same bytes as before the key existed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from minigo_core.base import config
from minigo_core.base.config import search_settings
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.data import gamefile, layout, parts, shards, storage, window
from minigo_core.data.sampling import positions
from minigo_core.game import features, go
from minigo_core.nn import model
from minigo_core.search import engine, mcts
from minigo_core.selfplay import selfplay_game

BOARD = 9
HOT = 6  # the first HOT recorded positions of each test game are the surprising ones


def _surprising(record: gamefile.GameRecord) -> gamefile.GameRecord:
    n = record.num_positions
    return dataclasses.replace(record, surprise=np.where(np.arange(n) < HOT, 2.0, 0.01).astype(np.float32))


@pytest.fixture(scope="module")
def games_root(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("run"))
    rng = np.random.default_rng(4)
    for gen in (0, 1):
        for i in range(6):
            record = synthetic_game(random_moves(BOARD, rng, max_moves=60), BOARD, rng, recorded_fraction=1.0)
            gamefile.write_game(layout.game_path(root, gen, i), _surprising(record))
    return root


def _cfg(root: str, **window_settings) -> config.RunConfig:
    window_keys = {"generations": 2, "sample_fraction": 0.2, **window_settings}
    return config.from_dict(
        {"root": root, "board_size": BOARD, "seed": 7, "train": {"ranks": 1}, "window": window_keys}
    )


def test_the_weights_have_mean_one_and_fall_back_to_uniform():
    record = _surprising(synthetic_game(random_moves(BOARD, np.random.default_rng(1), 40), BOARD,
                                        np.random.default_rng(2), recorded_fraction=1.0))  # fmt: skip
    recorded = np.flatnonzero(record.full_search)
    w = positions.surprise_weights(record, recorded, 0.5)
    assert w.mean() == pytest.approx(1.0)
    kl = record.surprise[recorded]
    np.testing.assert_allclose(w, 0.5 + 0.5 * kl / kl.mean())
    assert positions.surprise_weights(record, recorded, 0.0) is None  # the key's default: uniform
    assert positions.surprise_weights(dataclasses.replace(record, surprise=None), recorded, 0.5) is None
    zero = dataclasses.replace(record, surprise=np.zeros_like(record.surprise))
    assert positions.surprise_weights(zero, recorded, 0.5) is None  # nothing surprising: uniform
    assert (positions.surprise_weights(record, recorded, 1.0) > 0).all()  # s = 1: every position drawable


def test_the_uniform_draw_is_the_draw_from_before_the_key():
    for seed in range(20):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        old = np.sort(b.choice(37, size=positions.sample_count(37, 0.25, b), replace=False))
        np.testing.assert_array_equal(positions.choose(37, 0.25, a), old)


def test_a_weighted_draw_takes_the_surprising_positions_more_often():
    n, hot = 40, 8
    weights = np.where(np.arange(n) < hot, 4.0, 0.25)
    uniform, weighted = np.zeros(n), np.zeros(n)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        uniform[positions.choose(n, 0.25, rng)] += 1
        weighted[positions.choose(n, 0.25, rng, weights)] += 1
    assert uniform.sum() == pytest.approx(weighted.sum(), rel=0.05)  # the same count: the fraction holds
    assert weighted[:hot].mean() > 3 * weighted[hot:].mean()
    assert uniform[:hot].mean() == pytest.approx(uniform[hot:].mean(), rel=0.2)
    # a game's parts: each its own weighted draw, each the fraction's count
    drawn = positions.draw(n, 3, 0.25, rng, weights)
    assert len(drawn) == 3 and all(len(set(d)) == len(d) and 9 <= len(d) <= 11 for d in drawn)


def _hot_share(root: str, out: str, cfg: config.RunConfig) -> tuple[dict, float]:
    manifest = window.build_window(cfg, 2, out, workers="threads")
    loaded = [
        shards.load_shard(storage.join(out, s["name"]), s["sha256"]).rows(0, s["rows"])
        for s in manifest["shards"]
    ]
    moves = [int(m) for rows in loaded for m in rows.move]
    return manifest, float(np.mean(np.array(moves) < HOT))


def test_the_key_changes_what_the_window_samples(games_root, tmp_path):
    plain, plain_hot = _hot_share(games_root, str(tmp_path / "u"), _cfg(games_root))
    weighted, hot = _hot_share(games_root, str(tmp_path / "s"), _cfg(games_root, policy_surprise_weight=0.9))
    assert "policy_surprise_weight" not in plain and weighted["policy_surprise_weight"] == 0.9
    assert plain["rows"] == weighted["rows"]  # the same count a game, other positions
    # HOT of ~60 positions a game: ~10% uniformly; weight 0.9 puts ~0.9 * HOT * 2.0 / mean of the mass there
    assert plain_hot < 0.25 and hot > 2 * plain_hot, (plain_hot, hot)
    # a generation's parts (games-complete) draw by the same weights; their fingerprint carries the key, so
    # a part made without it is not used
    share = {}
    for w in (0.0, 0.9):
        chosen = []
        for i in range(6):
            url = layout.game_path(games_root, 1, i)
            game = parts.sample_parts(
                i, url, storage.sha256_file(url), _cfg(games_root, policy_surprise_weight=w), 1, 2
            )
            assert game.skipped is None and len(game.chosen) == 2
            chosen += [c for part in game.chosen for c in part]
        share[w] = float(np.mean(np.array(chosen) < HOT))
    assert share[0.9] > 2 * share[0.0], share
    assert "policy_surprise_weight" not in parts.fingerprint(_cfg(games_root))
    assert parts.fingerprint(_cfg(games_root, policy_surprise_weight=0.9))["policy_surprise_weight"] == 0.9


def test_the_key_is_a_weight():
    with pytest.raises(config.ConfigError, match="window.policy_surprise_weight"):
        _cfg("/r", policy_surprise_weight=1.5)


def test_the_game_file_keeps_the_surprise_column_and_reads_files_without_it(tmp_path):
    rng = np.random.default_rng(3)
    record = _surprising(synthetic_game(random_moves(BOARD, rng, 30), BOARD, rng, recorded_fraction=1.0))
    url = str(tmp_path / "g.arrow.zst")
    gamefile.write_game(url, record)
    np.testing.assert_array_equal(gamefile.read_game(url).surprise, record.surprise)
    gamefile.write_game(url, dataclasses.replace(record, surprise=None))
    assert gamefile.read_game(url).surprise is None
    with pytest.raises(ValueError, match="surprise"):
        gamefile.write_game(url, dataclasses.replace(record, surprise=-record.surprise))


@pytest.mark.parametrize("search", ["gumbel", "puct"])
def test_the_engine_records_kl_of_the_target_from_the_network_prior(tmp_path, make_config, compiled_library,
                                                                    search):  # fmt: skip
    """Row 0 (the empty board): KL(target || the network's policy), the target Gumbel's improved policy or
    the visits normalised, the prior the network's before the root noise; every row finite and >= 0, and
    the game's record (what the self-play job writes) carries the column."""
    compiled_library(engine.LIBRARY)
    selfplay = {"search": search, "readouts": 24, "fast_readouts": 24, "full_search_fraction": 1.0,
                "resign_disabled_fraction": 1.0}  # fmt: skip
    cfg = make_config({"seed": 5, "model": {"blocks": 1, "filters": 8, "fc_width": 8, "backend": "dsp"}},
                      base="default", board_size=7, selfplay=selfplay)  # fmt: skip
    url = str(tmp_path / "m.safetensors")
    model.save_model(url, model.random_model(model.ModelConfig.from_run(cfg), 2, backend="torch"), {})
    net = engine.load_network(url)
    settings = engine.settings_for(search_settings(cfg), cfg.features, cfg.board_size)
    settings.random_symmetry = 0  # the prior is the network's policy on the board as it is
    settings.stop_after_moves = 6
    games = engine.SelfplayGames(net, settings, board_size=7, komi=cfg.komi, seed=cfg.seed, generation=1,
                                 first_game=0, count=2)  # fmt: skip
    finished = sorted(games.finished(), key=lambda g: g.index)
    for game in finished:
        assert game.surprise.shape == game.root_value.shape and np.isfinite(game.surprise).all()
        assert (game.surprise >= 0).all() and game.surprise.max() > 0
        assert int(game.move_index[0]) == 0
        empty = go.Position(board_size=7, komi=cfg.komi)
        prior, _ = net.predict(features.extract(empty, cfg.features)[None])
        p = np.where(mcts.search_moves(empty), prior[0].astype(np.float64), 0.0)  # the moves searched
        p /= p.sum()
        target = game.policy[0] if search == "gumbel" else game.visits[0] / game.visits[0].sum()
        t = target.astype(np.float64)
        kl = float(np.sum(t[t > 0] * np.log(t[t > 0] / p[t > 0])))
        assert float(game.surprise[0]) == pytest.approx(kl, rel=1e-3, abs=1e-4)
    record = selfplay_game.compiled_game_record(finished[0], cfg, cfg.features, {}, {}, 1)
    out = str(tmp_path / "g.arrow.zst")
    gamefile.write_game(out, record)
    np.testing.assert_array_equal(gamefile.read_game(out).surprise, finished[0].surprise)
