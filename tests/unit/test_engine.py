"""The compiled self-play engine: PUCT against mcts.py, Gumbel's policy target, games alone vs batched.

The rules, features and symmetries of the engine are tested against go.py, features.py and GNU Go in
test_engine_rules.py.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest
import torch

from minigo_core.base import native
from minigo_core.base.config import SearchSettings, search_settings
from minigo_core.data import gamefile
from minigo_core.game import go
from minigo_core.jobs.selfplay import cli_main
from minigo_core.nn import fused, model
from minigo_core.search import engine, engine_test, mcts

if os.environ.get("CI") != "true":
    try:
        engine.lib()
        engine_test.lib()
    except native.NativeUnavailable as exc:  # pragma: no cover - a checkout without `make setup`
        pytest.skip(str(exc), allow_module_level=True)


# The engine tests' run, over config.yaml's defaults: a 1x16 net on the agz planes (those mcts.py's test
# network reads), MiniGo's PUCT with 32 and 8 readouts.
ENGINE_RUN = {
    "seed": 11,
    "features": "agz",
    "model": {"blocks": 1, "filters": 16, "fc_width": 16, "backend": "dsp"},
    "selfplay": {
        "readouts": 32,
        "fast_readouts": 8,
        "parallel_readouts": 1,
        "full_search_fraction": 0.5,
        "games_per_job": 4,
        "search": "puct",
    },
}


@pytest.fixture(scope="session")
def run_config(make_config):
    """`run_config(board_size=9, **selfplay)`: `ENGINE_RUN` with these settings."""
    return lambda board_size=9, **selfplay: make_config(
        ENGINE_RUN, base="default", board_size=board_size, selfplay=selfplay
    )


@pytest.fixture
def config_file(tmp_path, write_config):
    """`config_file(**selfplay) -> path`: `run_config`'s config as a file, its run root under tmp_path."""
    return lambda **selfplay: str(
        write_config(
            tmp_path, ENGINE_RUN, base="default", name="config.yaml", board_size=9, selfplay=selfplay
        )
    )


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, run_config) -> str:
    torch.set_num_threads(1)
    net = model.random_model(model.ModelConfig.from_run(run_config()), seed=4, backend="torch")
    path = str(tmp_path_factory.mktemp("engine") / "gen0003.safetensors")
    model.save_model(path, net, {"generation": 3})
    return path


@pytest.mark.parametrize("parallel", [1, 8])
@pytest.mark.parametrize("init_unvisited", ["parent", "loss"])
def test_compiled_puct_gives_the_visit_counts_of_mcts_py(
    model_file, run_config, random_position, parallel, init_unvisited
):
    """Noise and random symmetries off: the same network outputs, so the same tree, visit for visit."""
    cfg = run_config(
        readouts=64, parallel_readouts=parallel, init_unvisited=init_unvisited, dirichlet_weight=0
    )
    reference_net = fused.load(model_file)
    net = engine.load_network(model_file)
    search = dataclasses.replace(search_settings(cfg), softpick_moves=0, random_symmetry=False)
    settings = engine.settings_for(search, "agz", 9)
    rng = np.random.default_rng(parallel * 10 + len(init_unvisited))
    compared = 0
    for moves in (0, 1, 12, 25, 40):
        position, played = random_position(rng, moves)
        player = mcts.MCTSPlayer(reference_net, search, 9, 7.5, np.random.default_rng(0))
        ref = player.search(position, full_search=True, noise=False)
        out = engine.Searcher(net, settings, board_size=9, komi=7.5).search(played, noise=False)
        assert out.visits.sum() == ref.visits.sum() > 0
        np.testing.assert_array_equal(out.visits, ref.visits)
        assert out.root_value == ref.root_value  # bit for bit: the same float64 arithmetic
        assert out.move == ref.fmove
        compared += 1
    assert compared == 5


def test_searcher_rejects_illegal_and_finished_positions(model_file, run_config):
    net = engine.load_network(model_file)
    settings = engine.settings_for(search_settings(run_config()), "agz", 9)
    searcher = engine.Searcher(net, settings, board_size=9, komi=7.5)
    with pytest.raises(ValueError, match="move 2"):
        searcher.search([40, 40])
    with pytest.raises(ValueError, match="finished"):
        searcher.search([81, 81])


# ---- Gumbel AlphaZero's improved policy ----
def _policy_case(rng: np.random.Generator, a: int = 12):
    legal = rng.random(a) < 0.8
    legal[0] = legal[1] = True
    prior = rng.random(a) * legal
    prior /= prior.sum()
    visits = rng.integers(0, 6, a) * legal
    q = rng.uniform(-1, 1, a)
    return prior, visits, q, legal


def test_gumbel_policy_sums_to_one_and_is_zero_on_illegal_moves():
    rng = np.random.default_rng(1)
    for _ in range(50):
        prior, visits, q, legal = _policy_case(rng)
        pi = engine_test.gumbel_improved_policy(prior, visits, q, legal, float(rng.uniform(-1, 1)))
        assert pi.sum() == pytest.approx(1.0, abs=1e-12)
        assert (pi[~legal] == 0).all() and (pi >= 0).all()


def test_gumbel_policy_equals_the_prior_when_no_simulation_ran():
    rng = np.random.default_rng(2)
    prior, _, q, legal = _policy_case(rng)
    pi = engine_test.gumbel_improved_policy(prior, np.zeros_like(prior, dtype=np.int32), q, legal, 0.3)
    np.testing.assert_allclose(pi, prior, rtol=1e-12, atol=1e-15)


def test_gumbel_policy_prefers_the_best_completed_q_at_large_c_scale():
    rng = np.random.default_rng(3)
    for _ in range(20):
        prior, visits, q, legal = _policy_case(rng)
        visits[legal] = np.maximum(visits[legal], 1)  # every legal move visited: completed Q = Q
        best = int(np.argmax(np.where(legal, q, -np.inf)))
        pi = engine_test.gumbel_improved_policy(prior, visits, q, legal, 0.0, c_scale=1000.0)
        assert int(np.argmax(pi)) == best and pi[best] > 0.99
        # at a small scale the prior still counts: the policy moves from the prior towards the best Q
        small = engine_test.gumbel_improved_policy(prior, visits, q, legal, 0.0, c_scale=0.01)
        assert small[best] >= prior[best] - 1e-12


def test_gumbel_policy_fills_unvisited_moves_with_the_mixed_value():
    prior = np.array([0.5, 0.3, 0.2])
    legal = np.ones(3, bool)
    visits = np.array([4, 0, 0], np.int32)
    q = np.array([0.9, 0.0, 0.0])
    # v_mix = (v + 4 * 0.9) / 5 with v = -1: both unvisited moves get it, so they keep their prior ratio
    pi = engine_test.gumbel_improved_policy(prior, visits, q, legal, -1.0)
    assert pi[1] / pi[2] == pytest.approx(prior[1] / prior[2])
    assert pi[0] > prior[0]


def _one_gumbel_game(model_file, run_config, parallel: int) -> tuple[engine.FinishedGame, engine.EngineStats]:
    cfg = run_config(search="gumbel", readouts=32, fast_readouts=32, full_search_fraction=1.0,
                     parallel_readouts=parallel, gumbel_considered=4)  # fmt: skip
    settings = engine.settings_for(search_settings(cfg), "agz", 9)
    games = engine.SelfplayGames(engine.load_network(model_file), settings, board_size=9, komi=7.5, seed=1,
                                 generation=3, first_game=0, count=1)  # fmt: skip
    (game,) = list(games.finished())
    return game, games.stats()


def test_gumbel_batches_a_phases_considered_moves_and_searches_as_one_at_a_time(model_file, run_config):
    """parallel_readouts > 1 with Gumbel (a player's search, `evaluate.parallel_readouts`): the simulations of
    a phase's different considered moves go to the network in one batch; they descend disjoint subtrees, so
    the game (its noise, symmetries, moves, visits and policy targets) is the one of one leaf a batch."""
    (one, one_stats), (batched, stats) = (_one_gumbel_game(model_file, run_config, p) for p in (1, 8))
    assert one_stats.max_batch == 1 and one_stats.leaves == one_stats.batches
    assert stats.max_batch == 4 and stats.mean_batch > 2  # at most the 4 considered moves
    assert stats.leaves == one_stats.leaves and batched.readouts == one.readouts
    np.testing.assert_array_equal(batched.moves, one.moves)
    np.testing.assert_array_equal(batched.visits, one.visits)
    np.testing.assert_array_equal(batched.policy, one.policy)
    # the root's own sum adds the same values in another order
    np.testing.assert_allclose(batched.root_value, one.root_value, rtol=0, atol=1e-6)


# ---- games: alone or among others, 1 or 2 cores ----
@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_a_game_is_the_same_bytes_alone_or_among_others_with_1_or_2_cores(
    tmp_path, model_file, config_file, search
):
    cfg_path = config_file(search=search, readouts=16, parallel_readouts=2 if search == "puct" else 1)
    common = ["--config", cfg_path, "--model", model_file, "--generation", "3"]
    many = str(tmp_path / "many" / "game{game:05d}.arrow")
    assert cli_main(common + ["--game", "2", "--count", "5", "--out", many, "--threads", "2"]) == 0
    for game in (2, 4, 6):
        alone = str(tmp_path / f"alone{game}.arrow")
        assert cli_main(common + ["--game", str(game), "--out", alone, "--threads", "1"]) == 0
        assert open(alone, "rb").read() == open(many.format(game=game), "rb").read()
    records = [gamefile.read_game(many.format(game=g)) for g in range(2, 7)]
    assert len({tuple(map(str, r.moves)) for r in records}) == 5  # different games
    for r in records:
        assert r.metadata["search"]["engine"] == "compiled"
        assert r.metadata["target"] == ("policy" if search == "gumbel" else "visits")
        assert (r.policy is not None) == (search == "gumbel")


def test_gumbel_game_file_holds_the_improved_policy_as_the_training_target(tmp_path, model_file, config_file):
    cfg_path = config_file(search="gumbel", readouts=8, full_search_fraction=1.0)
    out = str(tmp_path / "g.arrow")
    assert (
        cli_main(
            ["--config", cfg_path, "--model", model_file, "--generation", "3", "--game", "0", "--out", out]
        )
        == 0
    )
    record = gamefile.read_game(out)
    assert record.policy is not None and record.policy.shape == record.visits.shape
    np.testing.assert_allclose(record.policy.sum(axis=1), 1.0, atol=1e-5)
    # every recorded search spent its 8 simulations at the root's considered moves (plus the root's own)
    assert (record.visits.sum(axis=1) >= 8).all()
    planes, pi, z = record.training_examples()
    np.testing.assert_allclose(pi, record.policy / record.policy.sum(axis=1, keepdims=True), rtol=1e-6)
    assert planes.shape[0] == pi.shape[0] == z.shape[0] == record.num_positions


def test_selfplay_job_writes_each_game_when_it_ends_then_its_record(
    tmp_path, model_file, config_file, capsys
):
    cfg_path = config_file(readouts=8)
    pattern = str(tmp_path / "g" / "game{game:05d}.arrow")
    record_path = str(tmp_path / "g" / "job00000.json")
    argv = ["--config", cfg_path, "--model", model_file, "--generation", "3", "--game", "0", "--count", "4"]
    assert cli_main(argv + ["--out", pattern, "--record", record_path]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")]
    assert len(said) == 4  # one line per game, as it ends
    record = json.loads(open(record_path).read())
    assert [f["game"] for f in record["files"]] == [0, 1, 2, 3]
    attempt = record["attempt"]
    assert sorted(t["finished_order"] for t in attempt["games"]) == [0, 1, 2, 3]
    assert attempt["startup_s"] > 0 and attempt["engine"]["mean_batch"] > 1
    # games end at different times; the later a game ends, the later its wall time
    walls = [t["game_wall_s"] for t in sorted(attempt["games"], key=lambda t: t["finished_order"])]
    assert walls == sorted(walls)


def test_a_rerun_job_keeps_its_earlier_games_and_replays_only_the_missing_one(
    tmp_path, model_file, config_file, capsys
):
    cfg_path = config_file(readouts=8)
    pattern = str(tmp_path / "g" / "game{game:05d}.arrow")
    record_path = str(tmp_path / "g" / "job00000.json")
    argv = ["--config", cfg_path, "--model", model_file, "--generation", "3", "--game", "0", "--count", "4"]
    argv += ["--out", pattern, "--record", record_path]
    assert cli_main(argv) == 0
    first = json.loads(open(record_path).read())
    files = [pattern.format(game=g) for g in range(4)]
    stamps = [os.stat(f).st_mtime_ns for f in files]
    os.remove(files[2])  # as if the job had been killed before game 2 ended, while writing its file:
    stale = tmp_path / "g" / ".tmp-game00002.arrow.4242.deadbeef"
    stale.write_bytes(b"half a game")
    other = tmp_path / "g" / ".tmp-game00009.arrow.4242.deadbeef"  # not this job's game: left alone
    other.write_bytes(b"x")
    record_tmp = tmp_path / "g" / ".tmp-job00000.json.4243.deadbeef"  # a record killed before its rename
    record_tmp.write_bytes(b"{")
    capsys.readouterr()
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "kept 3 game files of an earlier attempt: 0-1,3" in out
    assert "removed 2 temporary files of a killed earlier attempt" in out
    assert not stale.exists() and not record_tmp.exists() and other.exists()
    again = json.loads(open(record_path).read())
    assert again["files"] == first["files"]  # game 2 replayed to the same bytes
    assert [os.stat(f).st_mtime_ns == s for f, s in zip(files, stamps, strict=True)] == [
        True,
        True,
        False,
        True,
    ]
    assert again["attempt"]["kept_from_earlier_attempt"] == [0, 1, 3]
    # a file the model is newer than (the model was written again: a rerun) is replayed, not kept
    os.utime(model_file, None)
    assert cli_main(argv) == 0
    assert "replaying game 0: " in capsys.readouterr().out  # "... is older than the model"
    assert json.loads(open(record_path).read())["attempt"]["kept_from_earlier_attempt"] == []


def test_engine_refuses_a_model_of_another_board_size(tmp_path, model_file, run_config):
    net = engine.load_network(model_file)
    cfg = run_config()
    with pytest.raises(ValueError, match="board size"):
        engine.SelfplayGames(
            net,
            engine.settings_for(search_settings(cfg), "agz", 7),
            board_size=7,
            komi=7.5,
            seed=1,
            generation=0,
            first_game=0,
            count=1,
        )
    with pytest.raises(ValueError, match="planes"):
        engine.SelfplayGames(
            net,
            engine.settings_for(search_settings(cfg), "mlperf07", 9),
            board_size=9,
            komi=7.5,
            seed=1,
            generation=0,
            first_game=0,
            count=1,
        )


def test_settings_struct_matches_the_library_and_rejects_unknown_searches(run_config):
    c_size, py_size = native.struct_sizes(engine.LIBRARY)["EngineSettings"]
    assert c_size == py_size == engine.ctypes.sizeof(engine.EngineSettings)
    bad = dataclasses.replace(search_settings(run_config()), search="alphabeta")
    with pytest.raises(ValueError, match="selfplay.search"):
        engine.settings_for(bad, "agz", 9)


# ---- evaluation and GTP play through the engine ----
def test_model_player_plays_through_the_compiled_engine_and_falls_back_for_set_up_stones(
    model_file, run_config
):
    from minigo_core.play import players

    spec = players.resolve_spec(model_file)
    search = SearchSettings(readouts=16, softpick_moves=2, resign_threshold=-1.0)
    player = players.make_player(spec, search, backend="dsp")
    assert player.engine_name == "compiled"
    moves = []
    for seed in (1, 1, 2):
        player.new_game(9, 7.5, seed)
        position, game = go.Position(9, 7.5), []
        for _ in range(6):
            move = player.genmove(position)
            position = position.play_move(move)
            game.append(move)
        moves.append(game)
    assert moves[0] == moves[1]  # seeded: the same game again
    assert isinstance(player._mcts, engine.Searcher)
    setup = go.Position.from_board(np.eye(9, dtype=np.int8))  # stones no move sequence made
    player.new_game(9, 7.5, 3)
    move = player.genmove(setup)
    assert setup.is_move_legal(move) and isinstance(player._mcts, mcts.MCTSPlayer)
    player.new_game(9, 7.5, 4)  # the next game is the compiled engine's again
    player.genmove(go.Position(9, 7.5))
    assert isinstance(player._mcts, engine.Searcher) and player.engine_name == "compiled"


def test_selfplay_benchmark_ends_with_its_json_line(capsys):
    from minigo_core.bench import selfplay as bench

    argv = ["--config", "config/tiny.yaml", "--games", "1", "--ks", "1,2", "--moves-19", "0", "--no-memory"]
    assert bench.main(argv) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    for key in (
        "engine_vs_reference",
        "non_network_share",
        "startup_share",
        "reference_readouts_per_s",
        "cpu",
    ):
        assert key in result
    assert result["engine_vs_reference"] > 0 and 0 < result["startup_share"] < 1
    assert {(r["search"], r["k"]) for r in result["engine"]} >= {("puct", 1), ("gumbel", 2)}
