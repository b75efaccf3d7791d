"""SGF: write a game with sgfmill and read it back into the same moves and positions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sgfmill import sgf as sgfmill_sgf

from minigo_core.game import coords, go, sgf


def test_write_has_the_properties() -> None:
    data = sgf.write_sgf(
        [(2, 2), None, (6, 6)],
        9,
        7.5,
        "W+7.5",
        comments=["first", None, "v=0.3"],
        players={"black": "gen0003", "white": "gnugo:1"},
    )
    game = sgfmill_sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    assert game.get_size() == 9 and game.get_komi() == 7.5
    assert root.get("RE") == "W+7.5" and root.get("RU") == "Chinese"
    assert root.get("PB") == "gen0003" and root.get("PW") == "gnugo:1"
    nodes = game.get_main_sequence()[1:]
    assert [n.get_move() for n in nodes] == [
        ("b", (6, 2)),
        ("w", None),
        ("b", (2, 6)),
    ]  # sgfmill rows from bottom
    assert nodes[0].get("C") == "first" and not nodes[1].has_property("C") and nodes[2].get("C") == "v=0.3"


def test_roundtrip() -> None:
    moves = [(0, 0), (18, 18), None, (3, 15)]
    data = sgf.write_sgf(moves, 19, 6.5, "B+R")
    assert sgf.read_sgf(data) == (moves, 19, 6.5, "B+R")


def test_comments_must_match_moves() -> None:
    with pytest.raises(ValueError, match="one per move"):
        sgf.write_sgf([(0, 0)], 9, 7.5, "", comments=[])


def test_bad_files() -> None:
    with pytest.raises(ValueError, match="SGF"):
        sgf.read_sgf(b"this is not sgf")
    with pytest.raises(ValueError, match="alternate"):
        sgf.read_sgf(b"(;SZ[9];B[aa];B[bb])")
    with pytest.raises(ValueError, match="setup stones"):
        sgf.read_sgf(b"(;SZ[9]AB[cc][gg];W[ee])")


def test_positions_from_sgf_with_handicap_stones() -> None:
    positions = sgf.positions_from_sgf(b"(;SZ[9]KM[0.5]AB[cc][gg];W[ee];B[ce])")
    assert len(positions) == 3
    first = positions[0]
    assert first.board[2, 2] == go.BLACK and first.board[6, 6] == go.BLACK and first.to_play == go.WHITE
    assert positions[-1].board[4, 4] == go.WHITE and positions[-1].board[4, 2] == go.BLACK
    assert positions[-1].komi == 0.5


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), length=st.integers(0, 120), size=st.sampled_from([9, 13, 19]))
def test_played_game_reads_back_to_the_same_positions(seed: int, length: int, size: int) -> None:
    rng = random.Random(seed)
    position = go.Position(size, 7.5)
    moves = []
    for _ in range(length):
        legal = np.flatnonzero(position.all_legal_moves())
        move = coords.from_flat(int(rng.choice(legal)), size)
        moves.append(move)
        position = position.play_move(move)
    data = sgf.write_sgf(moves, size, 7.5, "B+0.5")
    assert sgf.read_sgf(data) == (moves, size, 7.5, "B+0.5")
    expected = go.replay(moves, size, 7.5)
    read = sgf.positions_from_sgf(data)
    assert len(read) == len(expected)
    for a, b in zip(read, expected, strict=True):
        assert (
            np.array_equal(a.board, b.board) and a.to_play == b.to_play and a.ko == b.ko and a.caps == b.caps
        )
