"""The GTP commands of GUI analysis and of Go servers, for a model's server (`server.GTPServer`).

- `lz-analyze`, `kata-analyze`: `=` at once, then a line of `info ...` every interval (`analysis_format`),
  searched in a background thread (`analysis.Ponder`) until the next input line, which ends the answer with
  its empty line before that command runs.
- `lz-genmove_analyze`, `kata-genmove_analyze`: a genmove whose search (by the clock or the readouts) streams
  the same lines, then `play MOVE`.
- `kgs-genmove_cleanup`: a genmove that does not pass while dead stones must still be captured
  (`analysis.cleanup_move`).
- `gogui-analyze_commands`, `minigo-ownership` (gfx INFLUENCE), `minigo-policy` (gfx heat map of the
  network's policy).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from minigo_core.game import coords, go
from minigo_core.gtp.analysis import Analysis, Ponder, cleanup_move
from minigo_core.gtp.analysis_format import (
    AnalyzeArgsError,
    AnalyzeRequest,
    gfx_heat_map,
    gfx_influence,
    kata_line,
    lz_line,
    parse_analyze_args,
)
from minigo_core.gtp.protocol import GTPFailure, RawResponse
from minigo_core.play.players import RESIGN, ModelPlayer

GOGUI_ANALYZE_COMMANDS = "gfx/Ownership/minigo-ownership\ngfx/Policy heat map/minigo-policy"


class AnalysisCommands:
    """The commands above, on `server`'s game (a `server.GTPServer`), with `player`'s network and search
    settings."""

    def __init__(self, server: Any, player: ModelPlayer) -> None:
        self.server = server
        self.player = player
        self._analysis: Analysis | None = None
        self._key: tuple = ()

    def commands(self) -> dict[str, Callable[[list[str]], str]]:
        return {
            "lz-analyze": lambda args: self.analyze(args, "lz"),
            "kata-analyze": lambda args: self.analyze(args, "kata"),
            "lz-genmove_analyze": lambda args: self.genmove_analyze(args, "lz"),
            "kata-genmove_analyze": lambda args: self.genmove_analyze(args, "kata"),
            "kgs-genmove_cleanup": self.genmove_cleanup,
            "gogui-analyze_commands": lambda args: GOGUI_ANALYZE_COMMANDS,
            "minigo-ownership": self.ownership_map,
            "minigo-policy": self.policy_map,
        }

    def analysis(self) -> Analysis:
        """The analysis search of this game (a new one after boardsize, clear_board or komi)."""
        s = self.server
        key = (s.board_size, s.komi, s.game_seed)
        if self._analysis is None or self._key != key:
            self._analysis, self._key = Analysis(self.player, s.board_size, s.komi, s.game_seed), key
        return self._analysis

    def _request(self, args: list[str]) -> tuple[AnalyzeRequest, go.Position]:
        try:
            request = parse_analyze_args(args)
        except AnalyzeArgsError as exc:
            print(f"minigo gtp: {exc}", file=self.server.log)
            raise GTPFailure("syntax error") from None
        colour = self.server.position.to_play if request.colour is None else request.colour
        return request, self.server._with_to_play(colour)

    def _line(self, analysis: Analysis, request: AnalyzeRequest, style: str) -> str:
        shown = analysis.report(request.minmoves, request.maxmoves)
        n = self.server.board_size
        if style == "lz":
            return lz_line(shown.moves, n) + "\n"
        own = shown.ownership * shown.to_play if request.ownership and shown.ownership is not None else None
        return kata_line(shown.moves, n, own) + "\n"

    def analyze(self, args: list[str], style: str) -> str:
        request, position = self._request(args)
        analysis = self.analysis()
        self.server.begin_raw()
        if self.server.out is None:  # not serving (a caller of handle_line): nothing to stream to
            return RawResponse("\n")
        if analysis.start(position):
            self.server.pending_stream = Ponder(
                analysis,
                request.interval,
                lambda: self.server.emit(self._line(analysis, request, style)),
                log=self.server.log,
            )
        else:  # a finished game: an answer with no lines, ended by the next input line as usual
            self.server.pending_stream = _NoStream()
        return RawResponse("")

    def _search(
        self, position: go.Position, every: float = 0.0, report: Callable[[Analysis], None] | None = None
    ) -> Analysis | None:
        """The analysis search of a genmove: the clock's budget (or `--move-time`) up to `max_readouts`, else
        the readouts; `report(analysis)` every `every` seconds. None for a finished game."""
        analysis = self.analysis()
        if not analysis.start(position):
            return None
        budgets = [b for b in (self.server.move_budget(position.to_play), self.player.search.move_time) if b]
        seconds = min(budgets) if budgets else None
        search = self.player.search
        readouts = max(1, (search.max_readouts if seconds else None) or search.readouts)
        analysis.run(readouts, seconds, every, (lambda: report(analysis)) if report else (lambda: None))
        return analysis

    def _play(self, colour: int, move: coords.Move | str) -> str:
        if move == RESIGN:
            return "resign"
        self.server._push(self.server.position.play_move(move, color=colour))
        return coords.to_gtp(move, self.server.board_size)

    def genmove_analyze(self, args: list[str], style: str) -> str:
        request, position = self._request(args)
        start = time.perf_counter()
        self.server.begin_raw()
        analysis = self._search(
            position, request.interval, lambda a: self.server.emit(self._line(a, request, style))
        )
        move: coords.Move | str = None
        if analysis is not None:
            self.server.emit(self._line(analysis, request, style))
            best = coords.from_flat(analysis.best_move(), self.server.board_size)
            move = RESIGN if analysis.root_value() < self.player.search.resign_threshold else best
        self.server.clocks[position.to_play].spend(time.perf_counter() - start)
        return RawResponse(f"play {self._play(position.to_play, move)}\n\n")

    def genmove_cleanup(self, args: list[str]) -> str:
        colour, move = self.server._generate(args)
        if move is None or move == RESIGN:  # never resigns in the cleanup phase
            position = self.server._with_to_play(colour)
            analysis = self._search(position)
            flat = None if analysis is None else cleanup_move(analysis, position)
            move = None if flat is None else coords.from_flat(flat, self.server.board_size)
        return self._play(colour, move)

    def ownership_map(self, args: list[str]) -> str:
        analysis = self._search(self.server.position)
        if analysis is None:
            own = self.server.position.ownership().astype(float)
        else:
            own = analysis.ownership()
        return gfx_influence(own, self.server.board_size)

    def policy_map(self, args: list[str]) -> str:
        analysis = self.analysis()
        if not analysis.start(self.server.position):
            return "TEXT the game is over"
        return gfx_heat_map(analysis.prior(), self.server.board_size)


class _NoStream:
    """A stream with nothing to search (a finished game)."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass
