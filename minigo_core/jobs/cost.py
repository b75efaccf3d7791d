"""`minigo cost --config C`: what a run of config C costs, measured on this CPU before it runs.

    minigo cost --config config/paper.yaml [--moves-per-game M] [--probe-moves P] [--json]

Per generation (one with a full window) and for the whole run: self-play core-hours and the time of one
self-play job, training time by rank count, evaluation core-hours (model side), files created and kept, bytes
on disk. The per-unit costs are measured here in a few seconds to a minute (a probe self-play job of the
config's net, a few training steps, the probe's files written); the method and its assumptions are
`minigo_core.selfplay.cost`'s.
"""

from __future__ import annotations

import argparse
import json

from minigo_core.base.command import Command, UsageError
from minigo_core.selfplay import cost


def cost_of_run(args: argparse.Namespace) -> None:
    cfg = Command.config(args)
    n = cfg.board_size
    moves = cost.default_moves(n) if args.moves_per_game is None else args.moves_per_game
    if not 1 <= moves <= 2 * n * n:
        raise UsageError(f"--moves-per-game {moves}: a {n}x{n} game has 1 to {2 * n * n} moves")
    if args.probe_moves < 2:
        raise UsageError(f"--probe-moves {args.probe_moves}: the probe needs at least 2 moves")
    measured = cost.measure(cfg, probe_moves=args.probe_moves)
    run = cost.run_cost(cfg, measured, moves, packed=cost.packs(cfg))
    if args.json:
        print(json.dumps(cost.to_json(cfg, measured, moves, run), indent=1, sort_keys=True))
    else:
        print(cost.format_cost(cfg, args.config, measured, moves, run))


def cli_main(argv: list[str]) -> int:
    cmd = Command("cost", "What a run of a config costs, measured on this CPU before it runs.")
    cmd.add_config(help="run config YAML (e.g. config/paper.yaml)")
    cmd.parser.add_argument(
        "--moves-per-game",
        type=int,
        default=None,
        help="moves a game (default 0.75 N^2: 61 on 9x9, 271 on 19x19)",
    )
    cmd.parser.add_argument("--probe-moves", type=int, default=8, help="moves of each probe game (default 8)")
    cmd.parser.add_argument("--json", action="store_true", help="print the costs as one JSON object")
    return cmd.run(argv, cost_of_run)
