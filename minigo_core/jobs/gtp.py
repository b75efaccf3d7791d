"""`minigo gtp --model MODEL`: serve a GTP server playing a model file on stdin/stdout.

Connect it to any GTP controller (GoGui, Sabaki, gogui-twogtp, GNU Go's twogtp, or `minigo evaluate` with
`--opponent "gtp:minigo gtp --model M"`). The server (the protocol, its commands, the game state) is
`minigo_core.gtp.server`; nothing but protocol goes to stdout (diagnostics and tracebacks go to
stderr).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import replace
from typing import IO

from minigo_core.base import preempt
from minigo_core.base.command import Command
from minigo_core.base.config import SearchSettings, load_config, play_settings
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.gtp.server import GTPServer, build_model_server
from minigo_core.play.players import MixedPlayer, RandomPlayer, UCTPlayer
from minigo_core.search.timed_search import DEFAULT_MAX_READOUTS

log = logging.getLogger(__name__)


def cli_main(argv: list[str]) -> int:
    cmd = Command("gtp", "A GTP server playing a MiniGo model.")
    parser = cmd.parser
    parser.add_argument(
        "--model", required=True, help="model file (path or fsspec URL), 'random', or uct:N (N playouts)"
    )
    parser.add_argument(
        "--readouts",
        type=int,
        default=None,
        help="MCTS readouts per move (default: the config's evaluate.readouts, else 200)",
    )
    parser.add_argument(
        "--backend",
        choices=("dsp", "torch"),
        default=None,
        help="network backend (default: the config's model.backend, else dsp)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="DSP-emulation cores / torch threads (default: every core, as GUIs want; two programs playing "
        "each other on one machine: 1 each)",
    )
    parser.add_argument("--config", default=None, help="run config: search settings, komi, resign threshold")
    parser.add_argument("--komi", type=float, default=None, help="starting komi (controllers usually set it)")
    parser.add_argument(
        "--resign-threshold",
        type=float,
        default=None,
        help="resign when the root value is below this (-1 never resigns)",
    )
    parser.add_argument(
        "--move-time",
        type=float,
        default=None,
        metavar="MS",
        help="search each move for MS milliseconds (a GTP clock set by time_settings/kgs-time_settings "
        "shortens it further)",
    )
    parser.add_argument(
        "--max-readouts",
        type=int,
        default=DEFAULT_MAX_READOUTS,
        metavar="N",
        help="the ceiling of a search by time (a clock or --move-time); without either, a move is --readouts "
        f"readouts (default {DEFAULT_MAX_READOUTS})",
    )
    add_search_arguments(parser)
    return cmd.run(argv, serve_on_stdout)


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The root search and the leaves a batch of a model's server (`minigo gtp`, `minigo analysis`)."""
    parser.add_argument(
        "--search",
        choices=("puct", "gumbel", "config"),
        default="puct",
        help="root search: puct (default: GUI play and analysis at hundreds of readouts and more), gumbel "
        "(Gumbel AlphaZero, built for self-play's few readouts), config (the config's selfplay.search)",
    )
    parser.add_argument(
        "--parallel-readouts",
        type=int,
        default=None,
        metavar="N",
        help="leaves a search sends to the network at once (virtual loss when > 1; more DSP cores need "
        "bigger batches); default 8 with --search puct, else the config's evaluate.parallel_readouts (8)",
    )


def play_search(args: argparse.Namespace, readouts: int) -> SearchSettings:
    """The search settings of a model's server from the command line; the run config (`--config`) fills what
    it leaves out (`config.play_settings`), else `SearchSettings`' defaults. GUI play and analysis default to
    PUCT with 8 leaves a batch (docs/GTP.md says why); `--search config` keeps the config's search."""
    readouts = max(1, readouts)
    base = (
        play_settings(load_config(args.config), readouts)
        if args.config
        else SearchSettings(readouts=readouts)
    )
    threshold = base.resign_threshold if args.resign_threshold is None else args.resign_threshold
    root = base.search if args.search == "config" else args.search
    parallel = args.parallel_readouts
    if parallel is None and args.search == "puct":
        parallel = 8
    return replace(
        base,
        search=root,
        resign_threshold=threshold,
        move_time=None if args.move_time is None else max(0.0, args.move_time) / 1000.0,
        max_readouts=max(1, args.max_readouts),
        parallel_readouts=base.parallel_readouts if parallel is None else max(1, parallel),
    )


def serve_on_stdout(args: argparse.Namespace) -> int:
    preempt.end_with_parent()  # a GUI that ends the shell it started this from ends this too
    # Only protocol may reach stdout: everything else the library prints goes to stderr.
    real_stdout = sys.stdout
    stdout = real_stdout.buffer
    sys.stdout = sys.stderr
    try:
        return _serve(args, stdout)
    finally:
        sys.stdout = real_stdout


def _serve(args: argparse.Namespace, stdout: IO[bytes]) -> int:
    try:
        if args.model == "random" or args.model.startswith("uct:"):
            size = 9
            if args.config:
                size = load_config(args.config).board_size
            if args.model == "random":
                player, name = RandomPlayer(), "MiniGo-random"
            else:
                spec = PlayerSpec.parse(args.model)  # PlayerSpecError: exit status 2, the accepted form named
                player, name = UCTPlayer(spec.playouts), f"MiniGo-uct{spec.playouts}"
                if spec.random_percent is not None:  # uct:N+rP: P% of its moves random's
                    player = MixedPlayer(player, spec.random_percent, spec.text)
                    name += f"+r{spec.random_percent:g}"
            server = GTPServer(
                player, board_size=size, komi=7.5 if args.komi is None else args.komi, name=name
            )
        else:
            readouts = args.readouts
            backend = args.backend
            if args.config and (readouts is None or backend is None):
                cfg = load_config(args.config)
                readouts = readouts or cfg.evaluate.readouts
                backend = backend or cfg.model.backend
            server = build_model_server(
                args.model,
                play_search(args, readouts or 200),
                backend=backend or "dsp",
                threads=max(1, args.threads or available_cores()),
                config=args.config,
                komi=args.komi,
            )
    except Exception as exc:  # noqa: BLE001 - start-up errors: one clear line, exit status 2
        log.error("%s", exc)
        return 2
    log.info("ready (%s)", server.version)
    try:
        return server.serve(sys.stdin.buffer, stdout)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    finally:
        if server.player is not None:
            server.player.close()
