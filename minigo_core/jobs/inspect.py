"""`minigo inspect PATH`: read a game file, a directory of game files, or a model file, as a person would.

- Game file: a summary (result, moves, positions recorded, model, seeds, search settings), the board at any
  move (`--move K`: the position before move K) with the search's top moves and visit counts there, and SGF
  export (`--sgf OUT`, `-` for stdout) with the top moves of every recorded search as comments.
- Directory: one line per game file (result, moves, positions, bytes); bad files are named, not fatal.
- A packed generation's game files and folder by their old paths, its pack as its folder.
- Model file: its config, provenance and parameter count.

The text and SGF are `minigo_core.report.inspect`'s.
"""

from __future__ import annotations

import argparse
import sys

from minigo_core.base.command import Command
from minigo_core.data import pack, storage
from minigo_core.data.gamefile import game_from_bytes
from minigo_core.report import inspect


def show(args: argparse.Namespace) -> None:
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


def cli_main(argv: list[str] | None = None) -> int:
    """`minigo inspect PATH [--move K] [--sgf OUT] [--top T]`: show a game file, directory or model file."""
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
    cmd.parser.add_argument("--sgf", default=None, help="write the game as SGF to this file ('-' for stdout)")
    cmd.parser.add_argument("--top", type=int, default=5, help="top moves to show per search (default 5)")
    return cmd.run(argv, show)
