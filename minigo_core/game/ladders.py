"""Ladder reading for the `ladders` feature set's two planes (KataGo's ladder features, in a simpler form).

A small network cannot read a ladder: whether a chased group dies is decided many moves away, at the edge or
at a ladder breaker. KataGo gives its net the answer as input planes (ladderable stones, ladder-working
moves: part of the "game-specific input features" it measured at 1.55x). Here, relative to the side to move:

- **ladder-captured stones**: every stone (either colour) of a group that a ladder captures: a group in atari
  that cannot escape when its owner moves next, or a group with two liberties that the other side captures
  in a ladder when it moves next (the board as it is, the side to move passing where the other side must
  move first);
- **ladder moves**: the empty points where the side to move puts an opponent group of two liberties in atari
  such that the group cannot escape.

The reading: the defender (the chased group's owner, to move, the group in atari) tries, in ascending point
order, its liberty and the liberty of every attacker group next to it that is itself in atari (a capture);
after a legal one, 3+ liberties escape, 2 liberties let the attacker chase on, 1 is a failed option. The
attacker (the group at 2 liberties) tries each liberty in ascending order; a legal one that leaves the group
in atari with every escape failing captures it. Each query (one group in atari; one liberty of a two-liberty
group) reads at most `LADDER_PLAYS` moves: one that runs out is an escape (unknown, so not marked). The
compiled board (`game/csrc/board.cpp`) reads byte for byte the same (tests/unit/test_ladders.py).
"""

from __future__ import annotations

import numpy as np

from minigo_core.game.go import Position

LADDER_PLAYS = 200  # moves one query may read; on 9x9 a ladder crosses the board in ~16 chases


class _OutOfPlays(Exception):
    """A query read `LADDER_PLAYS` moves without an answer."""


def _libs(pos: Position, p: int) -> set[int]:
    return pos._groups[pos._gid[p]][1]


class _Reader:
    """One query's reading, its moves counted."""

    def __init__(self) -> None:
        self.plays = 0

    def _play(self, pos: Position, q: int) -> Position:
        if self.plays >= LADDER_PLAYS:
            raise _OutOfPlays
        self.plays += 1
        return pos._add_stone(q, pos.to_play, ())

    def cannot_escape(self, pos: Position, p: int) -> bool:
        """The group at `p`, the side to move's, in atari: True if every escape fails."""
        colors, neighbors = pos._colors, pos._geom.neighbors
        d = pos.to_play
        stones, libs = pos._groups[pos._gid[p]]
        options = set(libs)
        for s in stones:
            for q in neighbors[s]:
                if colors[q] == -d:
                    q_libs = _libs(pos, q)
                    if len(q_libs) == 1:
                        options |= q_libs
        for q in sorted(options):
            if pos._why_illegal(q, d) is not None:
                continue
            after = self._play(pos, q)
            n = len(_libs(after, p))
            if n >= 3 or (n == 2 and not self.chase_captures(after, p)):
                return False
        return True

    def chase_captures(self, pos: Position, p: int) -> bool:
        """The group at `p`, the opponent's of the side to move, at two liberties: True if an atari on one of
        them captures it."""
        return any(self.atari_captures(pos, p, q) for q in sorted(_libs(pos, p)))

    def atari_captures(self, pos: Position, p: int, q: int) -> bool:
        """The side to move plays the liberty `q` of the group at `p`: True if that leaves it in atari with
        every escape failing."""
        if pos._why_illegal(q, pos.to_play) is not None:
            return False
        after = self._play(pos, q)
        return len(_libs(after, p)) == 1 and self.cannot_escape(after, p)


def _query(read, *args) -> bool:
    try:
        return read(_Reader(), *args)
    except _OutOfPlays:
        return False


def ladder_planes(position: Position) -> tuple[np.ndarray, np.ndarray]:
    """(ladder-captured stones, ladder moves): two uint8 `(N, N)` planes, as the module docstring says."""
    n = position.board_size
    captured = np.zeros(n * n, dtype=np.uint8)
    moves = np.zeros(n * n, dtype=np.uint8)
    me = position.to_play
    passed = None  # the position with the other side to move, made when first needed
    for stones, libs in position._groups.values():
        if len(libs) > 2:
            continue
        owner = position._colors[next(iter(stones))]
        p = min(stones)
        if len(libs) == 1:  # the owner moves next and tries to escape
            if owner != me:
                passed = passed or position.play_move(None)
            at = position if owner == me else passed
            hit = _query(_Reader.cannot_escape, at, p)
        else:  # the other side moves next and chases
            if owner == me:
                passed = passed or position.play_move(None)
            at = passed if owner == me else position
            works = [q for q in sorted(libs) if _query(_Reader.atari_captures, at, p, q)]
            hit = bool(works)
            if owner != me:
                moves[works] = 1
        if hit:
            captured[list(stones)] = 1
    return captured.reshape(n, n), moves.reshape(n, n)
