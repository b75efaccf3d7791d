"""A GTP server (Go Text Protocol, version 2) that plays a model: what `minigo gtp --model MODEL` serves.

Connect it to any GTP controller (GoGui, Sabaki, gogui-twogtp, GNU Go's twogtp, or `minigo evaluate` with
`--opponent "gtp:minigo gtp --model M"`).

Protocol (GTP 2 specification, draft 2): each input line is cleaned (control characters other than tab and
newline removed, `#` comments cut, tabs turned into spaces, empty lines ignored); a command is
`[id] command_name [arguments]`; the answer is `=[id] result` or `?[id] error message` followed by an empty
line. Malformed or illegal input gets a `?` answer with the specification's error text (`syntax error`,
`illegal move`, `unacceptable size`, `cannot undo`, `cannot load file`, `unknown command`); the server never
exits on bad input, and nothing but protocol goes to stdout (diagnostics and tracebacks go to stderr).

Commands: protocol_version, name, version, known_command, list_commands, quit, boardsize, clear_board, komi,
play, genmove (answers `resign` when the model's value is below the resign threshold), reg_genmove, undo,
showboard, final_score (Tromp-Taylor), loadsgf.

Clocks: time_settings, time_left, kgs-time_settings (none, absolute, byoyomi, canadian): genmove searches
for the budget `timecontrol.move_budget` gives from the clock (a model: chunks of readouts until the budget,
`readouts` the ceiling); without a clock, by readouts. The server charges its own clock with each genmove's
time until the controller's next `time_left` says otherwise.

A model's server also answers (`analysis_commands`): lz-analyze, kata-analyze (streamed until the next input
line), lz-genmove_analyze, kata-genmove_analyze, kgs-genmove_cleanup, gogui-analyze_commands,
minigo-ownership, minigo-policy. User's guide: docs/GTP.md.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import IO, Any

from minigo_core import __version__
from minigo_core.base.config import SearchSettings, load_config
from minigo_core.data import storage
from minigo_core.game import coords, go, sgf
from minigo_core.game.result import result_string
from minigo_core.gtp.analysis_commands import AnalysisCommands
from minigo_core.gtp.protocol import GTPFailure, RawResponse
from minigo_core.nn.modelfile import digest as model_digest
from minigo_core.play.players import RESIGN, ModelPlayer, Player, load_network
from minigo_core.play.timecontrol import Clock, TimeSettings, TimeSettingsError, move_budget

PROTOCOL_VERSION = 2
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # every control character except HT (9) and LF (10)
_COLOURS = {"b": go.BLACK, "black": go.BLACK, "w": go.WHITE, "white": go.WHITE}


def clean_line(line: str) -> str:
    """The GTP 2 preprocessing of one input line (section 2.2-2.3 of the specification)."""
    line = _CONTROL.sub("", line.replace("\n", ""))
    line = line.split("#", 1)[0]
    return line.replace("\t", " ").strip()


def format_response(ok: bool, cmd_id: int | None, text: str = "") -> str:
    """`=[id] text` / `?[id] text` plus the empty line; multi-line text never holds an empty line."""
    lines = [ln.rstrip() for ln in text.rstrip().split("\n")]
    # The first line follows `=id `; later lines must not be empty (an empty line ends the response).
    body = "\n".join([lines[0]] + [ln if ln else " " for ln in lines[1:]])
    head = ("=" if ok else "?") + ("" if cmd_id is None else str(cmd_id))
    return f"{head} {body}\n\n"


def parse_colour(text: str) -> int:
    try:
        return _COLOURS[text.lower()]
    except KeyError:
        raise GTPFailure("syntax error") from None


class GTPServer:
    """The protocol layer and the game state; `player` (if given) makes the moves for genmove.

    `fixed_board_size` (a model's board size) makes `boardsize` refuse other sizes with `unacceptable size`.
    """

    def __init__(
        self,
        player: Player | None = None,
        board_size: int = 9,
        komi: float = 7.5,
        fixed_board_size: int | None = None,
        name: str = "MiniGo",
        version: str = __version__,
        log: IO[str] | None = None,
    ) -> None:
        self.player = player
        self.fixed_board_size = fixed_board_size
        self.board_size = fixed_board_size or board_size
        self.komi = float(komi)
        self.name = name  # what `name` and `version` answer
        self.version = version
        self.log = log if log is not None else sys.stderr
        self.history: list[go.Position] = []
        self.position = go.Position(self.board_size, self.komi)
        self.game_seed = 0
        self.finished = False  # set by `quit`
        self.time_settings = TimeSettings()
        self.clocks = {go.BLACK: Clock(self.time_settings), go.WHITE: Clock(self.time_settings)}
        self.out: IO[bytes] | None = None  # while serving: streamed lines go straight out
        self._emitted: list[str] = []  # not serving: streamed lines wait for the answer
        self._write_lock = threading.Lock()
        self._cmd_id: int | None = None
        self.stream: Any = None  # a running analysis (`Ponder`), stopped by the next input line
        self.pending_stream: Any = None  # one to start once its `=` head is out
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: str(PROTOCOL_VERSION),
            "name": lambda args: self.name,
            "version": lambda args: self.version,
            "known_command": self.cmd_known_command,
            "list_commands": lambda args: "\n".join(self.commands),
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "reg_genmove": self.cmd_reg_genmove,
            "undo": self.cmd_undo,
            "showboard": self.cmd_showboard,
            "final_score": self.cmd_final_score,
            "loadsgf": self.cmd_loadsgf,
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            "kgs-time_settings": self.cmd_kgs_time_settings,
        }
        if player is None:
            del self.commands["genmove"], self.commands["reg_genmove"]
        if isinstance(player, ModelPlayer):
            self.analysis_commands = AnalysisCommands(self, player)
            self.commands.update(self.analysis_commands.commands())
        self._new_game()

    # ------------------------------------------------------------------------------------------- protocol

    def handle_line(self, raw: str) -> str | None:
        """The full response to one input line, or None for a line GTP says to ignore."""
        line = clean_line(raw)
        if not line:
            return None
        parts = line.split()
        cmd_id = None
        if parts[0].isdigit():
            cmd_id = int(parts[0])
            parts = parts[1:]
            if not parts:
                return format_response(False, cmd_id, "syntax error")
        name, args = parts[0], parts[1:]
        handler = self.commands.get(name)
        if handler is None:
            return format_response(False, cmd_id, "unknown command")
        self._cmd_id, self._emitted = cmd_id, []
        try:
            answer = handler(args)
            if isinstance(answer, RawResponse):
                return "".join(self._emitted) + answer
            return format_response(True, cmd_id, answer)
        except GTPFailure as exc:
            return format_response(False, cmd_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - a GTP server answers every command and keeps running
            print(f"minigo gtp: internal error on {line!r}:", file=self.log)
            traceback.print_exc(file=self.log)
            message = f"internal error: {type(exc).__name__}: {exc}".replace("\n", " ")
            return format_response(False, cmd_id, message)

    def serve(self, infile: IO[bytes], outfile: IO[bytes]) -> int:
        """Answer commands from `infile` until `quit` or end of input; returns the exit status (0)."""
        self.out = outfile
        try:
            for raw in infile:
                self.stop_stream()  # any input line, even an empty one, ends a running analysis
                response = self.handle_line(raw.decode("utf-8", errors="replace"))
                if response is None:
                    continue
                self.emit(response)
                if self.pending_stream is not None:
                    self.stream, self.pending_stream = self.pending_stream, None
                    self.stream.start()
                if self.finished:
                    break
        finally:
            self.stop_stream()
            self.out = None
        return 0

    def emit(self, text: str) -> None:
        """Write `text` to the controller now (serving), or keep it for the current answer."""
        if self.out is None:
            self._emitted.append(text)
            return
        with self._write_lock:
            self.out.write(text.encode())
            self.out.flush()

    def begin_raw(self) -> None:
        """The `=[id]` head of a streamed answer (see `RawResponse`)."""
        self.emit("=" + ("" if self._cmd_id is None else str(self._cmd_id)) + "\n")

    def stop_stream(self) -> None:
        """End a running analysis: its thread joined, then the empty line that ends its answer."""
        stream, self.stream = self.stream, None
        if stream is not None:
            stream.stop()
            self.emit("\n")

    # ------------------------------------------------------------------------------------------- commands

    def _new_game(self) -> None:
        self.position = go.Position(self.board_size, self.komi)
        self.history = []
        self.game_seed += 1
        if self.player is not None:
            self.player.new_game(self.board_size, self.komi, self.game_seed)

    def _push(self, position: go.Position) -> None:
        self.history.append(self.position)
        self.position = position

    def cmd_known_command(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GTPFailure("syntax error")
        return "true" if args[0] in self.commands else "false"

    def cmd_quit(self, args: list[str]) -> str:
        self.finished = True
        return ""

    def cmd_boardsize(self, args: list[str]) -> str:
        if len(args) != 1 or not args[0].isdigit():
            raise GTPFailure("syntax error")
        size = int(args[0])
        if self.fixed_board_size is not None and size != self.fixed_board_size:
            print(
                f"minigo gtp: this model plays {self.fixed_board_size}x{self.fixed_board_size} only",
                file=self.log,
            )
            raise GTPFailure("unacceptable size")
        if not 2 <= size <= coords.MAX_BOARD_SIZE:
            raise GTPFailure("unacceptable size")
        self.board_size = size
        self._new_game()
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self._new_game()
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GTPFailure("syntax error")
        try:
            komi = float(args[0])
        except ValueError:
            raise GTPFailure("syntax error") from None
        if komi != komi or komi in (float("inf"), float("-inf")):
            raise GTPFailure("syntax error")
        self.komi = komi
        self._rebuild_with_komi()
        if self.player is not None:  # drop any search tree built with the old komi
            self.player.new_game(self.board_size, self.komi, self.game_seed)
        return ""

    def _rebuild_with_komi(self) -> None:
        """Komi is part of a position: replay the game so far (undo history included) with the new komi."""
        positions = self.history + [self.position]
        first = positions[0]
        rebuilt = [go.Position.from_board(first.board, to_play=first.to_play, komi=self.komi, ko=first.ko)]
        for after in positions[1:]:
            rebuilt.append(rebuilt[-1].play_move(after.recent[-1], color=-after.to_play))
        self.history, self.position = rebuilt[:-1], rebuilt[-1]

    def _vertex(self, text: str) -> coords.Move:
        try:
            return coords.from_gtp(text, self.board_size)
        except ValueError:
            if re.fullmatch(r"[A-Za-z]\d{1,2}", text):
                raise GTPFailure("illegal move") from None  # a vertex, but not on this board
            raise GTPFailure("syntax error") from None

    def cmd_play(self, args: list[str]) -> str:
        if len(args) != 2:
            raise GTPFailure("syntax error")
        colour = parse_colour(args[0])
        move = self._vertex(args[1])
        try:
            new = self.position.play_move(move, color=colour)
        except go.IllegalMove as exc:
            print(f"minigo gtp: {exc}", file=self.log)
            raise GTPFailure("illegal move") from None
        self._push(new)
        return ""

    def _with_to_play(self, colour: int) -> go.Position:
        """The current position with `colour` to move (a controller may ask either colour for a move)."""
        if self.position.to_play == colour:
            return self.position
        # Same stones, the other side to move; the history planes restart (a rare controller request).
        return go.Position.from_board(self.position.board, to_play=colour, komi=self.komi)

    def _generate(self, args: list[str]) -> tuple[int, coords.Move | str]:
        if len(args) != 1:
            raise GTPFailure("syntax error")
        colour = parse_colour(args[0])
        assert self.player is not None
        start = time.perf_counter()
        position = self._with_to_play(colour)
        move = self.player.genmove_within(position, self.move_budget(colour))
        self.clocks[colour].spend(time.perf_counter() - start)  # until `time_left` says otherwise
        return colour, move

    def move_budget(self, colour: int) -> float | None:
        """Seconds `colour`'s next move may search by the clock (`timecontrol.move_budget`), or None."""
        return move_budget(self.clocks[colour], self.board_size, self.position.n)

    def cmd_genmove(self, args: list[str]) -> str:
        colour, move = self._generate(args)
        if move == RESIGN:
            return "resign"
        self._push(self.position.play_move(move, color=colour))
        return coords.to_gtp(move, self.board_size)

    def cmd_reg_genmove(self, args: list[str]) -> str:
        _, move = self._generate(args)
        return "resign" if move == RESIGN else coords.to_gtp(move, self.board_size)

    def cmd_undo(self, args: list[str]) -> str:
        if not self.history:
            raise GTPFailure("cannot undo")
        self.position = self.history.pop()
        return ""

    def cmd_showboard(self, args: list[str]) -> str:
        n = self.board_size
        marks = {go.BLACK: "X", go.WHITE: "O", go.EMPTY: "."}
        letters = "   " + " ".join(coords.GTP_COLUMNS[:n])
        last = self.position.recent[-1] if self.position.recent else None
        lines = [letters]
        for r in range(n):
            cells = []
            for c in range(n):
                mark = marks[int(self.position.board[r, c])]
                cells.append(mark)
            row = f"{n - r:2d} " + " ".join(cells) + f" {n - r}"
            lines.append(row)
        lines.append(letters)
        to_play = "Black" if self.position.to_play == go.BLACK else "White"
        caps = self.position.caps
        last_text = coords.to_gtp(last, n) if self.position.n else "-"
        lines.append(
            f"move {self.position.n}, {to_play} to play, komi {self.komi:g}, "
            f"captures B {caps[0]} W {caps[1]}, last move {last_text}"
        )
        return "\n" + "\n".join(lines)

    def cmd_final_score(self, args: list[str]) -> str:
        return result_string(self.position.score())

    def cmd_loadsgf(self, args: list[str]) -> str:
        if not 1 <= len(args) <= 2 or (len(args) == 2 and not args[1].isdigit()):
            raise GTPFailure("syntax error")

        try:
            positions = sgf.positions_from_sgf(storage.read_bytes(args[0]))
        except (OSError, ValueError) as exc:  # go.IllegalMove is a ValueError
            print(f"minigo gtp: cannot load {args[0]}: {exc}", file=self.log)
            raise GTPFailure("cannot load file") from None
        size = positions[0].board_size
        if self.fixed_board_size is not None and size != self.fixed_board_size:
            print(
                f"minigo gtp: {args[0]} is {size}x{size}; this model plays {self.fixed_board_size}x"
                f"{self.fixed_board_size}",
                file=self.log,
            )
            raise GTPFailure("cannot load file")
        # move_number k: the position before move k (moves 1..k-1 played); default: after the last move.
        upto = len(positions) - 1 if len(args) == 1 else max(0, min(int(args[1]) - 1, len(positions) - 1))
        self.board_size = size
        self.komi = positions[0].komi
        self._new_game()
        self.history = positions[:upto]
        self.position = positions[upto]
        return ""

    def _set_clock(self, settings: TimeSettings) -> None:
        self.time_settings = settings
        self.clocks = {go.BLACK: Clock(settings), go.WHITE: Clock(settings)}

    def cmd_time_settings(self, args: list[str]) -> str:
        """`time_settings main_time byo_yomi_time byo_yomi_stones` (whole seconds; `timecontrol`)."""
        if len(args) != 3 or not all(a.isdigit() for a in args):
            raise GTPFailure("syntax error")
        self._set_clock(TimeSettings.from_gtp(args))
        return ""

    def cmd_kgs_time_settings(self, args: list[str]) -> str:
        """`kgs-time_settings none | absolute M | byoyomi M T P | canadian M T S`."""
        try:
            self._set_clock(TimeSettings.from_kgs(args))
        except TimeSettingsError as exc:
            print(f"minigo gtp: {exc}", file=self.log)
            raise GTPFailure("syntax error") from None
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        """`time_left colour time stones`: the clock of `colour` now (stones 0: main time)."""
        if len(args) != 3 or not args[2].isdigit():
            raise GTPFailure("syntax error")
        colour = parse_colour(args[0])
        try:
            seconds = float(args[1])
        except ValueError:
            raise GTPFailure("syntax error") from None
        if not 0 <= seconds < float("inf"):
            raise GTPFailure("syntax error")
        self.clocks[colour].time_left(seconds, int(args[2]))
        return ""


# ----------------------------------------------------------------------------------------- a model's server


def build_model_server(
    model_url: str,
    search: SearchSettings,
    *,
    backend: str = "dsp",
    threads: int = 1,
    config: str | None = None,
    komi: float | None = None,
) -> GTPServer:
    """A GTP server playing `model_url` with `search` (the best move, no noise, no softpick): its readouts a
    move without a clock; with one (or `search.move_time`, seconds a move: the clock's budget, when shorter,
    wins) the search runs until the budget, `search.max_readouts` the ceiling. `config`: the run config whose
    komi the server starts from and whose board size the model must play (its search settings are
    `search`'s: `jobs.gtp.play_search` builds them from it)."""

    run_cfg = None
    if config:
        run_cfg = load_config(config)
    engine_name = "compiled" if backend == "dsp" else "python"
    net = load_network(model_url, backend, threads, engine_name)
    if run_cfg is not None and run_cfg.board_size != net.cfg.board_size:
        size = net.cfg.board_size
        raise ValueError(
            f"model {model_url} plays {size}x{size} but config {config} has board_size {run_cfg.board_size}"
        )
    readouts = search.readouts
    name = os.path.basename(model_url)
    player = ModelPlayer(net, replace(search, softpick_moves=0), name=name, engine_name=engine_name)
    digest = model_digest(model_url)[:12]
    default_komi = run_cfg.komi if run_cfg is not None else 7.5
    return GTPServer(
        player,
        komi=default_komi if komi is None else komi,
        fixed_board_size=net.cfg.board_size,
        name="MiniGo",
        version=f"{__version__} ({name} sha256:{digest}, {readouts} readouts)",
    )
