"""Pass-alive areas by Benson's algorithm (`minigo_core/game/benson.py`, the `passalive` feature set): known
positions (two eyes, one eye, a two-point eye, a big eye, dead stones in an eye), and the compiled engine's
planes equal the Python ones on the ends of random games, where pass-alive groups are common."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from minigo_core.base import native
from minigo_core.game import benson, coords, features, go, native_board
from minigo_core.search import mcts

X, O = go.BLACK, go.WHITE


def _position(rows: str, to_play: int = X) -> go.Position:
    """A position from rows of `X` (black), `O` (white) and `.`, the top row first."""
    lines = [r.strip() for r in rows.strip().splitlines()]
    board = [[{"X": X, "O": O, ".": 0}[c] for c in line] for line in lines]
    return go.Position.from_board(np.array(board), to_play=to_play)


def _marked(area: np.ndarray) -> str:
    return "\n".join("".join("#" if v else "." for v in row) for row in area)


TWO_EYES = """
.X.X.....
XXXX.....
.........
.........
.........
.........
.........
.........
.........
"""


def test_a_chain_with_two_eyes_is_alive_with_its_eyes():
    pos = _position(TWO_EYES)
    want = "####.....\n####.....\n" + ".........\n" * 6 + "........."
    assert _marked(benson.pass_alive_area(pos, X)) == want
    assert not benson.pass_alive_area(pos, O).any()
    # the planes are the side to move's first
    own, opp = benson.pass_alive_planes(pos.play_move(coords.from_gtp("E5", 9)))  # White to move
    assert not own.any() and _marked(opp.astype(bool)) == want


@pytest.mark.parametrize(
    "rows",
    [
        ".X.......\nXX.......\n" + ".........\n" * 7,  # one eye
        "..X......\nXXX......\n" + ".........\n" * 7,  # a two-point eye: one region
        # a 3x3 eye (its centre touches no stone: not vital) and a one-point eye
        "...X.X...\n...XXX...\n...X.....\nXXXX.....\n" + ".........\n" * 5,
    ],
    ids=["one-eye", "two-point-eye", "big-eye"],
)
def test_a_chain_without_two_vital_regions_is_not_alive(rows):
    assert not benson.pass_alive_area(_position(rows), X).any()


def test_dead_stones_in_a_vital_region_are_in_the_area():
    rows = ".X.XO....\nXXOXO....\nXXXXO....\nOOOOO....\n" + ".........\n" * 5
    pos = _position(rows, to_play=O)
    area = benson.pass_alive_area(pos, X)
    assert area[:3, :4].all()  # the chain, its eyes and White's stone in one of them
    assert not area[3:].any() and not area[:, 4:].any()
    assert not benson.pass_alive_area(pos, O).any()  # White's wall has no eye


def test_the_feature_set_adds_the_two_planes_to_ladders():
    pos = _position(TWO_EYES, to_play=O)
    x = features.extract(pos, "passalive")
    assert x.shape == (17, 9, 9) and features.num_planes("passalive") == 17
    np.testing.assert_array_equal(x[:15], features.extract(pos, "ladders"))
    assert not x[15].any() and x[16].sum() == 8  # White to move: Black's area is the opponent's


def _random_end(rng: random.Random, n: int) -> tuple[go.Position, list[int]]:
    """A random game to its end (or 3N^2 moves) by the search's moves: no filling of one's own eyes, so
    the ends hold living groups."""
    pos, moves = go.Position(n), []
    while not pos.is_game_over() and len(moves) < 3 * n * n:
        legal = np.flatnonzero(mcts.search_moves(pos))
        p = int(legal[rng.randrange(len(legal))]) if len(legal) > 1 else n * n
        pos = pos.play_move(coords.from_flat(p, n))
        moves.append(p)
    return pos, moves


def test_the_engine_s_planes_are_the_python_ones():
    try:
        native_board.lib()
    except (native.NativeUnavailable, OSError) as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"compiled engine not available: {e}")
    rng = random.Random(7)
    alive_points = 0
    for game in range(12):
        n = (5, 7, 9, 13)[game % 4]
        pos, moves = _random_end(rng, n)
        nb = native_board.NativeBoard(n)
        for p in moves:
            nb.play(p)
        want = features.extract(pos, "passalive")[15:]
        got = nb.features("passalive", 0)[15:]
        np.testing.assert_array_equal(got, want, err_msg=f"game {game} ({n}x{n})\n{pos}")
        alive_points += int(want.sum())
    assert alive_points > 100  # the ends hold pass-alive areas: the comparison is not of empty planes
