"""A position analysed on the search a model player plays: the numbers GUIs and analysis tools show.

The search is the player's own (`players.ModelPlayer.new_search`): the compiled searcher (`engine.Searcher`)
with the settings `genmove` uses, so the analysis shows the search that chooses the player's moves. The
reference search (`mcts.MCTSPlayer`) stands in only where the compiled one cannot go: a player of the Python
reference (`engine_name` python), or a position with set-up stones (not reached by moves from the empty
board). Either keeps its tree while it is asked about the same position, or the one after a move of the
tree, and each step adds readouts to it; a long analysis is many short steps, so a caller can report, or
stop, between them.

What is reported, from the view of the player to move:

- a move's win rate: (Q + 1) / 2, Q its mean value (unvisited moves: the root's);
- its LCB: the win rate less 1.96 standard errors of a mean of values in [0, 1] (at most 0.5 / sqrt(N));
- its principal variation: the move, then at each node its most visited child;
- ownership and score: with a model that has the auxiliary heads (`model.aux_heads`), the network's
  ownership head and score head on the root position (a move's score lead: the score head on the position
  after it, turned to the mover's view); without them, an estimate from the Tromp-Taylor count at the ends of
  the most visited moves' principal variations, weighted by their visits.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigo_core.game import coords, features, go
from minigo_core.search import engine, mcts

MAX_VISITS = (
    100_000  # pondering stops searching here (the tree's memory, ~2 KB a node), and goes on reporting
)
PV_LENGTH = 15
OWNERSHIP_MOVES = 4  # the most visited moves whose principal variations make the ownership estimate
STEP_SECONDS = (
    0.05  # a step of pondering aims at this long, so that a stop (the next command) waits no longer
)


@dataclass(frozen=True)
class MoveStats:
    """One root move: visits, win rate, prior, LCB, score lead (mover's view), principal variation."""

    move: int  # flat, pass = N*N
    visits: int
    winrate: float
    prior: float
    lcb: float
    score: float
    pv: tuple[int, ...]


RootView = engine.RootStats  # what a searched root shows, the compiled searcher's or the reference's


@dataclass(frozen=True)
class PositionReport:
    """Everything analysis shows of one searched position (mover's view unless said)."""

    to_play: int  # go.BLACK or go.WHITE
    moves: list[MoveStats]
    root_visits: int
    winrate: float  # the root's: (Q + 1) / 2
    score: float  # the root's score lead in points
    ownership: np.ndarray | None  # (N*N,) in [-1, 1], Black's view, row 0 the top row (A9 on 9x9)
    policy: np.ndarray  # (N*N+1,) the network's prior, 0 on illegal moves
    tree_nodes: int


def _winrate(q: float) -> float:
    return min(1.0, max(0.0, (q + 1.0) / 2.0))


def _lcb(winrate: float, n: float) -> float:
    return max(0.0, winrate - 1.96 * 0.5 / math.sqrt(n)) if n else 0.0


def play_line(position: go.Position, line: Sequence[int]) -> go.Position:
    """`position` after the flat moves of `line` (a principal variation: legal from it)."""
    n = position.board_size
    for a in line:
        position = position.play_move(coords.from_flat(int(a), n))
    return position


def heads_of(net: Any, positions: Sequence[go.Position]) -> tuple[np.ndarray, np.ndarray] | None:
    """The ownership (B, N*N; mover's view) and score (B,; mover's view, points) heads of a model that has
    them, on `positions`; None for a model without them."""
    predict_all = getattr(net, "predict_all", None)
    if predict_all is None or not getattr(net, "has_aux", False) or not positions:
        return None
    heads = predict_all(features.extract_batch(list(positions), net.cfg.feature_set))
    if heads.ownership is None or heads.score is None:
        return None
    return heads.ownership, heads.score


def report(
    root: RootView,
    position: go.Position,
    pv: Callable[[int], list[int]],
    net: Any,
    minmoves: int = 0,
    maxmoves: int = 0,
) -> PositionReport:
    """What analysis shows of `position` searched to `root`; `pv(move)` gives a root move's principal
    variation. Moves: the visited ones, most visited first, then unvisited ones by prior up to `minmoves`; at
    most `maxmoves` (0: no limit)."""
    n2 = position.board_size**2
    order = sorted(np.flatnonzero(root.legal), key=lambda a: (-root.visits[a], -root.prior[a]))
    shown = [int(a) for a in order if root.visits[a] > 0]
    shown += [int(a) for a in order if root.visits[a] == 0][: max(0, minmoves - len(shown))]
    if maxmoves > 0:
        shown = shown[:maxmoves]
    lines = {a: (pv(a) or [a])[:PV_LENGTH] for a in shown}
    for a in np.argsort(-root.visits)[:OWNERSHIP_MOVES]:
        if root.visits[a] > 0 and int(a) not in lines:
            lines[int(a)] = (pv(int(a)) or [int(a)])[:PV_LENGTH]
    children = {a: position.play_move(coords.from_flat(a, position.board_size)) for a in shown}
    heads = heads_of(net, [position, *children.values()])
    colour = position.to_play
    if heads is not None:
        own_mover, score_mover = heads
        ownership = own_mover[0].astype(np.float64) * colour
        root_score = float(score_mover[0])
        move_score = {a: -float(score_mover[1 + i]) for i, a in enumerate(children)}
    else:
        ends = {a: play_line(position, line) for a, line in lines.items()}
        move_score = {a: float(end.score()) * colour for a, end in ends.items()}
        top = [a for a in np.argsort(-root.visits)[:OWNERSHIP_MOVES] if root.visits[a] > 0]
        if top:
            weights = root.visits[top].astype(np.float64)
            ownership = (
                sum(w * ends[int(a)].ownership() for a, w in zip(top, weights, strict=True)) / weights.sum()
            )
            root_score = float(
                sum(w * move_score[int(a)] for a, w in zip(top, weights, strict=True)) / weights.sum()
            )
        else:
            ownership = position.ownership().astype(np.float64)
            root_score = float(position.score()) * colour
    stats = []
    for a in shown:
        visits = int(root.visits[a])
        winrate = _winrate(float(root.q[a]) if visits else root.root_q)
        stats.append(
            MoveStats(a, visits, winrate, float(root.prior[a]), _lcb(winrate, visits),
                      move_score[a], tuple(lines[a]) if visits else (a,))
        )  # fmt: skip
    policy = np.asarray(root.prior, dtype=np.float64)  # 0 on illegal moves; moves to avoid keep theirs
    assert policy.shape == (n2 + 1,)
    return PositionReport(
        colour, stats, root.root_visits, _winrate(root.root_q), root_score,
        np.asarray(ownership, dtype=np.float64), policy, root.tree_nodes,
    )  # fmt: skip


class Analysis:
    """The player's search on one game's positions, kept between analysis commands (module docstring).

    `player`: a `players.ModelPlayer` (its network, search settings and engine); `seed`: the search's random
    stream (the game's seed)."""

    def __init__(self, player: Any, board_size: int, komi: float, seed: int) -> None:
        self.player = player
        self.net = player.net
        self.board_size = board_size
        self.komi = komi
        self.seed = seed
        self._search: Any = None  # engine.Searcher, or mcts.MCTSPlayer
        self._root: mcts.MCTSNode | None = None  # the reference search's root
        self._moves: list[int] | None = None  # the compiled search's position, as moves from the empty board
        self._view: RootView | None = None
        self.position: go.Position | None = None
        self._rate = 0.0  # readouts a second, the last step's

    @property
    def compiled(self) -> bool:
        return isinstance(self._search, engine.Searcher)

    def _first_chunk(self) -> int:
        """Readouts of a first step (Gumbel: at least its considered moves, so its halving sees them all)."""
        return int(self.player.timed_chunk())

    def start(self, position: go.Position) -> bool:
        """Make `position` the root (reusing the tree) and search it a first step; False for a finished game
        (nothing to analyse)."""
        self.position = position
        self._view = None
        if position.is_game_over() or position.n >= 2 * self.board_size**2:
            return False
        moves = self.player.moves_from_start(position)
        want = "compiled" if self.player.engine_name == "compiled" and moves is not None else "python"
        if self._search is None or self.compiled != (want == "compiled"):
            self._search = self.player.new_search(self.komi, want, seed=self.seed)
        self._moves = moves
        if not self.compiled:
            self._root = self._search.set_root(position)
            self._search.expand_root(self._root)
            self._root.set_prior(self._root.original_prior)  # no root noise
        self.step(self._first_chunk())
        return True

    @property
    def visits(self) -> int:
        return 0 if self._view is None else self._view.root_visits

    @property
    def tree_nodes(self) -> int:
        return 0 if self._view is None else self._view.tree_nodes

    def next_chunk(self, seconds: float = STEP_SECONDS) -> int:
        """Readouts of the next step: what the last step's rate fits in `seconds`, at least the first chunk,
        at most doubling the root's visits."""
        first = self._first_chunk()
        if self._rate <= 0:
            return first
        return max(first, min(int(self._rate * seconds), max(first, self.visits)))

    def step(self, readouts: int | None = None) -> None:
        """`readouts` more readouts (None: `next_chunk()`) on the kept tree."""
        n = max(1, int(readouts if readouts is not None else self.next_chunk()))
        start = time.perf_counter()
        if self.compiled:
            assert self._moves is not None
            self._search.set_readouts(n)
            self._search.search(self._moves, full_search=True, noise=False)
            self._view = self._search.root_stats()
        else:
            root = self._root
            assert root is not None
            batch = max(1, self._search.settings.parallel_readouts)
            for _ in range(max(1, n // batch)):
                self._search.tree_search(root, batch)
            q = np.where(root.child_N > 0, root.child_W / np.maximum(root.child_N, 1) * root.to_play,
                         root.Q_perspective)  # fmt: skip
            self._view = RootView(root.child_N.astype(np.int64), q, root.original_prior.astype(np.float64),
                                  ~root.illegal, int(root.child_N.sum()), float(root.Q_perspective),
                                  float(root.value), mcts.count_nodes(root))  # fmt: skip
        took = time.perf_counter() - start
        self._rate = n / took if took > 0 else 0.0

    def run(self, readouts: int, seconds: float | None, every: float, report_fn: Callable[[], None]) -> None:
        """Search until `readouts` more readouts or `seconds`, calling `report_fn` every `every` seconds (0:
        never)."""
        start = time.perf_counter()
        target = self.visits + readouts
        next_report = start + every
        while self.visits < target:
            left = None if seconds is None else seconds - (time.perf_counter() - start)
            if left is not None and left <= 0:
                break
            slice_s = min(x for x in (STEP_SECONDS, left, every or None) if x is not None)
            n = min(self.next_chunk(slice_s), target - self.visits)
            if self.compiled and n < self._first_chunk() and self.visits > 0:
                n = self._first_chunk()
            self.step(max(1, n))
            if every > 0 and time.perf_counter() >= next_report:
                report_fn()
                next_report = time.perf_counter() + every

    def _pv(self, a: int) -> list[int]:
        if self.compiled:
            return self._search.pv(a, max_len=PV_LENGTH)
        assert self._root is not None
        return [m.fmove for m in principal_variation(self._root, a)]

    def report(self, minmoves: int = 0, maxmoves: int = 0) -> PositionReport:
        """What the search shows now (`report`)."""
        assert self._view is not None and self.position is not None
        return report(self._view, self.position, self._pv, self.net, minmoves, maxmoves)

    def best_move(self) -> int:
        """The move the player's search chooses (the compiled search's choice: Gumbel's sequential halving, or
        the most visited move)."""
        assert self._view is not None
        if self.compiled:
            return int(self._search.result().move)
        return int(np.argmax(self._view.visits))

    def root_value(self) -> float:
        """The root's mean value from the mover's view."""
        assert self._view is not None
        return self._view.root_q

    def prior(self) -> np.ndarray:
        """The network's policy at the root over legal moves (N*N+1), without noise."""
        assert self._view is not None
        return np.where(self._view.legal, self._view.prior, 0.0)

    def visits_per_move(self) -> np.ndarray:
        assert self._view is not None
        return self._view.visits

    def ownership(self) -> np.ndarray:
        """Black's ownership of each point (N*N,) in [-1, 1] (module docstring)."""
        return self.report().ownership  # type: ignore[return-value]


def principal_variation(root: mcts.MCTSNode, first: int) -> list[mcts.MCTSNode]:
    """The nodes of the reference search's line that starts with `first`: then, at each node, its most
    visited child."""
    node = root.children.get(first)
    path: list[mcts.MCTSNode] = []
    while node is not None and len(path) < PV_LENGTH:
        path.append(node)
        if not node.is_expanded or node.child_N is None or node.child_N.max() <= 0:
            break
        node = node.children.get(int(np.argmax(node.child_N)))
    return path


def cleanup_move(analysis: Analysis, position: go.Position) -> int | None:
    """`kgs-genmove_cleanup`'s override of a pass (flat move, or None to let the pass stand).

    KGS's cleanup phase asks for the dead stones to be captured. The rule: while the model believes it wins
    (root value > 0) but the Tromp-Taylor count of the board, dead stones still on it, says it does not, the
    pass is replaced by the most visited other move (else the highest prior); when the count agrees, or when
    no move but a pass is left, the pass stands. Under area scoring the extra moves cost nothing."""
    count = float(position.score()) * position.to_play
    if analysis.root_value() <= 0 or count > 0:
        return None
    n2 = analysis.board_size**2
    legal = position.all_legal_moves()[:n2] & ~position.eyeish(position.to_play).ravel()
    if not legal.any():
        return None
    visits = np.where(legal, analysis.visits_per_move()[:n2], -1.0)
    if visits.max() > 0:
        return int(np.argmax(visits))
    return int(np.argmax(np.where(legal, analysis.prior()[:n2], -1.0)))


class Ponder:
    """Search in a background thread, calling `report` every `interval` seconds, until `stop`.

    The thread is the only user of the search while it runs; `stop` joins it (waiting at most the step in
    flight, `STEP_SECONDS` long), so the command that follows finds no thread left and no report in flight."""

    def __init__(
        self, analysis: Analysis, interval: float, report: Callable[[], None], log: Any = None
    ) -> None:
        self.analysis = analysis
        self.interval = interval
        self.report = report
        self.log = log if log is not None else sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="minigo-ponder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        next_report = time.perf_counter() + self.interval
        try:
            while not self._stop.is_set():
                if self.analysis.visits < MAX_VISITS:
                    slice_s = min(STEP_SECONDS, self.interval) if self.interval > 0 else STEP_SECONDS
                    self.analysis.step(self.analysis.next_chunk(slice_s))
                else:
                    self._stop.wait(min(0.05, self.interval or 0.05))
                if self.interval > 0 and time.perf_counter() >= next_report:
                    self.report()
                    next_report = time.perf_counter() + self.interval
        except Exception as exc:  # noqa: BLE001 - a failed analysis ends quietly; the server goes on
            print(f"minigo gtp: the analysis stopped: {type(exc).__name__}: {exc}", file=self.log)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
