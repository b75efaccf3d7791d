"""The `ladders` feature set's two ladder planes (`minigo_core.game.ladders`, and the compiled board's reading
in `game/csrc/board.cpp`): ladders that work and ladders that a breaker stops, from either side to move, an
escape by capture, the read budget, and the compiled planes byte for byte the Python ones (set-up positions,
random games, the window's replay)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from minigo_core.base.config import search_settings
from minigo_core.game import features, go, ladders, native_board, native_replay, symmetries
from minigo_core.nn import fused, model
from minigo_core.search import engine, mcts

LADDERS = "ladders"
CAPTURED, MOVES = 13, 14  # the ladder planes' indices in the `ladders` set


def set_up(black: list, white: list, to_play: int = go.BLACK, n: int = 9) -> tuple:
    """The Python position and the compiled board with these stones (Black and White alternating, a pass
    where one side has no stone left to place), then `to_play` to move."""
    pos, nb = go.Position(n), native_board.NativeBoard(n)
    black, white = list(black), list(white)
    while black or white:
        for stones in (black, white):
            move = stones.pop(0) if stones else None
            pos = pos.play_move(move)
            nb.play(n * n if move is None else move[0] * n + move[1])
    if pos.to_play != to_play:
        pos = pos.play_move(None)
        nb.play(n * n)
    return pos, nb


def planes(pos: go.Position, nb: native_board.NativeBoard) -> tuple[np.ndarray, np.ndarray]:
    """The ladder planes, after checking the compiled ones equal the Python ones under every symmetry."""
    reference = features.extract(pos, LADDERS)
    for sym in range(symmetries.NUM_SYMMETRIES):
        np.testing.assert_array_equal(nb.features(LADDERS, sym), symmetries.apply_planes(sym, reference))
    return reference[CAPTURED], reference[MOVES]


def points(plane: np.ndarray) -> set[tuple[int, int]]:
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(plane), strict=True)}


# A white stone at E5 (row 4, col 4) with two liberties, E4 (5, 4) and F5 (4, 5); Black's D5, E6 and F4 make
# an atari on either liberty a ladder: towards the lower left (White extends to E4) or the upper right (F5).
CHASERS = [(3, 4), (4, 3), (5, 5)]
STONE = (4, 4)


def test_a_ladder_on_an_open_board_captures_and_both_ataris_start_it() -> None:
    captured, moves = planes(*set_up(CHASERS, [STONE]))
    assert points(captured) == {STONE}
    assert points(moves) == {(5, 4), (4, 5)}  # either atari drives White to an edge
    assert features.num_planes(LADDERS) == 15


def test_a_breaker_on_one_path_leaves_only_the_other_atari() -> None:
    # A white stone at B2 (7, 1) on the lower-left path: the atari on F5 (White extends to E4, runs to the
    # lower left) fails; the atari on E4 (White runs to the upper right) still works.
    captured, moves = planes(*set_up(CHASERS, [STONE, (7, 1)]))
    assert points(captured) == {STONE}
    assert points(moves) == {(5, 4)}
    # Breakers on both paths: no ladder, nothing marked.
    captured, moves = planes(*set_up(CHASERS, [STONE, (7, 1), (1, 7)]))
    assert not captured.any() and not moves.any()


def test_the_planes_are_from_the_side_to_move() -> None:
    # White to move: its own two-liberty stone is still captured if Black moves first (the stone plane), and
    # White has no ladder of its own to start (the moves plane is the mover's).
    captured, moves = planes(*set_up(CHASERS, [STONE], to_play=go.WHITE))
    assert points(captured) == {STONE} and not moves.any()


def test_a_group_in_atari_escapes_by_capturing_a_chaser() -> None:
    # White E5 in atari (Black D5, E6, F5; its liberty E4); Black's F5 is itself in atari (White F6 and G5
    # next to it; its liberty F4): White to move captures at F4 rather than extend, and is out.
    black = [(3, 4), (4, 3), (4, 5)]
    white = [STONE, (3, 5), (4, 6)]
    pos, nb = set_up(black, white, to_play=go.WHITE)
    assert pos.liberty_counts()[STONE] == 1 and pos.liberty_counts()[(4, 5)] == 1
    captured, _ = planes(pos, nb)
    assert STONE not in points(captured)
    # With Black's F4 there (F5 is safe), extending to E4 runs into a ladder towards the lower left.
    pos, nb = set_up([*black, (5, 5)], white[:2], to_play=go.WHITE)
    assert pos.liberty_counts()[STONE] == 1
    assert STONE in points(planes(pos, nb)[0])


def test_a_query_that_runs_out_of_reads_marks_nothing(monkeypatch) -> None:
    pos, _ = set_up(CHASERS, [STONE])
    monkeypatch.setattr(ladders, "LADDER_PLAYS", 3)  # the ladder needs more than three moves to end
    captured, moves = ladders.ladder_planes(pos)
    assert not captured.any() and not moves.any()


def random_positions(seed: int, games: int, n: int = 9) -> list[tuple[go.Position, native_board.NativeBoard]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        pos, nb = go.Position(n), native_board.NativeBoard(n)
        for move in range(2 * n * n):
            legal = np.flatnonzero(nb.search_moves()[: n * n])
            flat = int(rng.choice(legal)) if legal.size else n * n
            nb.play(flat)
            pos = pos.play_move(None if flat == n * n else divmod(flat, n))
            if move % 3 == 0:
                out.append((pos, nb.copy()))
            if nb.is_game_over():
                break
    return out


def test_random_games_read_the_same_ladders_compiled_and_in_python() -> None:
    marked = moves = 0
    for pos, nb in random_positions(seed=11, games=12):
        captured, starts = planes(pos, nb)
        marked += bool(captured.any())
        moves += bool(starts.any())
    assert marked > 50 and moves > 20  # the comparison saw many ladders, not empty planes


def test_the_window_s_compiled_replay_gives_the_ladder_planes() -> None:
    rng = np.random.default_rng(3)
    n = 9
    moves: list = []
    pos = go.Position(n)
    while not pos.is_game_over() and len(moves) < 120:
        legal = np.flatnonzero(pos.all_legal_moves()[: n * n])
        move = divmod(int(rng.choice(legal)), n) if legal.size and rng.random() > 0.02 else None
        moves.append(move)
        pos = pos.play_move(move)
    at = np.arange(0, len(moves) + 1, 2)
    got = native_replay.replay_examples(moves, n, 7.5, LADDERS, at).planes
    positions = go.replay(moves, n, 7.5)
    want = features.extract_batch([positions[int(i)] for i in at], LADDERS)
    np.testing.assert_array_equal(got, want)
    assert want[:, CAPTURED:].any()


@pytest.mark.parametrize("feature_set", ["mlperf07", LADDERS])
def test_the_first_13_planes_are_mlperf07_s(feature_set: str) -> None:
    pos, _ = set_up(CHASERS, [STONE, (7, 1)])
    np.testing.assert_array_equal(features.extract(pos, feature_set)[:13], features.extract(pos, "mlperf07"))


def test_the_compiled_search_reads_ladders_as_the_python_search(tmp_path, make_config) -> None:
    """A `ladders` net searched by the compiled engine and by mcts.py (Python planes) from positions full of
    ladders: the same network inputs, so the same tree, visit for visit."""
    torch.set_num_threads(1)
    run = make_config({"features": LADDERS}, base="default", board_size=9)
    net_cfg = dataclasses.replace(model.ModelConfig.from_run(run), feature_set=LADDERS)
    assert net_cfg.planes == 15
    path = str(tmp_path / "gen0001.safetensors")
    model.save_model(path, model.random_model(net_cfg, seed=7, backend="torch"), {"generation": 1})
    search = dataclasses.replace(
        search_settings(run), readouts=48, search="puct", softpick_moves=0, random_symmetry=False
    )
    net = engine.load_network(path)
    searcher = engine.Searcher(net, engine.settings_for(search, LADDERS, 9), board_size=9, komi=7.5)
    with_ladders = 0
    for pos, _ in random_positions(seed=5, games=2)[10:40:3]:
        if pos.is_game_over():
            continue
        with_ladders += bool(features.extract(pos, LADDERS)[CAPTURED:].any())
        player = mcts.MCTSPlayer(fused.load(path), search, 9, 7.5, np.random.default_rng(0))
        ref = player.search(pos, full_search=True, noise=False)
        played = [81 if m is None else m[0] * 9 + m[1] for m in pos.recent]
        out = searcher.search(played, noise=False)
        np.testing.assert_array_equal(out.visits, ref.visits)
        assert out.root_value == ref.root_value
    assert with_ladders >= 3
