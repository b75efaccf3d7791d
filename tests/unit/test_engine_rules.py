"""The compiled rules of the self-play engine (`minigo_core/game/csrc/board.cpp`) against the Python ones.

- Seeded random games on 5x5 .. 19x19, biased towards captures, multi-group captures, ko fights, passes and
  illegal moves, are played in `go.Position` and `NativeBoard` together; after every move the board, legal
  mask, `mcts.search_moves` mask, ko, side to move, captures, liberty counts, one-point eyes of both colours,
  game over, score and the incremental groups (recomputed from scratch in C++) must agree, and on a sample of
  moves the board history and the feature planes of both sets under all 8 symmetries, byte for byte.
- The compiled symmetry tables equal `symmetries._source_index`.
- A smaller GNU Go differential (as test_gnugo_differential.py) driven by `NativeBoard` alone.

Without the engine's test library (`minigo_core/search/_engine_test*.so`) the module skips, except under
CI=true where it fails.
"""

from __future__ import annotations

import collections
import os
import random
import time
from collections.abc import Callable

import numpy as np
import pytest

from minigo_core.base import native
from minigo_core.game import coords, features, go, native_board, symmetries
from minigo_core.search import mcts

try:
    native_board.lib()
except (native.NativeUnavailable, OSError) as e:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI must test the compiled engine: {e}") from e
    pytest.skip(f"compiled engine not available: {e}", allow_module_level=True)

from minigo_core.game.native_board import NativeBoard, random_playouts, symmetry_source  # noqa: E402
from minigo_core.play.gtp_program import GTPClient, GTPError, gnugo_argv  # noqa: E402

KOMI = 7.5
FEATURE_SETS = tuple(features.FEATURE_SETS)


# -------------------------------------------------------------------------------- a capture-biased player


def _groups_removed(before: np.ndarray, after: np.ndarray, n: int) -> int:
    """Distinct groups removed between two flat boards (connected components of the emptied points)."""
    removed = {int(i) for i in np.flatnonzero((before != 0) & (after == 0))}
    groups = 0
    while removed:
        groups += 1
        frontier = [removed.pop()]
        while frontier:
            r, c = divmod(frontier.pop(), n)
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                q = rr * n + cc
                if 0 <= rr < n and 0 <= cc < n and q in removed:
                    removed.remove(q)
                    frontier.append(q)
    return groups


class BiasedPlayer:
    """Random legal moves biased towards ko retakes, captures (multi-group ones first) and now and then a pass
    (as test_gnugo_differential.py's RandomPlayer), on flat points; `N * N` is the pass."""

    def __init__(self, rng: random.Random, n: int, pass_rate: float = 0.005) -> None:
        self.rng, self.n, self.pass_rate = rng, n, pass_rate
        self.banned_ko_points: dict[int, set[int]] = {go.BLACK: set(), go.WHITE: set()}

    def choose(
        self,
        to_play: int,
        ko: int,
        board: np.ndarray,
        legal: np.ndarray,
        atari: np.ndarray,
        eyes: np.ndarray,
        board_after: Callable[[int], np.ndarray],
    ) -> int:
        rng, n2 = self.rng, self.n * self.n
        if ko >= 0:
            self.banned_ko_points[to_play].add(ko)
        capture_points = [int(p) for p in np.flatnonzero(atari & legal[:-1])]
        retakes = [p for p in capture_points if p in self.banned_ko_points[to_play]]
        if retakes and rng.random() < 0.3:
            return rng.choice(retakes)
        capture_points = [p for p in capture_points if p not in retakes]
        if capture_points and rng.random() < 0.6:
            scored = [(_groups_removed(board, board_after(p), self.n), p) for p in capture_points]
            best = max(s for s, _ in scored)
            return rng.choice([p for s, p in scored if s == best])
        candidates = np.flatnonzero(legal[:-1] & ~eyes)
        if len(candidates) == 0 or rng.random() < self.pass_rate:
            return n2
        return int(candidates[rng.randrange(len(candidates))])


def _choose_for_position(player: BiasedPlayer, pos: go.Position, legal: np.ndarray) -> int:
    n = pos.board_size
    return player.choose(
        pos.to_play,
        pos._ko,
        pos.board.reshape(-1),
        legal,
        pos.atari_liberties(-pos.to_play).reshape(-1),
        pos.eyeish(pos.to_play).reshape(-1),
        lambda p: pos.play_move(coords.from_flat(p, n)).board.reshape(-1),
    )


def _choose_for_native(player: BiasedPlayer, nb: NativeBoard, legal: np.ndarray) -> int:
    return player.choose(
        nb.to_play,
        nb.ko_flat,
        nb.board().reshape(-1),
        legal,
        nb.atari_liberties(-nb.to_play).reshape(-1),
        nb.eyeish(nb.to_play).reshape(-1),
        lambda p: nb.copy().play(p).board().reshape(-1),
    )


def _move(p: int, n: int) -> go.Move:
    return None if p == n * n else coords.from_flat(p, n)


# ------------------------------------------------------------------------------- move-by-move comparison


def _compare(pos: go.Position, nb: NativeBoard, where: str, *, full: bool) -> None:
    n = pos.board_size
    assert np.array_equal(nb.board(), pos.board), f"{where}: boards differ\n{pos}\nnative:\n{nb.board()}"
    assert nb.to_play == pos.to_play, f"{where}: to_play"
    assert nb.n == pos.n, f"{where}: n"
    assert nb.ko == pos.ko, f"{where}: ko native {nb.ko}, python {pos.ko}\n{pos}"
    assert nb.caps == pos.caps, f"{where}: caps native {nb.caps}, python {pos.caps}"
    last = -1 if not pos.recent else n * n if pos.recent[-1] is None else coords.to_flat(pos.recent[-1], n)
    assert nb.last_move == last, f"{where}: last move"
    legal = pos.all_legal_moves()
    assert np.array_equal(nb.legal_mask(), legal), (
        f"{where}: legal masks differ at {np.flatnonzero(nb.legal_mask() != legal)}\n{pos}"
    )
    assert np.array_equal(nb.search_moves(), mcts.search_moves(pos)), f"{where}: search_moves differ\n{pos}"
    assert np.array_equal(nb.liberty_counts(), pos.liberty_counts()), (
        f"{where}: liberty counts differ\n{pos}\nnative:\n{nb.liberty_counts()}\n"
        f"python:\n{pos.liberty_counts()}"
    )
    for color in (go.BLACK, go.WHITE):
        assert np.array_equal(nb.eyeish(color), pos.eyeish(color)), f"{where}: eyeish({color}) differ"
    assert nb.is_game_over() == pos.is_game_over(), f"{where}: game over"
    assert nb.score() == pos.score(), f"{where}: score native {nb.score()}, python {pos.score()}\n{pos}"
    nb.check_invariants()
    if not full:
        return
    assert nb.history_len == len(pos.board_history)
    boards = [pos.board, *reversed(pos.board_history)]
    for i in range(go.HISTORY + 3):  # past the history kept: the oldest board kept
        expected = boards[min(i, len(boards) - 1)]
        assert np.array_equal(nb.board_back(i), expected), f"{where}: board_back({i})"
    for feature_set in FEATURE_SETS:
        reference = features.extract(pos, feature_set)
        for sym in range(symmetries.NUM_SYMMETRIES):
            ours = nb.features(feature_set, sym)
            theirs = symmetries.apply_planes(sym, reference)
            assert ours.dtype == np.uint8 and ours.shape == theirs.shape
            if not np.array_equal(ours, theirs):
                plane = int(np.flatnonzero((ours != theirs).any(axis=(1, 2)))[0])
                raise AssertionError(
                    f"{where}: features {feature_set} sym {sym} differ first in plane {plane}\n{pos}\n"
                    f"native:\n{ours[plane]}\npython:\n{theirs[plane]}"
                )


def _refuse(pos: go.Position, nb: NativeBoard, p: int, where: str) -> None:
    """Both must refuse `p`; the native board must stay exactly as it was."""
    n = pos.board_size
    with pytest.raises(go.IllegalMove):
        pos.play_move(_move(p, n))
    before = (nb.board().copy(), nb.n, nb.to_play, nb.ko_flat, nb.caps, nb.history_len)
    assert not nb.is_legal(p), f"{where}: native says {p} is legal\n{pos}"
    assert not nb.try_play(p), f"{where}: native played illegal {p}\n{pos}"
    after = (nb.board(), nb.n, nb.to_play, nb.ko_flat, nb.caps, nb.history_len)
    assert np.array_equal(before[0], after[0]) and before[1:] == after[1:], (
        f"{where}: refused move changed it"
    )


def play_compared_game(board_size: int, seed: int, counts: collections.Counter, feature_every: int) -> None:
    rng = random.Random(seed)
    n, n2 = board_size, board_size * board_size
    komi = rng.choice((7.5, 5.5, 0.5, 7.0))
    player = BiasedPlayer(rng, n, pass_rate=rng.choice((0.005, 0.03)))
    pos, nb = go.Position(n, komi), NativeBoard(n, komi)
    while True:
        where = f"{n}x{n} seed {seed} move {pos.n}"
        full = pos.n % feature_every == 0 or pos.n < 10 or pos.ko is not None
        _compare(pos, nb, where, full=full)
        counts["positions compared"] += 1
        counts["features compared"] += full
        if pos.is_game_over() or pos.n >= 2 * n2:
            break
        legal = pos.all_legal_moves()
        illegal_empty = np.flatnonzero((pos.board.reshape(-1) == 0) & ~legal[:-1])
        if len(illegal_empty) and rng.random() < 0.5:
            p = int(illegal_empty[rng.randrange(len(illegal_empty))])
            _refuse(pos, nb, p, where)
            counts["ko refused" if p == pos._ko else "suicide refused"] += 1
        if rng.random() < 0.05:
            occupied = np.flatnonzero(pos.board.reshape(-1) != 0)
            if len(occupied):
                _refuse(pos, nb, int(occupied[rng.randrange(len(occupied))]), where)
                counts["occupied refused"] += 1
        if rng.random() < 0.02:  # off the board: refused, never a crash
            p = rng.choice((-1, n2 + 1, -(2**31), 2**31 - 1, 19 * 19, 19 * 19 + 1))
            if p > n2 or p < 0:
                assert not nb.try_play(p) and not nb.is_legal(p), f"{where}: off-board {p} accepted"
                counts["off-board refused"] += 1
        p = _choose_for_position(player, pos, legal)
        before = pos
        pos = pos.play_move(_move(p, n))
        nb.play(p)
        captured = _groups_removed(before.board.reshape(-1), pos.board.reshape(-1), n)
        counts["moves"] += 1
        counts["passes"] += p == n2
        counts["captures"] += captured > 0
        counts["multi-group captures"] += captured >= 2
        if pos.ko is not None:
            counts["kos made"] += 1
            counts["ko retakes (ko fights)"] += p in player.banned_ko_points[before.to_play]
    counts["games"] += 1
    counts["games ended by two passes"] += pos.is_game_over()


# (board size, games, compare features every k moves)
RANDOM_GAMES = [(3, 30, 1), (4, 30, 1), (5, 40, 2), (7, 25, 3), (9, 25, 4), (13, 5, 8), (19, 3, 16)]


@pytest.mark.parametrize(("board_size", "games", "feature_every"), RANDOM_GAMES)
def test_random_games_match_python_rules(board_size: int, games: int, feature_every: int, capsys) -> None:
    counts: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for game in range(games):
        play_compared_game(board_size, 7919 * board_size + game, counts, feature_every)
    with capsys.disabled():
        print(
            f"\nnative vs python {board_size}x{board_size} ({time.perf_counter() - start:.1f} s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    assert counts["games"] == games
    for case in ("suicide refused", "occupied refused", "captures", "passes", "kos made"):
        assert counts[case] > 0, f"{board_size}x{board_size}: no '{case}' in {games} games: {counts}"
    if board_size >= 7:
        for case in ("ko refused", "multi-group captures", "ko retakes (ko fights)"):
            assert counts[case] > 0, f"{board_size}x{board_size}: no '{case}' in {games} games: {counts}"


def test_constructed_ko_snapback_pass_and_copy() -> None:
    moves = ["D5", "E5", "C4", "F4", "D3", "E3", "E4", "D4"]  # white D4 captures black E4: ko at E4
    pos, nb = go.Position(9, KOMI), NativeBoard(9, KOMI)
    for vertex in moves:
        pos = pos.play_move(coords.from_gtp(vertex, 9))
        nb.play_move(coords.from_gtp(vertex, 9))
    e4 = coords.to_flat(coords.from_gtp("E4", 9), 9)
    assert nb.ko_flat == e4 and pos.ko == nb.ko
    _refuse(pos, nb, e4, "constructed ko")
    with pytest.raises(go.IllegalMove):
        nb.play(e4)
    # a copy is independent (a Board is a flat value)
    twin = nb.copy()
    twin.play(nb.n2)
    assert twin.ko_flat == -1 and nb.ko_flat == e4 and nb.n == pos.n and twin.n == pos.n + 1
    # a pass clears the ko and pushes the board into the history; after the answer the retake is legal
    pos, nb = pos.play_move(None), nb.play(nb.n2)
    _compare(pos, nb, "after pass", full=True)
    assert np.array_equal(nb.board_back(1), nb.board())
    pos, nb = pos.play_move(coords.from_gtp("J1", 9)), nb.play_move(coords.from_gtp("J1", 9))
    _compare(pos, nb, "after answer", full=True)
    assert nb.is_legal(e4)
    # two passes end the game; search_moves after a pass offers every legal move and the pass
    pos, nb = pos.play_move(None), nb.play(nb.n2)
    assert np.array_equal(nb.search_moves(), nb.legal_mask())
    pos, nb = pos.play_move(None), nb.play(nb.n2)
    assert nb.is_game_over() and pos.is_game_over()
    _compare(pos, nb, "game over", full=True)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        NativeBoard(1)
    with pytest.raises(ValueError):
        NativeBoard(20)
    nb = NativeBoard(5)
    with pytest.raises(ValueError):
        nb.features("nope")
    with pytest.raises(ValueError):
        nb.features("agz", 8)
    with pytest.raises(ValueError):
        symmetry_source(8, 9)
    for p in (-1, 26, 10**6, -(10**6)):
        assert not nb.try_play(p)
    assert nb.n == 0


def test_symmetry_sources_match_python() -> None:
    for board_size in range(2, coords.MAX_BOARD_SIZE + 1):
        for sym in range(symmetries.NUM_SYMMETRIES):
            ours = symmetry_source(sym, board_size)
            assert np.array_equal(ours, symmetries._source_index(sym, board_size)), (sym, board_size)


def test_random_playouts_benchmark_helper() -> None:
    moves, playout_s, replay_s = random_playouts(9, 20, seed=3)
    again = random_playouts(9, 20, seed=3)
    assert moves > 20 * 40 and again[0] == moves  # seeded: the same games
    assert playout_s > 0 and replay_s > 0


# ------------------------------------------------------------------------------------- GNU Go differential

GNUGO_GAMES = {9: 20, 19: 3}


@pytest.fixture(scope="module")
def gnugo(gnugo_path: str):
    with GTPClient(gnugo_argv(level=0, path=gnugo_path), timeout=30.0) as client:
        yield client


def _gtp_color(color: int) -> str:
    return "black" if color == go.BLACK else "white"


def _vertices(text: str, n: int) -> set[int]:
    return {coords.to_flat(coords.from_gtp(v, n), n) for v in text.split()}


def _compare_gnugo(client: GTPClient, nb: NativeBoard, legal: np.ndarray, where: str) -> None:
    n = nb.board_size
    flat = nb.board().reshape(-1)
    black, white, legal_text, black_caps, white_caps = client.send_many(
        [
            "list_stones black",
            "list_stones white",
            f"all_legal {_gtp_color(nb.to_play)}",
            "captures black",
            "captures white",
        ]
    )
    for color, text in ((go.BLACK, black), (go.WHITE, white)):
        ours = {int(i) for i in np.flatnonzero(flat == color)}
        assert ours == _vertices(text, n), f"{where}: {_gtp_color(color)} stones differ\n{nb.board()}"
    theirs = _vertices(legal_text, n)
    ours = {int(i) for i in np.flatnonzero(legal[:-1])}
    assert ours == theirs, (
        f"{where}: legal moves differ: only ours {ours - theirs}, only GNU Go {theirs - ours}"
    )
    assert nb.caps == (int(black_caps), int(white_caps)), f"{where}: captures differ"


def _gnugo_refuses(client: GTPClient, nb: NativeBoard, p: int, where: str) -> str:
    n = nb.board_size
    reason = "occupied" if nb.board().reshape(-1)[p] else "ko" if p == nb.ko_flat else "suicide"
    assert not nb.try_play(p), f"{where}: native played illegal {p}"
    with pytest.raises(GTPError, match="illegal move"):
        client.send(f"play {_gtp_color(nb.to_play)} {coords.to_gtp(coords.from_flat(p, n), n)}")
    return reason


def play_gnugo_game(client: GTPClient, board_size: int, seed: int, counts: collections.Counter) -> None:
    rng = random.Random(seed)
    n, n2 = board_size, board_size * board_size
    player = BiasedPlayer(rng, n)
    client.send(f"boardsize {n}")
    client.send("clear_board")
    client.send(f"komi {KOMI}")
    nb = NativeBoard(n, KOMI)
    while not nb.is_game_over() and nb.n < 2 * n2:
        where = f"{n}x{n} seed {seed} move {nb.n + 1}"
        legal = nb.legal_mask()
        _compare_gnugo(client, nb, legal, where)
        counts["positions compared"] += 1
        illegal_empty = np.flatnonzero((nb.board().reshape(-1) == 0) & ~legal[:-1])
        if len(illegal_empty) and rng.random() < 0.5:
            p = int(illegal_empty[rng.randrange(len(illegal_empty))])
            counts[f"{_gnugo_refuses(client, nb, p, where)} refused"] += 1
        elif rng.random() < 0.03:
            occupied = np.flatnonzero(nb.board().reshape(-1) != 0)
            if len(occupied):
                p = int(occupied[rng.randrange(len(occupied))])
                counts[f"{_gnugo_refuses(client, nb, p, where)} refused"] += 1
        to_play = nb.to_play
        p = _choose_for_native(player, nb, legal)
        client.send(f"play {_gtp_color(to_play)} {coords.to_gtp(_move(p, n), n)}")
        before = nb.board().reshape(-1)
        nb.play(p)
        captured = _groups_removed(before, nb.board().reshape(-1), n)
        counts["moves"] += 1
        counts["captures"] += captured > 0
        counts["multi-group captures"] += captured >= 2
        if nb.ko_flat >= 0:
            counts["kos made"] += 1
            counts["ko retakes (ko fights)"] += p in player.banned_ko_points[to_play]
    _compare_gnugo(client, nb, nb.legal_mask(), f"{n}x{n} seed {seed} final")
    counts["games"] += 1
    counts["games ended by two passes"] += nb.is_game_over()


@pytest.mark.parametrize("board_size", sorted(GNUGO_GAMES))
def test_native_rules_agree_with_gnugo(gnugo: GTPClient, board_size: int, capsys) -> None:
    counts: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for game in range(GNUGO_GAMES[board_size]):
        play_gnugo_game(gnugo, board_size, seed=5000 * board_size + game, counts=counts)
    with capsys.disabled():
        print(
            f"\nGNU Go vs native {board_size}x{board_size} ({time.perf_counter() - start:.1f} s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    assert counts["games"] == GNUGO_GAMES[board_size]
    for case in ("suicide refused", "ko refused", "captures", "ko retakes (ko fights)"):
        assert counts[case] > 0, f"{board_size}x{board_size}: no '{case}': {counts}"
    if board_size == 9:
        assert counts["multi-group captures"] > 0 and counts["occupied refused"] > 0, counts
