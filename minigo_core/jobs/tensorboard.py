"""A run's TensorBoard events files, written again from the run's files (the jobs write them as they go).

    minigo tensorboard --root ROOT

For a run started before its jobs wrote them, or one whose job could not (a full disk: the job warned and
went on). The files and their tags are `minigo_core.report.tensorboard`'s; view them with
`tensorboard --logdir ROOT/tensorboard`.
"""

from __future__ import annotations

import argparse

from minigo_core.base.command import Command
from minigo_core.data import layout
from minigo_core.report import status, tensorboard


def write_events(args: argparse.Namespace) -> None:
    cfg = status.load_run_config(args.root)
    written = tensorboard.rebuild(cfg)
    logdir = layout.tensorboard_dir(cfg.root)
    print(f"wrote {len(written)} events files under {logdir}; view them: tensorboard --logdir {logdir}")


def cli_main(argv: list[str]) -> int:
    cmd = Command("tensorboard", __doc__.split("\n\n")[0], errors=(OSError, ValueError))
    cmd.parser.add_argument("--root", required=True, help="the run directory")
    return cmd.run(argv, write_events)
