"""`minigo status ROOT`: one line per generation of a run, from its files alone, then what is left to do.

    minigo status ROOT [--json]

The rows and the table are `minigo_core.report.status`'s.
"""

from __future__ import annotations

import argparse
import json
import time

from minigo_core.base.command import Command
from minigo_core.report.status import collect, describe_next, format_table, load_run_config


def show(args: argparse.Namespace) -> None:
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
    return cmd.run(argv, show)
