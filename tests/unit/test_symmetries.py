"""The 8 dihedral symmetries: inverses, distinctness, and policies that follow their boards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minigo_core.game import symmetries

SYMS = range(symmetries.NUM_SYMMETRIES)


def test_identity_and_distinct_transforms() -> None:
    board = np.arange(81).reshape(9, 9)
    assert np.array_equal(symmetries.apply_planes(0, board), board)
    images = {symmetries.apply_planes(s, board).tobytes() for s in SYMS}
    assert len(images) == 8


def test_group_closure() -> None:
    board = np.arange(25).reshape(5, 5)
    images = {symmetries.apply_planes(s, board).tobytes(): s for s in SYMS}
    for a in SYMS:
        for b in SYMS:
            twice = symmetries.apply_planes(b, symmetries.apply_planes(a, board))
            assert twice.tobytes() in images


@given(
    hnp.arrays(np.uint8, st.tuples(st.integers(1, 3), st.just(7), st.just(7))), st.sampled_from(list(SYMS))
)
def test_inverse_gives_back_planes(x: np.ndarray, sym: int) -> None:
    y = symmetries.apply_planes(sym, x)
    assert y.shape == x.shape and y.flags.c_contiguous
    assert np.array_equal(symmetries.apply_planes(symmetries.invert(sym), y), x)


@given(
    hnp.arrays(np.float32, st.tuples(st.integers(1, 4), st.just(26)), elements=st.floats(0, 1, width=32)),
    st.sampled_from(list(SYMS)),
)
def test_inverse_gives_back_policy(pi: np.ndarray, sym: int) -> None:
    y = symmetries.apply_policy(sym, pi, 5)
    assert y.shape == pi.shape and y[..., -1].tolist() == pi[..., -1].tolist()  # pass stays last
    assert np.array_equal(symmetries.apply_policy(symmetries.invert(sym), y, 5), pi)


@given(st.integers(0, 80), st.sampled_from(list(SYMS)))
def test_policy_follows_its_board(point: int, sym: int) -> None:
    """A one-hot policy on a point lands where that point's stone lands."""
    board = np.zeros((9, 9), dtype=np.uint8)
    board[divmod(point, 9)] = 1
    pi = np.zeros(82, dtype=np.float32)
    pi[point] = 1.0
    moved_board = symmetries.apply_planes(sym, board).reshape(-1)
    moved_pi = symmetries.apply_policy(sym, pi, 9)
    assert np.array_equal(moved_pi[:81], moved_board.astype(np.float32))
    assert symmetries.apply_move(sym, divmod(point, 9), 9) == divmod(int(np.argmax(moved_board)), 9)
    assert symmetries.apply_move(sym, None, 9) is None


def test_batched_planes_and_errors() -> None:
    x = np.random.default_rng(0).integers(0, 2, size=(4, 17, 9, 9), dtype=np.uint8)
    for s in SYMS:
        y = symmetries.apply_planes(s, x)
        for i in range(4):
            assert np.array_equal(y[i], symmetries.apply_planes(s, x[i]))
    with pytest.raises(ValueError):
        symmetries.apply_planes(8, x)
    with pytest.raises(ValueError):
        symmetries.apply_planes(1, np.zeros((3, 4)))
    with pytest.raises(ValueError):
        symmetries.apply_policy(1, np.zeros(81), 9)
