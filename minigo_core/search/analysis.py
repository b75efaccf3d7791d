"""Live analysis of a position for Go GUIs: the search behind `lz-analyze`, `kata-analyze`, the
`*-genmove_analyze` commands, GoGui's ownership map and `kgs-genmove_cleanup`.

The analysis runs the reference PUCT search (`mcts.MCTSPlayer`, the same network as the player's) because
its tree is Python objects the analysis can read between readouts: each root child's visits, Q, prior and
principal variation. The compiled engine would need a C API to walk its tree; the reference search is fast
enough on 9x9 for a GUI's refresh interval, and its tree is kept while the GUI asks about the same position
or the one after a move of the tree.

What is reported, all from the view of the player to move:

- a move's win rate: (Q + 1) / 2, Q its mean value (unvisited moves: the root's);
- its LCB: the win rate less 1.96 standard errors of a mean of values in [0, 1] (at most 0.5 / sqrt(N));
- its principal variation: the most visited child, then that child's most visited child, and so on;
- ownership (kata-analyze, GoGui): the model has no ownership output at play time, so an estimate: the
  Tromp-Taylor ownership of the position at the end of each of the most visited moves' principal
  variations, weighted by their visits;
- score lead (kata-analyze's scoreLead/scoreMean): likewise the Tromp-Taylor count (komi included) at the end
  of the move's principal variation, not a trained score head.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigo_core.base.config import SelfplaySettings
from minigo_core.game import coords, go
from minigo_core.search import mcts

MAX_VISITS = 20000  # pondering stops searching here (the tree's memory), and goes on reporting
PV_LENGTH = 15
OWNERSHIP_MOVES = 4  # the most visited moves whose principal variations make the ownership estimate


@dataclass(frozen=True)
class MoveStats:
    """One root move: visits, win rate, prior, LCB, score estimate (mover's view), principal variation."""

    move: int  # flat, pass = N*N
    visits: int
    winrate: float
    prior: float
    lcb: float
    score: float
    pv: tuple[int, ...]


class Analysis:
    """The reference search on one game's positions, kept between analysis commands."""

    def __init__(self, net: Any, settings: SelfplaySettings, board_size: int, komi: float, seed: int) -> None:
        self.board_size = board_size
        self.search = mcts.MCTSPlayer(
            net,
            mcts.settings_for_evaluation(settings, 1),
            board_size,
            komi,
            np.random.default_rng(seed),
            feature_set=net.cfg.feature_set,
            softpick_moves=0,
        )
        self.root: mcts.MCTSNode | None = None

    def start(self, position: go.Position) -> bool:
        """Make `position` the root (reusing the tree); False for a finished game (nothing to analyse)."""
        if self.search.is_terminal(position):
            self.root = None
            return False
        root = self.search.set_root(position)
        self.search.expand_root(root)
        root.set_prior(root.original_prior)  # no root noise
        self.root = root
        return True

    @property
    def visits(self) -> int:
        return 0 if self.root is None else int(self.root.child_N.sum())

    def step(self) -> None:
        """One batch of readouts (the settings' parallel_readouts)."""
        assert self.root is not None
        self.search.tree_search(self.root, max(1, self.search.settings.parallel_readouts))

    def run(self, readouts: int, seconds: float | None, every: float, report: Callable[[], None]) -> None:
        """Search until `readouts` more readouts or `seconds`, calling `report` every `every` seconds (0:
        never)."""
        start = time.perf_counter()
        target = self.visits + readouts
        next_report = start + every
        while self.visits < target and (seconds is None or time.perf_counter() - start < seconds):
            self.step()
            if every > 0 and time.perf_counter() >= next_report:
                report()
                next_report = time.perf_counter() + every

    def best_move(self) -> int:
        assert self.root is not None
        return int(np.argmax(self.root.child_N))

    def root_value(self) -> float:
        """The root's mean value from the mover's view."""
        assert self.root is not None
        return self.root.Q_perspective

    def prior(self) -> np.ndarray:
        """The network's policy at the root over legal moves (N*N+1), without noise."""
        assert self.root is not None
        return self.root.original_prior

    def moves(self, minmoves: int = 0, maxmoves: int = 0) -> list[MoveStats]:
        """The root's visited moves, most visited first, then unvisited ones by prior up to `minmoves`;
        at most `maxmoves` (0: no limit)."""
        root = self.root
        assert root is not None
        visits, prior = root.child_N, root.original_prior
        legal = ~root.illegal
        order = sorted(np.flatnonzero(legal), key=lambda a: (-visits[a], -prior[a]))
        shown = [a for a in order if visits[a] > 0]
        shown += [a for a in order if visits[a] == 0][: max(0, minmoves - len(shown))]
        if maxmoves > 0:
            shown = shown[:maxmoves]
        return [self._stats(int(a)) for a in shown]

    def _stats(self, a: int) -> MoveStats:
        root = self.root
        assert root is not None
        n = float(root.child_N[a])
        q = float(root.child_W[a]) / n * root.to_play if n else root.Q_perspective
        winrate = min(1.0, max(0.0, (q + 1.0) / 2.0))
        lcb = max(0.0, winrate - 1.96 * 0.5 / math.sqrt(n)) if n else 0.0
        path = principal_variation(root, a)
        end = path[-1].position if path else root.position.play_move(coords.from_flat(a, self.board_size))
        score = float(end.score()) * root.to_play
        return MoveStats(
            a, int(n), winrate, float(root.original_prior[a]), lcb, score, tuple(m.fmove for m in path)
        )

    def ownership(self) -> np.ndarray:
        """The ownership estimate (module docstring), (N*N,) floats in [-1, 1] from Black's view."""
        root = self.root
        assert root is not None
        top = [a for a in np.argsort(-root.child_N)[:OWNERSHIP_MOVES] if root.child_N[a] > 0]
        if not top:
            return root.position.ownership().astype(np.float64)
        total = np.zeros(self.board_size**2)
        for a in top:
            path = principal_variation(root, int(a))
            total += root.child_N[a] * path[-1].position.ownership()
        return total / root.child_N[top].sum()


def principal_variation(root: mcts.MCTSNode, first: int) -> list[mcts.MCTSNode]:
    """The nodes of the line that starts with `first`: then, at each node, its most visited child."""
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
    root = analysis.root
    assert root is not None
    count = float(position.score()) * position.to_play
    if analysis.root_value() <= 0 or count > 0:
        return None
    n2 = analysis.board_size**2
    legal = position.all_legal_moves()[:n2] & ~position.eyeish(position.to_play).ravel()
    if not legal.any():
        return None
    visits = np.where(legal, root.child_N[:n2], -1.0)
    if visits.max() > 0:
        return int(np.argmax(visits))
    return int(np.argmax(np.where(legal, root.original_prior[:n2], -1.0)))


class Ponder:
    """Search in a background thread, calling `report` every `interval` seconds, until `stop`.

    The thread is the only user of the search while it runs; `stop` joins it, so the command that follows
    finds no thread left and no report in flight."""

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
                    self.analysis.step()
                else:
                    self._stop.wait(min(0.05, self.interval or 0.05))
                if self.interval > 0 and time.perf_counter() >= next_report:
                    self.report()
                    next_report = time.perf_counter() + self.interval
        except Exception as exc:  # noqa: BLE001 - a failed analysis ends quietly; the engine goes on
            print(f"minigo gtp: the analysis stopped: {type(exc).__name__}: {exc}", file=self.log)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
