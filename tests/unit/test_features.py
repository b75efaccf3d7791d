"""Feature planes (agz 17, mlperf07 13, tactics 17) from the mover's view, as AlphaGo Zero, MLPerf v0.7 and
AlphaGo (liberties after a move) define them."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigo_core.game import coords, features, go


def play(moves: list[str], n: int = 9) -> list[go.Position]:
    return go.replay([coords.from_gtp(m, n) for m in moves], n)


def test_num_planes_and_unknown_set() -> None:
    assert features.num_planes("agz") == 17
    assert features.num_planes("mlperf07") == 13
    with pytest.raises(ValueError, match="feature set"):
        features.num_planes("alphago")
    with pytest.raises(ValueError, match="feature set"):
        features.extract(go.Position(9), "alphago")


@pytest.mark.parametrize("feature_set", ["agz", "mlperf07", "ladders"])
def test_empty_board(feature_set: str) -> None:
    x = features.extract(go.Position(9), feature_set)
    planes = features.num_planes(feature_set)
    assert x.shape == (planes, 9, 9) and x.dtype == np.uint8
    colour_plane = 16 if feature_set == "agz" else 8
    assert (x[colour_plane] == 1).all()
    assert x.sum() == 81  # only the colour plane is set


def test_agz_stone_planes_follow_history_relative_to_mover() -> None:
    positions = play(["D4", "E5", "C3"])  # black D4, white E5, black C3; White to play
    pos = positions[-1]
    x = features.extract(pos, "agz")
    d4, e5, c3 = (coords.from_gtp(v, 9) for v in ("D4", "E5", "C3"))
    # Plane 0: the mover's (White's) stones now; plane 1: the opponent's (Black's) stones now.
    assert x[0][e5] == 1 and x[0].sum() == 1
    assert x[1][d4] == 1 and x[1][c3] == 1 and x[1].sum() == 2
    # One board back: C3 not yet played.
    assert x[2][e5] == 1 and x[3][c3] == 0 and x[3].sum() == 1
    # Two boards back: only D4. Three back: the empty board, repeated to the end.
    assert x[4].sum() == 0 and x[5][d4] == 1 and x[5].sum() == 1
    assert x[6:16].sum() == 0
    assert (x[16] == 0).all()  # White to play


def test_history_repeats_oldest_board_when_it_runs_out() -> None:
    start = go.Position.from_board(np.eye(9, dtype=np.int8))  # no history at all
    pos = start.play_move((0, 8))
    x = features.extract(pos, "agz")
    # Current board (plane pair 0) and then the setup board repeated 7 times.
    for i in range(1, 8):
        assert np.array_equal(x[2 * i + 1], np.eye(9, dtype=np.uint8))  # black = opponent of White-to-play
        assert x[2 * i].sum() == 0
    assert x[1][0, 8] == 1


def test_mlperf07_liberties_and_would_capture() -> None:
    board = np.zeros((9, 9), dtype=np.int8)
    board[0, 0] = go.WHITE  # white corner stone, 1 liberty after black B9
    board[0, 1] = go.BLACK  # black B9: 2 liberties (C9, B8)
    board[4, 4] = go.BLACK  # lone black stone: 4 liberties
    board[8, 7:9] = go.BLACK  # black H1 J1: 3 liberties
    pos = go.Position.from_board(board, to_play=go.BLACK)
    x = features.extract(pos, "mlperf07")
    assert x.shape == (13, 9, 9)
    ones, twos, threes, capture = x[9], x[10], x[11], x[12]
    assert ones[0, 0] == 1 and ones.sum() == 1
    assert twos[0, 1] == 1 and twos.sum() == 1
    assert threes[8, 7] == 1 and threes[8, 8] == 1 and threes.sum() == 2
    assert x[9:12, 4, 4].sum() == 0  # 4+ liberties: zero in all three
    assert capture[1, 0] == 1 and capture.sum() == 1  # A8 captures the white corner stone
    # For White to move, the would-capture plane looks at Black's groups in atari: none here.
    assert features.extract(pos.play_move(None), "mlperf07")[12].sum() == 0


def test_colour_plane_and_perspective_flip_on_pass() -> None:
    pos = play(["D4"])[-1]
    x_white = features.extract(pos, "agz")
    x_black = features.extract(pos.play_move(None), "agz")
    assert x_white[16].sum() == 0 and (x_black[16] == 1).all()
    # After a pass the same stones appear in the other plane of each pair.
    assert np.array_equal(x_white[1], x_black[0]) and np.array_equal(x_white[0], x_black[1])


@pytest.mark.parametrize("feature_set", ["agz", "mlperf07"])
def test_extract_batch_stacks_extract(feature_set: str) -> None:
    positions = play(["D4", "E5", "C3", "pass", "F6"], 19)
    batch = features.extract_batch(positions, feature_set)
    assert batch.shape == (6, features.num_planes(feature_set), 19, 19) and batch.dtype == np.uint8
    for i, pos in enumerate(positions):
        assert np.array_equal(batch[i], features.extract(pos, feature_set))
    with pytest.raises(ValueError, match="board size|is 9x9"):
        features.extract_batch([positions[0], go.Position(9)], feature_set)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), length=st.integers(0, 60), size=st.sampled_from([7, 9, 19]))
def test_planes_agree_with_boards_in_random_games(seed: int, length: int, size: int) -> None:
    rng = random.Random(seed)
    positions = [go.Position(size)]
    for _ in range(length):
        legal = np.flatnonzero(positions[-1].all_legal_moves())
        positions.append(positions[-1].play_move(coords.from_flat(int(rng.choice(legal)), size)))
    pos = positions[-1]
    x = features.extract(pos, "agz")
    y = features.extract(pos, "mlperf07")
    for back in range(8):
        board = positions[max(0, len(positions) - 1 - back)].board
        assert np.array_equal(x[2 * back], board == pos.to_play)
        assert np.array_equal(x[2 * back + 1], board == -pos.to_play)
        if back < 4:
            assert np.array_equal(y[2 * back : 2 * back + 2], x[2 * back : 2 * back + 2])
    assert (x[0] & x[1]).sum() == 0
    libs = pos.liberty_counts()
    assert np.array_equal(y[9] + 2 * y[10] + 3 * y[11], np.where(libs <= 3, libs, 0))
    legal = pos.all_legal_moves()[:-1].reshape(size, size)
    # Every would-capture point is empty; playing it (when legal) removes opponent stones.
    for r, c in zip(*np.nonzero(y[12]), strict=True):
        assert pos.board[r, c] == 0
        if legal[r, c]:
            after = pos.play_move((int(r), int(c)))
            assert np.count_nonzero(after.board == -pos.to_play) < np.count_nonzero(pos.board == -pos.to_play)


def test_tactics_planes_mark_self_ataris_and_two_liberty_moves_after_captures() -> None:
    empty = features.extract(go.Position(9), "tactics")
    assert empty.shape == (17, 9, 9) and empty[15].sum() == 0
    assert empty[16].sum() == 4 and empty[16][0, 0] == empty[16][8, 8] == 1  # a corner stone has 2
    assert np.array_equal(empty[:15], features.extract(go.Position(9), "ladders"))
    board = np.zeros((9, 9), dtype=np.int8)
    board[0, 1] = board[1, 1] = board[2, 0] = go.WHITE  # black A8 (row 1, col 0) would have A9 only
    board[8, 0] = go.WHITE  # a white corner stone in atari: black B1 captures it ...
    board[7, 0] = go.BLACK  # ... (black A2 holds its other liberty)
    pos = go.Position.from_board(board, to_play=go.BLACK)
    after = pos.liberties_after_moves()
    assert after[1, 0] == 1 and after[0, 0] == 1  # A8 and A9: self-ataris
    assert after[8, 1] == 3  # B1: C1, B2 and the captured A1
    x = features.extract(pos, "tactics")
    assert x[15][1, 0] == x[15][0, 0] == 1 and x[16][8, 1] == 0 and x[16][8, 8] == 1


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), length=st.integers(0, 90), size=st.sampled_from([5, 9]))
def test_liberties_after_moves_are_those_of_the_played_move(seed: int, length: int, size: int) -> None:
    rng = random.Random(seed)
    pos = go.Position(size)
    for _ in range(length):
        if pos.is_game_over():
            break
        legal = np.flatnonzero(pos.all_legal_moves())
        pos = pos.play_move(coords.from_flat(int(rng.choice(legal)), size))
    after = pos.liberties_after_moves()
    legal = pos.all_legal_moves()[:-1].reshape(size, size)
    for r in range(size):
        for c in range(size):
            want = pos.play_move((r, c)).liberty_counts()[r, c] if legal[r, c] else 0
            assert after[r, c] == want
