"""The engine's memory savings change no game: boards replayed instead of kept, no virtual-loss arrays where
no virtual loss can be pending, and `stop_after_moves` (the memory probe's) ends a game without cutting its
searches short, so a stopped game is the first moves of the whole one."""

from __future__ import annotations

import numpy as np
import pytest

from minigo_core.base.config import search_settings
from minigo_core.nn import model
from minigo_core.search import engine


@pytest.fixture(scope="module", autouse=True)
def _engine_built(compiled_library):
    compiled_library(engine.LIBRARY)  # skips without the build, fails under CI=true


RUN = {"seed": 5, "model": {"blocks": 1, "filters": 8, "fc_width": 8, "backend": "dsp"}}


def _games(net, cfg, count: int, stop_after_moves: int = 0) -> list[engine.FinishedGame]:
    settings = engine.settings_for(search_settings(cfg), cfg.features, cfg.board_size)
    settings.stop_after_moves = stop_after_moves
    games = engine.SelfplayGames(
        net, settings, board_size=cfg.board_size, komi=cfg.komi, seed=cfg.seed, generation=1,
        first_game=0, count=count,
    )  # fmt: skip
    return sorted(games.finished(), key=lambda g: g.index)


@pytest.mark.parametrize(("search", "parallel"), [("gumbel", 1), ("puct", 1), ("puct", 4)])
def test_a_stopped_game_is_the_first_moves_of_the_whole_game(tmp_path, make_config, search, parallel):
    selfplay = {"search": search, "readouts": 48, "fast_readouts": 8, "full_search_fraction": 0.5,
                "parallel_readouts": parallel, "resign_disabled_fraction": 1.0}  # fmt: skip
    cfg = make_config(RUN, base="default", board_size=7, selfplay=selfplay)
    url = str(tmp_path / "m.safetensors")
    model.save_model(url, model.random_model(model.ModelConfig.from_run(cfg), 2, backend="torch"), {})
    net = engine.load_network(url)
    whole, stopped = _games(net, cfg, 3), _games(net, cfg, 3, stop_after_moves=10)
    for w, s in zip(whole, stopped, strict=True):
        assert len(s.moves) == 10 < len(w.moves)
        np.testing.assert_array_equal(s.moves, w.moves[:10])
        rows = len(s.move_index)
        np.testing.assert_array_equal(s.visits, w.visits[:rows])
        np.testing.assert_array_equal(s.root_value, w.root_value[:rows])
        if search == "gumbel":
            np.testing.assert_array_equal(s.policy, w.policy[:rows])
    assert _games(net, cfg, 3)[1].moves.tolist() == whole[1].moves.tolist()  # and again: the same game


def test_the_memory_probe_plays_the_first_moves_and_measures_its_files(tmp_path, make_config):
    from minigo_core.bench import _selfplay_memory as probe

    cfg = make_config(RUN, base="default", board_size=9, features="mlperf07")
    url = str(tmp_path / "m.safetensors")
    model.save_model(url, model.random_model(model.ModelConfig.from_run(cfg), 2, backend="torch"), {})
    out = probe.run(url, 3, 8, 5, "gumbel")
    assert out["positions"] == 3 * 5 and out["search"] == "gumbel"
    assert 0 < out["bytes_per_position"] < 150 and out["peak_rss_mib"] > 0
