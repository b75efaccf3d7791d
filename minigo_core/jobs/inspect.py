"""`minigo inspect PATH`: read a game file, a directory of game files, or a model file, as a person would.

- Game file: a summary (result, moves, positions recorded, model, seeds, search settings), the board at any
  move (`--move K`: the position before move K) with the search's top moves and visit counts there, and SGF
  export (`--sgf OUT`, `-` for stdout) with the top moves of every recorded search as comments.
- Directory: one line per game file (result, moves, positions, bytes); bad files are named, not fatal.
- A packed generation's game files and folder by their old paths, its pack as its folder.
- Model file: its config, provenance and parameter count.
- `--analyse --model M`: the game file searched by model M at every position (`--visits N` each, the search
  of `minigo analysis`), written as SGF (`--out`/`--sgf` OUT, stdout by default) with the model's win rate,
  score, best move and principal variation at every move (`minigo_core.gtp.review`).

The text and SGF are `minigo_core.report.inspect`'s, the analysed SGF `minigo_core.gtp.review`'s.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys

from minigo_core.base.command import Command, UsageError
from minigo_core.data import pack, storage
from minigo_core.data.gamefile import GameFileError, GameRecord, game_from_bytes
from minigo_core.gtp import review
from minigo_core.gtp.server import build_model_server
from minigo_core.jobs.gtp import add_search_arguments, available_cores, play_search
from minigo_core.report import inspect
from minigo_core.search.timed_search import DEFAULT_MAX_READOUTS

log = logging.getLogger(__name__)


def show(args: argparse.Namespace) -> None:
    if args.analyse or args.model:
        analyse(args)
        return
    kind = inspect.kind_of(args.path)
    if kind == "directory":
        print(inspect.inspect_directory(args.path))
        return
    if kind == "model":
        print(inspect.inspect_model(args.path))
        return
    data = pack.read_member(args.path)  # the file, or its copy in its generation's pack
    record = game_from_bytes(data, args.path)
    out: list[str] = []
    if args.sgf != "-":
        out.append(inspect.summary(record, args.path, len(data)))
        move = len(record.moves) if args.move is None else args.move
        out.append(inspect.board_at(record, move, args.top))
    if args.sgf:
        data = inspect.game_sgf(record, args.top)
        if args.sgf == "-":
            sys.stdout.write(data.decode())
        else:
            storage.write_bytes(args.sgf, data)
            out.append(f"wrote {args.sgf} ({len(data)} bytes)")
    if out:
        print("\n".join(out))


def game_to_analyse(args: argparse.Namespace) -> GameRecord:
    """The game file `--analyse` reads, after its options are checked (UsageError, exit 2, names them)."""
    if not args.analyse:
        raise UsageError("--model is for --analyse: add --analyse to analyse the game with the model")
    if not args.model:
        raise UsageError("--analyse needs --model M: the model file whose search analyses the game")
    if args.visits < 1:
        raise UsageError(f"--visits must be at least 1, not {args.visits}")
    kind = inspect.kind_of(args.path)
    if kind != "game":
        raise UsageError(f"--analyse analyses a game file; {args.path} is a {kind} file or folder")
    try:
        return game_from_bytes(pack.read_member(args.path), args.path)
    except GameFileError as exc:
        raise UsageError(f"--analyse analyses a game file: {exc}") from None


def analyse(args: argparse.Namespace) -> None:
    """`--analyse`: the game searched by the model at every position, written as SGF with comments."""
    record = game_to_analyse(args)
    n = record.board_size
    threads = args.threads or available_cores()
    with contextlib.redirect_stdout(sys.stderr):  # stdout may carry the SGF, nothing else
        try:
            server = build_model_server(args.model, play_search(args, args.visits), threads=max(1, threads))
        except ValueError as exc:  # ModelFileError: missing, damaged or foreign
            raise UsageError(f"--model: {exc}") from None
        try:
            size = int(server.player.board_size)
            if size != n:
                raise UsageError(f"--model {args.model} plays {size}x{size}, the game {args.path} is {n}x{n}")
            log.info("analysing %d positions at %d visits each", len(record.moves) + 1, args.visits)
            turns = review.analyse_game(server.player, record.moves, n, record.komi, args.visits)
        finally:
            server.player.close()
    generation = (record.metadata.get("model") or {}).get("generation")
    name = "minigo" if generation is None else f"minigo gen{generation}"
    data = review.analysed_sgf(
        record, turns, model=os.path.basename(args.model), visits=args.visits, players=(name, name),
        game=args.path,
    )  # fmt: skip
    if args.sgf in (None, "-"):
        sys.stdout.write(data.decode())
        return
    storage.write_bytes(args.sgf, data)
    mistakes = sum(review.is_mistake(a, b) for a, b in zip(turns, turns[1:], strict=False))
    print(f"wrote {args.sgf} ({len(data)} bytes): {len(turns)} positions analysed by {args.model} at "
          f"{args.visits} visits, {mistakes} moves marked mistake?")  # fmt: skip


def cli_main(argv: list[str] | None = None) -> int:
    """`minigo inspect PATH [--move K] [--sgf OUT] [--top T] [--analyse --model M [--visits N]]`: show a game
    file, directory or model file; analyse a game file with a model."""
    # FileNotFoundError, and ValueError: GameFileError, ModelFileError, a bad --move
    cmd = Command("inspect", cli_main.__doc__, errors=(FileNotFoundError, ValueError))
    cmd.parser.add_argument(
        "path", help="game file (.arrow), directory of game files, or model file (.safetensors)"
    )
    cmd.parser.add_argument(
        "--move",
        type=int,
        default=None,
        help="show the board before move K (0-based) with the search's top moves",
    )
    cmd.parser.add_argument(
        "--sgf",
        "--out",
        dest="sgf",
        metavar="OUT",
        default=None,
        help="write the game as SGF to this file ('-' for stdout; with --analyse, stdout by default)",
    )
    cmd.parser.add_argument("--top", type=int, default=5, help="top moves to show per search (default 5)")
    analysis = cmd.parser.add_argument_group("analysis (--analyse)")
    analysis.add_argument(
        "--analyse",
        action="store_true",
        help="search every position of the game file with --model and write the game as SGF with the "
        "model's win rate, score, best move and its principal variation at every move",
    )
    analysis.add_argument("--model", default=None, help="the model file that analyses (with --analyse)")
    analysis.add_argument("--visits", type=int, default=200, help="visits a position (default 200)")
    analysis.add_argument("--threads", type=int, default=None, help="DSP cores (default: every core)")
    cmd.parser.set_defaults(
        config=None, resign_threshold=-1.0, move_time=None, max_readouts=DEFAULT_MAX_READOUTS
    )
    add_search_arguments(analysis)
    return cmd.run(argv, show)
