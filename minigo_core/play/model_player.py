"""A model as a player: a network with MCTS (the compiled searcher, or the reference search), fixed readouts
or a time budget a move, no root noise, seeded softpick; it searches as its `config.SearchSettings` say."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from minigo_core.base.config import SearchSettings
from minigo_core.game import coords, go
from minigo_core.play.player import RESIGN, Player, PlayerError
from minigo_core.search import engine, mcts, timed_search

log = logging.getLogger(__name__)


class ModelPlayer(Player):
    """A network with MCTS: no root noise, fixed readouts, seeded softpick.

    `engine_name` "compiled": the compiled engine's search (`engine.Searcher`, `net` loaded with
    `engine.load_network`); "python": the reference `mcts.MCTSPlayer`. A position the engine cannot reach by
    replaying `position.recent` from the empty board (set-up stones) is searched by the reference.

    Every move is a full search of `readouts` readouts, or, with a time budget (`genmove_within`, or
    `search.move_time`), growing chunks of readouts on the kept tree until the budget or `max_readouts` (else
    `readouts`) (`timed_search.search_for`; `search.move_time` on `search.move_clock`: wall time, or this
    process's CPU time, which a loaded machine does not shorten); before move `softpick_moves` the move is
    drawn in proportion to visits (seeded per game, so E games are E different games), after it the most
    visited move. It resigns when the root value from its own view is below `resign_threshold` (-1 never
    resigns). The other settings (the root search, the leaves a batch, PUCT's and Gumbel's constants) are
    `search`'s, whose every move is `search.for_play`: no root noise, every move a full search.
    """

    def __init__(
        self, net: Any, search: SearchSettings, name: str = "model", engine_name: str = "python"
    ) -> None:
        self.net = net
        self.search = search
        self.name = name
        self.engine_name = engine_name
        self.board_size = int(net.cfg.board_size)
        self._rng = np.random.default_rng(0)
        self._seed = 0
        self._mcts: Any = None
        self._replayed: go.Position | None = None  # the compiled search's position, replayed from moves
        self.searched, self.timed = 0, [0, 0]  # readouts searched; moves by a time budget and their readouts
        # per move searched by a time budget: the root's visits and the tree's nodes when it stopped (what the
        # search holds, not what was asked for: a tree kept across chunks and moves holds more)
        self.timed_root_visits: list[int] = []
        self.timed_tree_nodes: list[int] = []

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        if board_size != self.board_size:
            raise PlayerError(
                f"model {self.name} plays {self.board_size}x{self.board_size}, not {board_size}x{board_size}"
            )
        self._rng = np.random.default_rng(seed)
        self._seed = int(seed)
        self._mcts = None
        self._replayed = None

    def new_search(self, komi: float, engine_name: str | None = None, seed: int | None = None) -> Any:
        """A search of this player's (its settings; `engine_name` default the player's): an `engine.Searcher`
        (compiled) or an `mcts.MCTSPlayer` (python), seeded with `seed` (default the game's)."""
        if seed is not None and seed != self._seed:
            saved = self._seed, self._rng
            self._seed, self._rng = int(seed), np.random.default_rng(seed)
            try:
                return self._new_search(komi, engine_name or self.engine_name)
            finally:
                self._seed, self._rng = saved
        return self._new_search(komi, engine_name or self.engine_name)

    def _new_search(self, komi: float, engine_name: str) -> Any:
        settings = self.search.for_play(max(1, int(self.search.readouts)))
        if engine_name == "compiled":
            compiled = engine.settings_for(settings, self.net.cfg.feature_set, self.board_size)
            return engine.Searcher(self.net, compiled, board_size=self.board_size, komi=komi, seed=self._seed)
        return mcts.MCTSPlayer(
            self.net, settings, self.board_size, komi, self._rng, feature_set=self.net.cfg.feature_set
        )

    def genmove(self, position: go.Position) -> coords.Move | str:
        return self.genmove_within(position, None)

    def genmove_within(self, position: go.Position, seconds: float | None) -> coords.Move | str:
        if position.board_size != self.board_size:
            raise PlayerError(
                f"model {self.name} plays {self.board_size}x{self.board_size}, "
                f"not {position.board_size}x{position.board_size}"
            )
        if position.is_game_over() or position.n >= 2 * self.board_size**2:
            return None  # nothing left to search: the game is over
        times = [t for t in (seconds, self.search.move_time) if t is not None]
        step = self._search_step(position)
        if not times:
            move, value = step(max(1, int(self.search.readouts)))
        else:
            ceiling = max(1, int(self.search.max_readouts or self.search.readouts))
            before, start = self.searched, time.perf_counter()
            # a budget of `move_time` alone may be of CPU time (`move_clock` cpu); a game clock's is wall time
            clock = (
                time.process_time
                if seconds is None and self.search.move_clock == "cpu"
                else time.perf_counter
            )
            move, value = timed_search.search_for(step, min(times), ceiling, self.timed_chunk(), clock)
            readouts = self.searched - before
            self.timed = [self.timed[0] + 1, self.timed[1] + readouts]
            self._record_tree()
            log.debug(
                "move %d searched by a %.3f s budget: %d readouts in %.3f s, stopped by its %s",
                position.n + 1,
                min(times),
                readouts,
                time.perf_counter() - start,
                "readout ceiling" if readouts >= ceiling else "time budget",
            )
        self.last_value = value
        return RESIGN if value < self.search.resign_threshold else move

    def _record_tree(self) -> None:
        """The root's visits and the tree's nodes after a timed move (`timed_root_visits`,
        `timed_tree_nodes`)."""
        if isinstance(self._mcts, engine.Searcher):
            stats = self._mcts.root_stats()
            visits, nodes = stats.root_visits, stats.tree_nodes
        elif isinstance(self._mcts, mcts.MCTSPlayer) and self._mcts.root is not None:
            root = self._mcts.root
            visits = int(root.child_N.sum()) if root.child_N is not None else 0
            nodes = mcts.count_nodes(root)
        else:
            return
        self.timed_root_visits.append(int(visits))
        self.timed_tree_nodes.append(int(nodes))

    def timed_chunk(self) -> int:
        """Readouts of a timed search's first chunk (Gumbel: at least its considered moves, so that chunk's
        sequential halving looks at all of them)."""
        considered = self.search.gumbel_considered if self.search.search == "gumbel" else 1
        return max(1, int(self.search.chunk_readouts), int(considered))

    def _search_step(self, position: go.Position) -> Callable[[int], tuple[coords.Move, float]]:
        """One call of the search on `position` with n readouts, added to the kept tree: (move, root value).

        A position with set-up stones (not reached by moves from the empty board) is searched by the reference
        search until the next game."""
        if self._mcts is None:
            self._mcts = self._new_search(position.komi, self.engine_name)
        if isinstance(self._mcts, engine.Searcher):
            moves = self.moves_from_start(position)
            if moves is not None:
                searcher = self._mcts

                def compiled(n: int) -> tuple[coords.Move, float]:
                    self.searched += n
                    searcher.set_readouts(n)
                    outcome = searcher.search(moves, full_search=True, noise=False)
                    return coords.from_flat(outcome.move, self.board_size), float(outcome.root_value)

                return compiled
            self._mcts = self._new_search(position.komi, "python")
        reference = self._mcts

        def python(n: int) -> tuple[coords.Move, float]:
            self.searched += n
            reference.settings = reference.settings.for_play(n)
            result = reference.search(position, full_search=True, noise=False)
            return result.move, float(result.root_value)

        return python

    def moves_from_start(self, position: go.Position) -> list[int] | None:
        """The flat moves that lead from the empty board to `position`, or None if none do (set-up stones).

        Checked by replaying them (incrementally across a game's calls) and comparing the boards."""
        n = self.board_size
        recent = [getattr(m, "move", m) for m in position.recent]
        if position.n != len(recent):
            return None
        replayed = self._replayed
        if (
            replayed is None
            or replayed.n > len(recent)
            or tuple(replayed.recent) != tuple(recent[: replayed.n])
        ):
            replayed = go.Position(n, position.komi)
        try:
            for move in recent[replayed.n :]:
                replayed = replayed.play_move(move)
        except go.IllegalMove:
            return None
        if not np.array_equal(replayed.board, position.board) or replayed.to_play != position.to_play:
            return None
        self._replayed = replayed
        return [n * n if m is None else coords.to_flat(m, n) for m in recent]

    def info(self) -> dict:
        out: dict[str, Any] = {
            "readouts": self.search.readouts,
            "softpick_moves": self.search.softpick_moves,
            "resign_threshold": self.search.resign_threshold,
            "model": self.net.cfg.to_dict(),
        }
        if self.search.move_time is not None:  # searched by a time budget: its floor, ceiling and readouts
            out["move_time"], out["first_chunk_readouts"] = self.search.move_time, self.timed_chunk()
            out["move_clock"] = self.search.move_clock
            out["max_readouts"] = max(1, int(self.search.max_readouts or self.search.readouts))
        if self.timed[
            0
        ]:  # moves searched by a budget (move_time, a clock): what was asked, what the tree held
            out["mean_readouts_per_move"] = round(self.timed[1] / self.timed[0], 1)
        if self.timed_root_visits:
            out["mean_root_visits_per_move"] = round(float(np.mean(self.timed_root_visits)), 1)
            out["mean_tree_nodes_per_move"] = round(float(np.mean(self.timed_tree_nodes)), 1)
        prov = getattr(self.net, "provenance", None)
        if prov:
            out["provenance"] = prov
        return out
