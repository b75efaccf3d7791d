"""Differential test: our rules against GNU Go 3.8 (`--chinese-rules --forbid-suicide --simple-ko`) over GTP.

Seeded random games are played by both. Before every move the boards (`list_stones`), the full set of
legal moves of the side to play (`all_legal`) and the capture counts (`captures`) must agree; illegal moves
(suicide, ko retakes, occupied points) are tried on purpose and both must refuse them. The random
player is biased towards captures (multi-group captures first), retaking kos once the ban is lifted, and
trying the illegal points, and the test counts and prints those cases so it proves it saw them.
"""

from __future__ import annotations

import collections
import functools
import random
import sys
import time

import numpy as np
import pytest

from minigo_core.game import coords, go
from minigo_core.play.gtp_program import GTPClient, GTPError, GTPTimeout, gnugo_argv

GAMES = {9: 100, 19: 10}
KOMI = 7.5


@pytest.fixture(scope="module")
def gnugo(gnugo_path: str):
    with GTPClient(gnugo_argv(level=0, path=gnugo_path), timeout=30.0) as client:
        yield client


@functools.cache
def _vertex_table(n: int) -> dict[str, int]:
    return {coords.to_gtp(coords.from_flat(i, n), n): i for i in range(n * n)}


def _vertices(text: str, n: int) -> set[int]:
    table = _vertex_table(n)
    return {table[v.upper()] for v in text.split()}


def _gtp_color(color: int) -> str:
    return "black" if color == go.BLACK else "white"


def _captured_groups(before: go.Position, after: go.Position) -> int:
    """Number of distinct groups removed by the last move (connected components of the removed stones)."""
    removed = {
        int(i) for i in np.flatnonzero((before.board.reshape(-1) != 0) & (after.board.reshape(-1) == 0))
    }
    n = before.board_size
    groups = 0
    while removed:
        groups += 1
        frontier = [removed.pop()]
        while frontier:
            r, c = divmod(frontier.pop(), n)
            for q in (
                (r - 1) * n + c if r else -1,
                (r + 1) * n + c if r < n - 1 else -1,
                r * n + c - 1 if c else -1,
                r * n + c + 1 if c < n - 1 else -1,
            ):
                if q in removed:
                    removed.remove(q)
                    frontier.append(q)
    return groups


class RandomPlayer:
    """Random legal moves, biased towards ko fights and captures (multi-group ones first)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.banned_ko_points: dict[int, set[int]] = {go.BLACK: set(), go.WHITE: set()}

    def choose(self, position: go.Position, legal: np.ndarray) -> go.Move:
        rng, n = self.rng, position.board_size
        if position.ko is not None:
            self.banned_ko_points[position.to_play].add(coords.to_flat(position.ko, n))
        capture_points = np.flatnonzero(position.atari_liberties(-position.to_play).reshape(-1) & legal[:-1])
        retakes = [int(p) for p in capture_points if int(p) in self.banned_ko_points[position.to_play]]
        if retakes and rng.random() < 0.3:
            return coords.from_flat(rng.choice(retakes), n)
        capture_points = [int(p) for p in capture_points if int(p) not in retakes]
        if capture_points and rng.random() < 0.6:
            scored = [
                (_captured_groups(position, position.play_move(coords.from_flat(p, n))), p)
                for p in capture_points
            ]
            best = max(s for s, _ in scored)
            return coords.from_flat(rng.choice([p for s, p in scored if s == best]), n)
        candidates = np.flatnonzero(legal[:-1] & ~position.eyeish(position.to_play).reshape(-1))
        if len(candidates) == 0 or rng.random() < 0.005:
            return None
        return coords.from_flat(int(candidates[rng.randrange(len(candidates))]), n)


def _compare(gnugo: GTPClient, position: go.Position, legal: np.ndarray, where: str) -> None:
    n = position.board_size
    flat = position.board.reshape(-1)
    black, white, legal_text, black_caps, white_caps = gnugo.send_many(
        [
            "list_stones black",
            "list_stones white",
            f"all_legal {_gtp_color(position.to_play)}",
            "captures black",
            "captures white",
        ]
    )
    for color, text in ((go.BLACK, black), (go.WHITE, white)):
        theirs = _vertices(text, n)
        ours = {int(i) for i in np.flatnonzero(flat == color)}
        assert ours == theirs, (
            f"{where}: {_gtp_color(color)} stones differ\n{position}\nGNU Go: {sorted(theirs)}"
        )
    theirs = _vertices(legal_text, n)
    ours = {int(i) for i in np.flatnonzero(legal[:-1])}
    assert ours == theirs, (
        f"{where}: legal moves differ\n{position}\nonly ours: "
        f"{[coords.to_gtp(coords.from_flat(i, n), n) for i in sorted(ours - theirs)]}, only GNU Go: "
        f"{[coords.to_gtp(coords.from_flat(i, n), n) for i in sorted(theirs - ours)]}"
    )
    caps = (int(black_caps), int(white_caps))
    assert caps == position.caps, f"{where}: captures differ: ours {position.caps}, GNU Go {caps}"


def _try_illegal(gnugo: GTPClient, position: go.Position, move: go.Move, where: str) -> str:
    """Our rules and GNU Go must both refuse `move`; returns our reason (occupied / suicide / ko)."""
    n = position.board_size
    vertex = coords.to_gtp(move, n)
    assert not position.is_move_legal(move), f"{where}: {vertex} expected illegal"
    with pytest.raises(go.IllegalMove) as ours:
        position.play_move(move)
    with pytest.raises(GTPError, match="illegal move"):
        gnugo.send(f"play {_gtp_color(position.to_play)} {vertex}")
    message = str(ours.value)
    for reason in ("occupied", "suicide", "ko"):
        if reason in message:
            return reason
    raise AssertionError(f"{where}: IllegalMove message does not say why: {message!r}")


def play_differential_game(gnugo: GTPClient, board_size: int, seed: int, counts: collections.Counter) -> None:
    rng = random.Random(seed)
    player = RandomPlayer(rng)
    gnugo.send(f"boardsize {board_size}")
    gnugo.send("clear_board")
    gnugo.send(f"komi {KOMI}")
    position = go.Position(board_size, KOMI)
    while not position.is_game_over() and position.n < 2 * board_size * board_size:
        where = f"{board_size}x{board_size} seed {seed} move {position.n + 1}"
        legal = position.all_legal_moves()
        _compare(gnugo, position, legal, where)
        counts["positions compared"] += 1
        counts["legality probes"] += board_size * board_size

        # Try an illegal move now and then: a suicide or ko point when there is one, else an occupied point.
        illegal_empty = np.flatnonzero((position.board.reshape(-1) == 0) & ~legal[:-1])
        if len(illegal_empty) and rng.random() < 0.5:
            move = coords.from_flat(int(illegal_empty[rng.randrange(len(illegal_empty))]), board_size)
            counts[f"{_try_illegal(gnugo, position, move, where)} refused"] += 1
        elif rng.random() < 0.03:
            occupied = np.flatnonzero(position.board.reshape(-1) != 0)
            if len(occupied):
                move = coords.from_flat(int(occupied[rng.randrange(len(occupied))]), board_size)
                counts[f"{_try_illegal(gnugo, position, move, where)} refused"] += 1

        move = player.choose(position, legal)
        gnugo.send(f"play {_gtp_color(position.to_play)} {coords.to_gtp(move, board_size)}")
        before, position = position, position.play_move(move)
        captured = _captured_groups(before, position)
        counts["moves"] += 1
        if captured:
            counts["captures"] += 1
        if captured >= 2:
            counts["multi-group captures"] += 1
        if position.ko is not None:
            counts["kos made"] += 1
            if (
                move is not None
                and coords.to_flat(move, board_size) in player.banned_ko_points[before.to_play]
            ):
                counts["ko retakes (ko fights)"] += 1
    _compare(gnugo, position, position.all_legal_moves(), f"{board_size}x{board_size} seed {seed} final")
    counts["games"] += 1
    counts["games ended by two passes"] += position.is_game_over()


@pytest.mark.parametrize("board_size", sorted(GAMES))
def test_random_games_agree_with_gnugo(gnugo: GTPClient, board_size: int, capsys) -> None:
    counts: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for game in range(GAMES[board_size]):
        play_differential_game(gnugo, board_size, seed=1000 * board_size + game, counts=counts)
    elapsed = time.perf_counter() - start
    with capsys.disabled():
        print(
            f"\nGNU Go differential {board_size}x{board_size} ({elapsed:.1f} s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    assert counts["games"] == GAMES[board_size]
    for case in (
        "suicide refused",
        "ko refused",
        "occupied refused",
        "multi-group captures",
        "ko retakes (ko fights)",
    ):
        assert counts[case] > 0, (
            f"{board_size}x{board_size}: no '{case}' in {GAMES[board_size]} games: {counts}"
        )


def test_gnugo_refuses_what_we_refuse_in_a_constructed_ko(gnugo: GTPClient) -> None:
    """A hand-made ko on 9x9: retaking at once is refused by both; after a move elsewhere it is allowed."""
    moves = ["D5", "E5", "C4", "F4", "D3", "E3", "E4", "D4"]  # white D4 captures black E4: ko at E4
    gnugo.send("boardsize 9")
    gnugo.send("clear_board")
    position = go.Position(9, KOMI)
    for i, vertex in enumerate(moves):
        gnugo.send(f"play {'black' if i % 2 == 0 else 'white'} {vertex}")
        position = position.play_move(coords.from_gtp(vertex, 9))
    assert position.ko == coords.from_gtp("E4", 9)
    assert _try_illegal(gnugo, position, coords.from_gtp("E4", 9), "constructed ko") == "ko"
    for vertex in ("J9", "J1"):  # a ko threat and its answer
        gnugo.send(f"play {_gtp_color(position.to_play)} {vertex}")
        position = position.play_move(coords.from_gtp(vertex, 9))
    _compare(gnugo, position, position.all_legal_moves(), "constructed ko after threat")
    assert position.is_move_legal(coords.from_gtp("E4", 9))


def test_gtp_client_answers_and_errors(gnugo: GTPClient) -> None:
    assert gnugo.send("name") == "GNU Go"
    assert gnugo.send("protocol_version") == "2"
    with pytest.raises(GTPError, match="unknown command"):
        gnugo.send("no_such_command")
    assert gnugo.send("boardsize 9") == ""  # GNU Go is still usable after an error


def test_gtp_client_timeout_and_dead_program() -> None:
    silent = [sys.executable, "-c", "import sys, time\nfor line in sys.stdin: time.sleep(30)"]
    with GTPClient(silent, timeout=0.5) as program:
        with pytest.raises(GTPTimeout, match="within 0.5 s"):
            program.send("name")
    dying = [sys.executable, "-c", "import sys; sys.stderr.write('program exploded'); sys.exit(3)"]
    with GTPClient(dying, timeout=10) as program:
        with pytest.raises(GTPError, match="program exploded"):
            program.send("name")
    with pytest.raises(GTPError, match="cannot start"):
        GTPClient(["/nonexistent/program"])
