"""The rules of Go, as MiniGo plays them.

- Suicide is illegal; captures of any number of groups; simple ko (no superko).
- The game ends after two consecutive passes; Tromp-Taylor area score, komi to White.
- Moves are `(row, col)` with row 0 the top row, or `None` for a pass (see `coords`).

A `Position` is immutable: `play_move` returns a new one and never touches the original. Each position keeps
an incremental liberty tracker (group id of every point, the stones and liberties of every group, and the
liberty count of the group on every point), so a move costs a few small set operations and a legality mask or
the liberty feature planes are a handful of vectorised numpy operations.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from minigo_core.game import coords

BLACK = 1
WHITE = -1
EMPTY = 0
HISTORY = 7  # previous boards kept for the feature planes (agz uses the current board and 7 before it)
_EDGE = 2  # colour of the sentinel point "off the board" in the padded arrays

Move = coords.Move


class IllegalMove(ValueError):
    """An illegal move: the message names the move and the reason (occupied, suicide, ko, off the board)."""


class _Geometry:
    """Neighbour tables for one board size. Point `N * N` is a sentinel that stands for "off the board"."""

    def __init__(self, board_size: int) -> None:
        n = board_size
        self.board_size = n
        self.n2 = n * n
        neighbors = []
        padded = np.full((n * n, 4), n * n, dtype=np.intp)
        for r in range(n):
            for c in range(n):
                nbrs = tuple(
                    rr * n + cc
                    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                    if 0 <= rr < n and 0 <= cc < n
                )
                neighbors.append(nbrs)
                padded[r * n + c, : len(nbrs)] = nbrs
        self.neighbors: tuple[tuple[int, ...], ...] = tuple(neighbors)
        self.padded_neighbors = padded  # (N*N, 4), missing neighbours point at the sentinel N*N


@functools.lru_cache(maxsize=32)
def _geometry(board_size: int) -> _Geometry:
    return _Geometry(board_size)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class _Tracker(NamedTuple):
    """A position's liberty tracker (MiniGo's `LibertyTracker`): each point's colour and group id (0 where
    empty), each group's (stones, liberties) by id (never mutated once stored), the next free id, and the
    flat arrays the vectorised queries read: colours with the off-board sentinel last, and the liberty count
    of the group on each point (0 where empty)."""

    colors: list[int]
    gid: list[int]
    groups: dict[int, tuple[set[int], set[int]]]
    next_gid: int
    board_ext: np.ndarray  # int8, N*N points + the off-board sentinel
    libs_ext: np.ndarray  # int16


class Position:
    """A Go position: board, side to move, ko point, history. Immutable; `play_move` returns a new one.

    Attributes: `board_size`, `komi`, `to_play` (1 Black, -1 White), `board` (read-only int8 `(N, N)`:
    1 black, -1 white, 0 empty), `n` (moves played, passes included), `recent` (the moves played, oldest
    first), `board_history` (the previous boards, most recent last, at most 7), `caps` (stones captured by
    Black, by White), `ko` (the point the side to move may not play because of ko, or `None`).
    """

    __slots__ = (
        "board_size",
        "komi",
        "to_play",
        "board",
        "n",
        "recent",
        "board_history",
        "caps",
        "ko",
        "_geom",
        "_colors",
        "_gid",
        "_groups",
        "_next_gid",
        "_board_ext",
        "_libs_ext",
        "_ko",
        "_score",
    )

    def __init__(self, board_size: int = 9, komi: float = 7.5) -> None:
        if not 2 <= int(board_size) <= coords.MAX_BOARD_SIZE:
            raise ValueError(
                f"board_size {board_size} is not supported: use 2..{coords.MAX_BOARD_SIZE} (9 or 19 usual)"
            )
        board_size = int(board_size)
        n2 = board_size * board_size
        board_ext = np.zeros(n2 + 1, dtype=np.int8)
        board_ext[n2] = _EDGE
        empty = _Tracker([EMPTY] * n2, [0] * n2, {}, 1, _readonly(board_ext),
                         _readonly(np.zeros(n2 + 1, dtype=np.int16)))  # fmt: skip
        self._init(
            board_size=board_size,
            komi=float(komi),
            to_play=BLACK,
            recent=(),
            board_history=(),
            caps=(0, 0),
            ko=-1,
            tracker=empty,
        )

    def _init(
        self,
        *,
        board_size: int,
        komi: float,
        to_play: int,
        recent: tuple,
        board_history: tuple,
        caps: tuple[int, int],
        ko: int,
        tracker: _Tracker,
    ) -> None:
        self.board_size = board_size
        self.komi = komi
        self.to_play = to_play
        self.n = len(recent)  # every move is in `recent`, passes included
        self.recent = recent
        self.board_history = board_history
        self.caps = caps
        self._geom = _geometry(board_size)
        # the tracker's parts, one attribute each: fast scalar access in the move loop
        self._colors, self._gid, self._groups, self._next_gid, self._board_ext, self._libs_ext = tracker
        self._ko = ko  # flat index, -1 when there is none
        self._score: float | None = None  # Tromp-Taylor score, computed on first use
        self.ko = None if ko < 0 else divmod(ko, board_size)
        self.board = self._board_ext[: board_size * board_size].reshape(board_size, board_size)

    def __getstate__(self) -> dict:
        return {
            "board_size": self.board_size, "komi": self.komi, "to_play": self.to_play, "recent": self.recent,
            "board_history": self.board_history, "caps": self.caps, "ko": self._ko,
            "tracker": tuple(self._tracker()),
        }  # fmt: skip

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        colors, gid, groups, next_gid, board_ext, libs_ext = state["tracker"]
        board_ext, libs_ext = _readonly(np.array(board_ext)), _readonly(np.array(libs_ext))
        state["tracker"] = _Tracker(colors, gid, groups, next_gid, board_ext, libs_ext)
        state["board_history"] = tuple(_readonly(np.array(b)) for b in state["board_history"])
        self._init(**state)

    def _tracker(self) -> _Tracker:
        return _Tracker(
            self._colors, self._gid, self._groups, self._next_gid, self._board_ext, self._libs_ext
        )

    # -------------------------------------------------------------------------------------------- building

    @classmethod
    def from_board(
        cls,
        board: np.ndarray | Sequence[Sequence[int]],
        to_play: int = BLACK,
        komi: float = 7.5,
        ko: Move = None,
    ) -> Position:
        """A position with the given stones on the board (setup stones, tests); no history.

        Raises `ValueError` if the board is not square, holds values other than -1/0/1, or has a group without
        liberties.
        """
        arr = np.asarray(board)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"board must be a square 2-D array, got shape {arr.shape}")
        if not np.isin(arr, (BLACK, WHITE, EMPTY)).all():
            raise ValueError("board may hold only 1 (black), -1 (white) and 0 (empty)")
        if to_play not in (BLACK, WHITE):
            raise ValueError(f"to_play must be 1 (Black) or -1 (White), got {to_play!r}")
        pos = cls(arr.shape[0], komi)
        colors = [int(v) for v in arr.reshape(-1)]
        gid, groups = _label_groups(colors, pos._geom)
        for stones, libs in groups.values():
            if not libs:
                r, c = divmod(min(stones), pos.board_size)
                raise ValueError(f"the group at {coords.to_gtp((r, c), pos.board_size)} has no liberties")
        n2 = pos._geom.n2
        board_ext = np.empty(n2 + 1, dtype=np.int8)
        board_ext[:n2] = colors
        board_ext[n2] = _EDGE
        libs_ext = np.zeros(n2 + 1, dtype=np.int16)
        for stones, libs in groups.values():
            libs_ext[list(stones)] = len(libs)
        ko_flat = -1 if ko is None else coords.to_flat(ko, pos.board_size)
        if ko_flat >= 0 and colors[ko_flat] != EMPTY:
            raise ValueError(f"ko point {ko!r} is not empty")
        tracker = _Tracker(colors, gid, groups, max(groups, default=0) + 1, _readonly(board_ext),
                           _readonly(libs_ext))  # fmt: skip
        pos._init(
            board_size=pos.board_size,
            komi=float(komi),
            to_play=to_play,
            recent=(),
            board_history=(),
            caps=(0, 0),
            ko=ko_flat,
            tracker=tracker,
        )
        return pos

    # ---------------------------------------------------------------------------------------------- moves

    def _flat(self, move: Move) -> int:
        """Flat index of an on-board move; raises `IllegalMove` for a move off the board or malformed."""
        try:
            row, col = move  # type: ignore[misc]
            row, col = int(row), int(col)
        except (TypeError, ValueError):
            raise IllegalMove(f"{move!r} is not a move: use (row, col) or None for a pass") from None
        n = self.board_size
        if not (0 <= row < n and 0 <= col < n):
            raise IllegalMove(f"move {move!r} is off the {n}x{n} board")
        return row * n + col

    def _why_illegal(self, p: int, color: int) -> str | None:
        """None if `color` may play at flat point `p`, else the reason."""
        colors = self._colors
        if colors[p] != EMPTY:
            return "the point is occupied"
        if p == self._ko and color == self.to_play:
            return "it retakes a ko"
        groups, gid = self._groups, self._gid
        for q in self._geom.neighbors[p]:
            c = colors[q]
            if c == EMPTY:
                return None
            libs = len(groups[gid[q]][1])
            if (c == color) != (libs == 1):  # own group with 2+ liberties, or an opponent group it captures
                return None
        return "it is suicide"

    def is_move_legal(self, move: Move) -> bool:
        """True if the side to play may play `move` (a pass is always legal; off-board moves are not)."""
        if move is None:
            return True
        try:
            p = self._flat(move)
        except IllegalMove:
            return False
        return self._why_illegal(p, self.to_play) is None

    def all_legal_moves(self) -> np.ndarray:
        """Bool mask of length N*N+1 (flat index, pass last, always True): the moves legal for `to_play`."""
        geom = self._geom
        n2 = geom.n2
        board_ext = self._board_ext
        nbr = geom.padded_neighbors
        nbr_color = board_ext[nbr]
        nbr_libs = self._libs_ext[nbr]
        color = self.to_play
        safe = nbr_color == EMPTY
        safe |= (nbr_color == color) & (nbr_libs > 1)  # joins a group that keeps a liberty
        safe |= (nbr_color == -color) & (nbr_libs == 1)  # captures
        legal = np.empty(n2 + 1, dtype=bool)
        np.logical_and(board_ext[:n2] == EMPTY, safe.any(axis=1), out=legal[:n2])
        legal[n2] = True
        if self._ko >= 0:
            legal[self._ko] = False
        return legal

    def play_move(self, move: Move, color: int | None = None) -> Position:
        """The position after `color` (default: `to_play`) plays `move`; raises `IllegalMove` saying why."""
        if color is None:
            color = self.to_play
        elif color not in (BLACK, WHITE):
            raise ValueError(f"color must be 1 (Black) or -1 (White), got {color!r}")
        history = self.board_history + (self.board,)
        if len(history) > HISTORY:
            history = history[1:]
        if move is None:
            return self._pass_move(color, history)
        p = self._flat(move)
        why = self._why_illegal(p, color)
        if why is not None:
            raise IllegalMove(
                f"{coords.to_gtp((p // self.board_size, p % self.board_size), self.board_size)} "
                f"({'black' if color == BLACK else 'white'}) is illegal: {why}"
            )
        return self._add_stone(p, color, history)

    def _pass_move(self, color: int, history: tuple) -> Position:
        """The position after `color` passes: the same stones and tracker (shared: never mutated), no ko."""
        pos = Position.__new__(Position)
        pos._init(
            board_size=self.board_size,
            komi=self.komi,
            to_play=-color,
            recent=self.recent + (None,),
            board_history=history,
            caps=self.caps,
            ko=-1,
            tracker=self._tracker(),
        )
        return pos

    def _add_stone(self, p: int, color: int, history: tuple) -> Position:
        """The position after `color` plays the legal move at flat point `p` (MiniGo's `add_stone`).

        The tracker is copied, then changed in place in the order of the rules: the stone joins its friendly
        neighbours, the opponent neighbours lose a liberty and those left without one are captured, and the
        captured points become liberties of the groups around them. Then the ko point and the capture counts.
        """
        neighbors = self._geom.neighbors
        colors = self._colors[:]
        gid = self._gid[:]
        groups = self._groups.copy()
        board_ext = self._board_ext.copy()
        libs_ext = self._libs_ext.copy()

        # What is around the move: empty points, friendly and opponent groups (each group once).
        empties: list[int] = []
        own: list[int] = []
        opponents: list[int] = []
        for q in neighbors[p]:
            c = colors[q]
            if c == EMPTY:
                empties.append(q)
            elif c == color:
                if gid[q] not in own:
                    own.append(gid[q])
            elif gid[q] not in opponents:
                opponents.append(gid[q])

        colors[p] = color
        board_ext[p] = color
        new_id, stones, liberties, next_gid = _merge_from_played(p, empties, own, groups, gid, self._next_gid)
        captured_stones = _take_liberty(p, opponents, groups, libs_ext) if opponents else []
        tracker = _Tracker(colors, gid, groups, next_gid, board_ext, libs_ext)
        if captured_stones:
            _remove_stones(captured_stones, tracker)
            _handle_captures(captured_stones, color, new_id, liberties, tracker, neighbors)
        groups[new_id] = (stones, liberties)
        libs_ext[list(stones)] = len(liberties)

        # Simple ko: a lone stone played into an opponent's eye that captured exactly one stone.
        ko = captured_stones[0] if len(captured_stones) == 1 and not own and not empties else -1
        caps = (
            (self.caps[0] + len(captured_stones), self.caps[1])
            if color == BLACK
            else (self.caps[0], self.caps[1] + len(captured_stones))
        )
        pos = Position.__new__(Position)
        pos._init(
            board_size=self.board_size,
            komi=self.komi,
            to_play=-color,
            recent=self.recent + ((p // self.board_size, p % self.board_size),),
            board_history=history,
            caps=caps,
            ko=ko,
            tracker=tracker._replace(board_ext=_readonly(board_ext), libs_ext=_readonly(libs_ext)),
        )
        return pos

    # ------------------------------------------------------------------------------------------- queries

    def liberty_counts(self) -> np.ndarray:
        """Read-only int16 `(N, N)`: the liberty count of the group on each point, 0 on empty points."""
        n = self.board_size
        return self._libs_ext[: n * n].reshape(n, n)

    def atari_liberties(self, color: int) -> np.ndarray:
        """Bool `(N, N)`: empty points that are the last liberty of a group of `color`."""
        n = self.board_size
        nbr = self._geom.padded_neighbors
        hit = (self._board_ext[nbr] == color) & (self._libs_ext[nbr] == 1)
        return (hit.any(axis=1) & (self._board_ext[: n * n] == EMPTY)).reshape(n, n)

    def liberties_after_moves(self) -> np.ndarray:
        """int16 `(N, N)`: the liberties of the side to move's group after it plays each point, its captures
        made (the friendly groups it joins bring theirs, the stones it captures count where they touch the
        new group); 0 where it may not play (occupied, suicide, ko)."""
        n2, nbrs = self._geom.n2, self._geom.neighbors
        colors, gid, groups, me = self._colors, self._gid, self._groups, self.to_play
        out = np.zeros(n2, dtype=np.int16)
        for p in np.flatnonzero(self.all_legal_moves()[:n2]).tolist():
            libs, stones, captured = set(), {p}, set()
            for q in nbrs[p]:
                if colors[q] == EMPTY:
                    libs.add(q)
                elif colors[q] == me:
                    stones |= groups[gid[q]][0]
                    libs |= groups[gid[q]][1]
                elif len(groups[gid[q]][1]) == 1:
                    captured.add(gid[q])
            for g in captured:
                libs.update(s for s in groups[g][0] if any(t in stones for t in nbrs[s]))
            libs.discard(p)
            out[p] = len(libs)
        return out.reshape(self.board_size, self.board_size)

    def eyeish(self, color: int) -> np.ndarray:
        """Bool `(N, N)`: one-point eyes, empty points whose every on-board neighbour is of `color`."""
        n = self.board_size
        nbr_color = self._board_ext[self._geom.padded_neighbors]
        surrounded = ((nbr_color == color) | (nbr_color == _EDGE)).all(axis=1)
        return (surrounded & (self._board_ext[: n * n] == EMPTY)).reshape(n, n)

    def is_game_over(self) -> bool:
        """Two consecutive passes."""
        return len(self.recent) >= 2 and self.recent[-1] is None and self.recent[-2] is None

    def score(self) -> float:
        """Tromp-Taylor area score: Black's stones and territory minus White's, minus komi."""
        if self._score is None:
            self._score = self._area_difference() - self.komi
        return self._score

    def _area_difference(self) -> int:
        """Black's area minus White's: stones plus empty regions that reach only one colour."""
        return int(self.ownership().sum(dtype=np.int64))

    def ownership(self) -> np.ndarray:
        """Tromp-Taylor ownership, int8 (N*N,) row-major: 1 Black's (stone or territory), -1 White's, 0 dame.

        An empty region belongs to a colour when it reaches only stones of that colour; this is what `score`
        counts, point by point (the auxiliary ownership target of training).
        """
        colors = self._colors
        neighbors = self._geom.neighbors
        owner = np.array(colors, dtype=np.int8)
        seen = [False] * len(colors)
        for start, c in enumerate(colors):
            if c != EMPTY or seen[start]:
                continue
            seen[start] = True
            region = [start]
            borders = 0  # bit 1: touches black, bit 2: touches white
            i = 0
            while i < len(region):
                for q in neighbors[region[i]]:
                    cq = colors[q]
                    if cq == EMPTY:
                        if not seen[q]:
                            seen[q] = True
                            region.append(q)
                    else:
                        borders |= 1 if cq == BLACK else 2
                i += 1
            if borders in (1, 2):
                owner[region] = BLACK if borders == 1 else WHITE
        return owner

    def result(self) -> int:
        """1 if Black wins, -1 if White wins, 0 while the game is not over (or a jigo with integer komi)."""
        if not self.is_game_over():
            return 0
        s = self.score()
        return BLACK if s > 0 else WHITE if s < 0 else 0

    def __str__(self) -> str:
        n = self.board_size
        marks = {BLACK: "X", WHITE: "O", EMPTY: "."}
        rows = [f"{n - r:2d} " + " ".join(marks[int(v)] for v in self.board[r]) for r in range(n)]
        rows.append("   " + " ".join(coords.GTP_COLUMNS[:n]))
        side = "Black" if self.to_play == BLACK else "White"
        rows.append(
            f"move {self.n}, {side} to play, captures B {self.caps[0]} W {self.caps[1]}, komi {self.komi}"
        )
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"Position(board_size={self.board_size}, komi={self.komi}, n={self.n}, to_play={self.to_play})"

    def _check_invariants(self) -> None:
        """Recompute groups and liberties from the board and compare with the incremental tracker (tests)."""
        colors = [int(v) for v in self.board.reshape(-1)]
        assert colors == self._colors, "colour list and board disagree"
        _, groups = _label_groups(colors, self._geom)
        mine = {frozenset(s): frozenset(lb) for s, lb in self._groups.values()}
        theirs = {frozenset(s): frozenset(lb) for s, lb in groups.values()}
        assert mine == theirs, "incremental groups differ from a fresh labelling"
        for g, (stones, _) in self._groups.items():
            assert all(self._gid[s] == g for s in stones), "group ids out of date"
        libs = np.zeros(self._geom.n2, dtype=np.int16)
        for stones, lb in groups.values():
            libs[list(stones)] = len(lb)
        assert np.array_equal(libs, self._libs_ext[:-1]), "liberty counts out of date"
        assert all(lb for lb in theirs.values()), "a group without liberties is on the board"


# ------------------------------------------------------------------------------------- the steps of a move
# `Position._add_stone` runs these, in this order, on its copies of the parent's tracker (`colors`, `gid`,
# `groups`, `board_ext`, `libs_ext`); the names are those of MiniGo's `LibertyTracker`.


def _merge_from_played(
    p: int, empties: list[int], own: list[int], groups: dict, gid: list[int], next_gid: int
) -> tuple[int, set[int], set[int], int]:
    """The new stone at `p` joins its friendly neighbour groups `own` (relabelled to the largest of them), or
    starts a group with a new id; its empty neighbours are liberties.

    Returns (group id, stones, liberties, next free group id). The merged groups leave `groups`; the caller
    stores the new one once the captures have added their liberties.
    """
    if own:
        keep = max(own, key=lambda g: len(groups[g][0]))
        stones = set(groups[keep][0])
        liberties = set(groups[keep][1])
        for g in own:
            if g != keep:
                g_stones, g_libs = groups.pop(g)
                stones |= g_stones
                liberties |= g_libs
                for s in g_stones:
                    gid[s] = keep
        new_id = keep
    else:
        stones, liberties = set(), set()
        new_id = next_gid
        next_gid += 1
    stones.add(p)
    gid[p] = new_id
    liberties.update(empties)
    liberties.discard(p)
    return new_id, stones, liberties, next_gid


def _take_liberty(p: int, opponents: list[int], groups: dict, libs_ext: np.ndarray) -> list[int]:
    """The opponent groups next to the new stone at `p` lose that liberty (MiniGo's `_update_liberties`);
    those left without one leave `groups` (`_capture_group`). Returns the captured stones."""
    captured: list[int] = []
    for g in opponents:
        g_stones, g_libs = groups[g]
        if len(g_libs) == 1:
            captured.extend(g_stones)
            del groups[g]
        else:
            groups[g] = (g_stones, g_libs - {p})
            libs_ext[list(g_stones)] = len(g_libs) - 1
    return captured


def _remove_stones(captured: list[int], tracker: _Tracker) -> None:
    """Empty the captured points (in the tracker's copies, changed in place)."""
    colors, gid, board_ext, libs_ext = tracker.colors, tracker.gid, tracker.board_ext, tracker.libs_ext
    for s in captured:
        colors[s] = EMPTY
        gid[s] = 0
    board_ext[captured] = EMPTY
    libs_ext[captured] = 0


def _handle_captures(
    captured: list[int],
    color: int,
    new_id: int,
    liberties: set[int],
    tracker: _Tracker,
    neighbors: tuple[tuple[int, ...], ...],
) -> None:
    """The emptied points become liberties of the groups of `color` next to them: the new group's
    `liberties` (not yet stored) grow in place, the other groups are stored anew with their counts (in the
    tracker's copies, changed in place)."""
    colors, gid, groups, libs_ext = tracker.colors, tracker.gid, tracker.groups, tracker.libs_ext
    gained: dict[int, set[int]] = {}
    for s in captured:
        for q in neighbors[s]:
            if colors[q] == color:  # a captured stone's neighbours are now empty or friendly
                g = gid[q]
                if g == new_id:
                    liberties.add(s)
                else:
                    gained.setdefault(g, set()).add(s)
    for g, new_libs in gained.items():
        g_stones, g_libs = groups[g]
        g_libs = g_libs | new_libs
        groups[g] = (g_stones, g_libs)
        libs_ext[list(g_stones)] = len(g_libs)


def _label_groups(
    colors: list[int], geom: _Geometry
) -> tuple[list[int], dict[int, tuple[set[int], set[int]]]]:
    """Label the groups of a flat board from scratch: (group id per point, id -> (stones, liberties))."""
    gid = [0] * len(colors)
    groups: dict[int, tuple[set[int], set[int]]] = {}
    next_id = 1
    for start, c in enumerate(colors):
        if c == EMPTY or gid[start]:
            continue
        gid[start] = next_id
        stones = [start]
        liberties: set[int] = set()
        i = 0
        while i < len(stones):
            for q in geom.neighbors[stones[i]]:
                cq = colors[q]
                if cq == EMPTY:
                    liberties.add(q)
                elif cq == c and not gid[q]:
                    gid[q] = next_id
                    stones.append(q)
            i += 1
        groups[next_id] = (set(stones), liberties)
        next_id += 1
    return gid, groups


def replay(moves: Iterable[Move], board_size: int = 9, komi: float = 7.5) -> list[Position]:
    """The position before each move, then the final one (`len(moves) + 1` positions).

    Raises `IllegalMove` naming the move number if a move is illegal.
    """
    positions = [Position(board_size, komi)]
    for i, move in enumerate(moves):
        try:
            positions.append(positions[-1].play_move(move))
        except IllegalMove as e:
            raise IllegalMove(f"move {i + 1}: {e}") from None
    return positions
