"""`minigo window`: build generation g's sample window (the logic is `minigo_core.data.window`)."""

from __future__ import annotations

import argparse
import sys

from minigo_core.base import config as config_mod
from minigo_core.base.command import Command, UsageError
from minigo_core.data import layout
from minigo_core.data.window import WindowError, build_window, plan_window


def cli_main(argv: list[str] | None = None) -> int:
    cmd = Command(
        "window",
        "Sample the last W generations' games into N_train shuffled, compressed shards and a manifest.",
        errors=(WindowError,),
    )
    cmd.add_config()
    parser = cmd.parser
    parser.add_argument(
        "--generation", type=int, required=True, help="generation g whose window to build (>= 1)"
    )
    parser.add_argument(
        "--out-dir", default=None, help="where shards and manifest go (default {root}/window/genGGGG)"
    )
    parser.add_argument("--ranks", type=int, default=None, help="number of shards (default train.ranks)")
    parser.add_argument(
        "--tmp-dir", default=None, help="local scratch for the shuffle buckets (default $TMPDIR)"
    )
    parser.add_argument(
        "--workers",
        choices=["processes", "threads"],
        default="processes",
        help="window.read_threads readers as processes (CPU-bound replay, default) or threads",
    )
    parser.add_argument("--dry-run", action="store_true", help="count the game files and print the plan only")
    return cmd.run(argv, lambda args: _window_command(cmd.config(args), args))


def _window_command(cfg: config_mod.RunConfig, args: argparse.Namespace) -> None:
    if args.ranks is not None and args.ranks < 1:
        raise UsageError(f"--ranks must be at least 1, got {args.ranks}")
    out_dir = args.out_dir or layout.window_dir(cfg.root, args.generation)
    if args.dry_run:
        plan = plan_window(cfg, args.generation, args.ranks)
        print(
            f"generation {args.generation}: {len(plan.files)} game files in generations {plan.generations}; "
            f"at most {plan.max_rows} examples; {plan.shards} shards to {out_dir}"
        )
        return
    build_window(cfg, args.generation, out_dir, ranks=args.ranks, tmp_dir=args.tmp_dir, workers=args.workers)


if __name__ == "__main__":
    sys.exit(cli_main())
