"""Coordinates: GTP vertices (no I, row 1 at the bottom), flat indices, SGF points."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigo_core.game import coords


def test_gtp_corners_and_skipped_i() -> None:
    assert coords.from_gtp("A1", 9) == (8, 0)
    assert coords.from_gtp("J9", 9) == (0, 8)  # no I: J is the ninth column
    assert coords.from_gtp("D4", 19) == (15, 3)
    assert coords.from_gtp("t19", 19) == (0, 18)
    assert coords.to_gtp((0, 8), 9) == "J9"
    assert coords.to_gtp((8, 0), 9) == "A1"
    assert coords.to_gtp((2, 7), 9) == "H7"
    assert coords.to_gtp((2, 8), 9) == "J7"


def test_pass() -> None:
    assert coords.from_gtp("pass", 9) is None
    assert coords.from_gtp("PASS", 19) is None
    assert coords.to_gtp(None, 9) == "pass"
    assert coords.to_flat(None, 9) == 81
    assert coords.from_flat(81, 9) is None
    assert coords.to_flat(None, 19) == 361


@pytest.mark.parametrize("vertex", ["I5", "K10", "A0", "Z1", "", "4D", "resign"])
def test_bad_vertices_on_9x9(vertex: str) -> None:
    with pytest.raises(ValueError):
        coords.from_gtp(vertex, 9)


def test_off_board() -> None:
    with pytest.raises(ValueError):
        coords.to_gtp((9, 0), 9)
    with pytest.raises(ValueError):
        coords.to_flat((0, 9), 9)
    with pytest.raises(ValueError):
        coords.from_flat(82, 9)


def test_sgf_points() -> None:
    assert coords.to_sgf((0, 0), 9) == "aa"
    assert coords.to_sgf((8, 2), 9) == "ci"
    assert coords.to_sgf(None, 9) == ""


@given(
    st.integers(2, 19).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n - 1), st.integers(0, n - 1)))
)
def test_roundtrips(case: tuple[int, int, int]) -> None:
    n, row, col = case
    move = (row, col)
    assert coords.from_gtp(coords.to_gtp(move, n), n) == move
    flat = coords.to_flat(move, n)
    assert flat == row * n + col
    assert coords.from_flat(flat, n) == move
