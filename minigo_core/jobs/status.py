"""`minigo status ROOT`: one line per generation of a run, from its files alone, then what is left to do.

    minigo status ROOT [--json]
    minigo status ROOT --breakdown [--per-generation] [--cores N] [--until-last-model] [--json]

The rows and the table are `minigo_core.report.status`'s; `--breakdown` prints where the run's
core-seconds went instead (self-play games, training steps, job start-up, window, evaluation, other jobs,
scheduling, idle), `minigo_core.report.breakdown`'s.
"""

from __future__ import annotations

import argparse
import json
import time

from minigo_core.base.command import Command
from minigo_core.report import breakdown
from minigo_core.report.status import collect, describe_next, format_table, load_run_config


def show(args: argparse.Namespace) -> None:
    if args.breakdown:
        result = breakdown.collect(args.root, cores=args.cores, until_last_model=args.until_last_model)
        if args.json:
            data = result.to_json()
            if not args.per_generation:
                data.pop("generations")
            print(json.dumps(data, indent=1, sort_keys=True))
        else:
            print(breakdown.format_table(result, per_generation=args.per_generation))
        return
    cfg = load_run_config(args.root)
    rows = collect(cfg)
    if args.json:
        for row in rows:
            print(json.dumps(row.__dict__, sort_keys=True))
        return
    print(format_table(cfg, rows))
    text, finished = describe_next(cfg)
    print(f"next: {text}" + ("" if finished else f" (as of {time.strftime('%H:%M:%S')})"))


def cli_main(argv: list[str]) -> int:
    cmd = Command("status", "One line per generation of a run, from its files alone.")
    cmd.parser.add_argument("root", help="the run directory (config key 'root')")
    cmd.parser.add_argument("--json", action="store_true", help="print the rows as JSON lines instead")
    cmd.parser.add_argument(
        "--breakdown", action="store_true", help="where the run's core-seconds went, from its files alone"
    )
    cmd.parser.add_argument(
        "--per-generation", action="store_true", help="with --breakdown: one row per generation too"
    )
    cmd.parser.add_argument(
        "--cores", type=int, default=None, help="with --breakdown: the cores the run had (default: its log's)"
    )
    cmd.parser.add_argument(
        "--until-last-model",
        action="store_true",
        help="with --breakdown: the learning loop alone, up to the newest model file (no final matches)",
    )
    return cmd.run(argv, show)
