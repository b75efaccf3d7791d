"""Rules of Go: captures, suicide, ko, scoring, history; random games against a naive reference engine."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigo_core.game import coords, go


def board_from(diagram: str) -> np.ndarray:
    """ASCII diagram, top row first: X black, O white, . empty."""
    rows = [r.split() for r in diagram.strip().splitlines()]
    values = {"X": go.BLACK, "O": go.WHITE, ".": go.EMPTY}
    return np.array([[values[v] for v in row] for row in rows], dtype=np.int8)


def position_from(diagram: str, to_play: int = go.BLACK, komi: float = 7.5) -> go.Position:
    return go.Position.from_board(board_from(diagram), to_play=to_play, komi=komi)


def gtp(vertex: str, n: int = 5) -> go.Move:
    return coords.from_gtp(vertex, n)


# ----------------------------------------------------------------------------------------- a naive reference


def naive_neighbors(p: tuple[int, int], n: int):
    r, c = p
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < n and 0 <= cc < n:
            yield rr, cc


def naive_group(board: np.ndarray, p: tuple[int, int]) -> tuple[set, set]:
    n = board.shape[0]
    color = board[p]
    stones, liberties, frontier = {p}, set(), [p]
    while frontier:
        q = frontier.pop()
        for nb in naive_neighbors(q, n):
            if board[nb] == 0:
                liberties.add(nb)
            elif board[nb] == color and nb not in stones:
                stones.add(nb)
                frontier.append(nb)
    return stones, liberties


def naive_play(board: np.ndarray, move: tuple[int, int], color: int) -> tuple[np.ndarray, int] | None:
    """Board after the move and the number of captured stones, or None if occupied or suicide (no ko)."""
    if board[move] != 0:
        return None
    new = board.copy()
    new[move] = color
    captured = 0
    for nb in naive_neighbors(move, board.shape[0]):
        if new[nb] == -color:
            stones, libs = naive_group(new, nb)
            if not libs:
                for s in stones:
                    new[s] = 0
                captured += len(stones)
    if not naive_group(new, move)[1]:
        return None
    return new, captured


# ------------------------------------------------------------------------------------------------ basics


def test_empty_position() -> None:
    pos = go.Position()
    assert pos.board_size == 9 and pos.komi == 7.5 and pos.to_play == go.BLACK
    assert pos.board.shape == (9, 9) and pos.board.dtype == np.int8 and not pos.board.any()
    assert (
        pos.n == 0 and pos.recent == () and pos.board_history == () and pos.caps == (0, 0) and pos.ko is None
    )
    legal = pos.all_legal_moves()
    assert legal.dtype == bool and legal.shape == (82,) and legal.all()
    assert pos.score() == -7.5
    assert not pos.is_game_over() and pos.result() == 0


def test_play_move_returns_new_position_and_alternates() -> None:
    pos = go.Position(9)
    after = pos.play_move((2, 3))
    assert after is not pos and not pos.board.any()
    assert after.board[2, 3] == go.BLACK and after.to_play == go.WHITE and after.n == 1
    assert after.recent == ((2, 3),)
    assert np.array_equal(after.board_history[-1], pos.board)
    after2 = after.play_move(None)
    assert after2.to_play == go.BLACK and after2.recent == ((2, 3), None)
    assert np.array_equal(after2.board, after.board)


def test_board_is_read_only() -> None:
    pos = go.Position(9).play_move((4, 4))
    with pytest.raises(ValueError):
        pos.board[0, 0] = 1


@pytest.mark.parametrize("move", [(9, 0), (0, -1), (3,), "D4"])
def test_off_board_or_malformed_move(move) -> None:
    pos = go.Position(9)
    with pytest.raises(go.IllegalMove):
        pos.play_move(move)
    assert not pos.is_move_legal(move)


def test_occupied_is_illegal_and_original_untouched() -> None:
    pos = go.Position(9).play_move((4, 4))
    before = pos.board.copy()
    with pytest.raises(go.IllegalMove, match="occupied"):
        pos.play_move((4, 4))
    assert np.array_equal(pos.board, before) and pos.to_play == go.WHITE and pos.n == 1


def test_single_capture_in_corner() -> None:
    pos = position_from("""
        O X . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    after = pos.play_move((1, 0))
    assert after.board[0, 0] == go.EMPTY and after.caps == (1, 0)
    assert after.ko is None  # the capturing stone is not alone in an eye


def test_multi_group_capture() -> None:
    pos = position_from(
        """
        . O X . .
        O X . . .
        X . . . .
        . . . . .
        . . . . .
    """,
        to_play=go.BLACK,
    )
    # O at B5 and A4 are two separate groups, each with the single liberty A5.
    after = pos.play_move((0, 0))
    assert after.board[0, 1] == go.EMPTY and after.board[1, 0] == go.EMPTY
    assert after.caps == (2, 0)


def test_suicide_single_and_multi_stone() -> None:
    pos = position_from(
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
    """,
        to_play=go.WHITE,
    )
    with pytest.raises(go.IllegalMove, match="suicide"):
        pos.play_move((0, 0))
    assert not pos.is_move_legal((0, 0)) and not pos.all_legal_moves()[0]
    pos = position_from(
        """
        O . X . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """,
        to_play=go.WHITE,
    )
    with pytest.raises(go.IllegalMove, match="suicide"):
        pos.play_move((0, 1))  # joins O at A5, whose only liberty is B5


def test_filling_own_last_liberty_is_legal_when_it_captures() -> None:
    pos = position_from(
        """
        . X O . .
        X O . . .
        O . . . .
        . . . . .
        . . . . .
    """,
        to_play=go.WHITE,
    )
    assert pos.is_move_legal((0, 0))
    after = pos.play_move((0, 0))
    assert after.board[0, 1] == 0 and after.board[1, 0] == 0 and after.caps == (0, 2)


def test_ko_and_ko_threat() -> None:
    pos = position_from(
        """
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """,
        to_play=go.BLACK,
    )
    after = pos.play_move((2, 2))  # black captures O at B3
    assert after.board[2, 1] == 0 and after.ko == (2, 1)
    with pytest.raises(go.IllegalMove, match="ko"):
        after.play_move((2, 1))
    assert not after.is_move_legal((2, 1)) and not after.all_legal_moves()[coords.to_flat((2, 1), 5)]
    threat = after.play_move((4, 4)).play_move((4, 0))
    assert threat.ko is None and threat.is_move_legal((2, 1))
    retaken = threat.play_move((2, 1))
    assert retaken.board[2, 2] == 0 and retaken.ko == (2, 2)


def test_pass_clears_ko() -> None:
    pos = position_from("""
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """)
    after = pos.play_move((2, 2)).play_move(None).play_move(None)
    assert after.ko is None and after.to_play == go.WHITE and after.is_move_legal((2, 1))


def test_capture_of_two_stones_is_not_ko() -> None:
    pos = position_from(
        """
        . X X O .
        X O O . O
        . X X O .
        . . . . .
        . . . . .
    """,
        to_play=go.BLACK,
    )
    after = pos.play_move((1, 3))  # a lone stone in White's eye, but it captures two stones
    assert after.caps == (2, 0) and after.ko is None
    retake = after.play_move((1, 2))  # White may take the lone stone back at once: no ko ban
    assert retake.caps == (2, 1) and retake.board[1, 3] == go.EMPTY


def test_score_tromp_taylor() -> None:
    pos = position_from(
        """
        . X O . .
        . X O . .
        X X O . .
        . . O . .
        . . O O O
    """,
        komi=0.5,
    )
    # Black: 4 stones + territory {A5, A4} = 6; White: 7 stones + {D5 E5 D4 E4 D3 E3 D2 E2} = 15;
    # A2 B2 A1 B1 touch both colours and count for nobody.
    assert pos.score() == pytest.approx(6 - 15 - 0.5)
    assert position_from(". . .\n. X .\n. . .", komi=7.5).score() == pytest.approx(9 - 7.5)


def test_game_over_and_result() -> None:
    pos = go.Position(5, komi=0.5).play_move((2, 2)).play_move(None)
    assert not pos.is_game_over() and pos.result() == 0
    pos = pos.play_move(None)
    assert pos.is_game_over() and pos.result() == go.BLACK
    white = go.Position(5, komi=7.5).play_move(None).play_move(None)
    assert white.result() == go.WHITE


def test_history_keeps_seven_boards() -> None:
    pos = go.Position(9)
    boards = [pos.board]
    for i in range(10):
        pos = pos.play_move((i % 9, i // 9 * 2))
        boards.append(pos.board)
    assert pos.n == 10 and len(pos.recent) == 10 and len(pos.board_history) == 7
    for mine, expected in zip(pos.board_history, boards[-8:-1], strict=True):
        assert np.array_equal(mine, expected)


def test_replay_and_error_names_the_move() -> None:
    moves = [(0, 0), (1, 1), None, (2, 2)]
    positions = go.replay(moves, 9, 7.5)
    assert len(positions) == 5 and positions[0].n == 0 and positions[-1].recent == tuple(moves)
    with pytest.raises(go.IllegalMove, match="move 3"):
        go.replay([(0, 0), (1, 1), (0, 0)], 9)


def test_from_board_rejects_bad_boards() -> None:
    with pytest.raises(ValueError, match="no liberties"):
        position_from("X O .\nO . .\n. . .")
    with pytest.raises(ValueError, match="square"):
        go.Position.from_board(np.zeros((3, 4), dtype=np.int8))
    with pytest.raises(ValueError, match="only"):
        go.Position.from_board(np.full((3, 3), 2, dtype=np.int8))


@pytest.mark.parametrize("size", [1, 20])
def test_unsupported_board_size(size: int) -> None:
    with pytest.raises(ValueError, match="board_size"):
        go.Position(size)


def test_liberty_counts_and_atari_points() -> None:
    pos = position_from("""
        O X . . .
        . . . . .
        . . X X .
        . . . . .
        . . . . .
    """)
    libs = pos.liberty_counts()
    assert libs[0, 0] == 1 and libs[0, 1] == 2 and libs[2, 2] == 6 and libs[1, 1] == 0
    assert pos.atari_liberties(go.WHITE)[1, 0] and pos.atari_liberties(go.WHITE).sum() == 1
    assert pos.eyeish(go.BLACK).sum() == 0


# --------------------------------------------------------------------------------- random games, properties


def random_game(board_size: int, seed: int, max_moves: int | None = None) -> list[go.Position]:
    rng = random.Random(seed)
    pos = go.Position(board_size)
    positions = [pos]
    limit = max_moves if max_moves is not None else 2 * board_size * board_size
    while not pos.is_game_over() and pos.n < limit:
        legal = np.flatnonzero(pos.all_legal_moves()[:-1] & ~pos.eyeish(pos.to_play).reshape(-1))
        move = (
            None
            if len(legal) == 0 or rng.random() < 0.02
            else coords.from_flat(int(rng.choice(legal)), board_size)
        )
        pos = pos.play_move(move)
        positions.append(pos)
    return positions


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from([5, 7, 9, 13, 19]), seed=st.integers(0, 2**31), max_moves=st.integers(1, 250))
def test_random_games_match_naive_reference(size: int, seed: int, max_moves: int) -> None:
    """Every position: incremental groups equal a fresh labelling; the legal set equals a naive engine's."""
    positions = random_game(size, seed, max_moves)
    for before, after in zip(positions, positions[1:], strict=False):
        after._check_invariants()
        move = after.recent[-1]
        if move is None:
            assert np.array_equal(after.board, before.board)
            continue
        expected = naive_play(before.board, move, before.to_play)
        assert expected is not None
        board, captured = expected
        assert np.array_equal(after.board, board)
        # Stones are conserved up to captures, and the capture counter agrees.
        assert np.count_nonzero(after.board) == np.count_nonzero(before.board) + 1 - captured
        assert sum(after.caps) - sum(before.caps) == captured
    pos = positions[-1]
    legal = pos.all_legal_moves()
    n = pos.board_size
    for r in range(n):
        for c in range(n):
            naive = naive_play(pos.board, (r, c), pos.to_play) is not None and (r, c) != pos.ko
            assert legal[r * n + c] == naive == pos.is_move_legal((r, c)), f"({r}, {c})\n{pos}"


@pytest.mark.parametrize("size", range(5, 20))
def test_every_board_size_plays_a_full_game(size: int) -> None:
    positions = random_game(size, seed=size)
    final = positions[-1]
    final._check_invariants()
    assert final.n == len(positions) - 1
    assert isinstance(final.score(), float)


def test_pickle_roundtrip_keeps_a_working_read_only_position() -> None:
    import pickle

    pos = go.replay([(2, 2), (3, 3), (2, 3), None], 9)[-1]
    copy = pickle.loads(pickle.dumps(pos))
    copy._check_invariants()
    assert not copy.board.flags.writeable
    assert copy.recent == pos.recent and copy.caps == pos.caps and len(copy.board_history) == 4
    assert np.array_equal(copy.play_move((4, 4)).board, pos.play_move((4, 4)).board)
