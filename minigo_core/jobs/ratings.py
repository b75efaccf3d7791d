"""Ratings of a run: the fixed-scale learning curve, the run-relative Bradley-Terry fit, the time to target.

    minigo ratings --config C --out-dir DIR [--root ROOT] [--target SPEC] [--prior-draws D]

Writes `learning_curve.png` (the fixed-scale ratings `eval/gen*/ladder.json`: `report.fixed_scale`), the
run-relative Bradley-Terry fit (anchor gen0000 = 0) `elo.csv`, `elo.json` and `elo.png`,
`time_to_target.json` and `winrate.png`, and prints the fixed-scale table, then the run-relative one. The
tables are `minigo_core.report.run_elo`'s (the fit `minigo_core.rating.bradley_terry`'s), the plots
`minigo_core.report.plots`'s.
"""

from __future__ import annotations

import argparse
import json
import logging

from minigo_core.base.command import Command
from minigo_core.data import layout, storage
from minigo_core.report import fixed_scale, plots
from minigo_core.report.run_elo import (
    format_table,
    format_time_to_target,
    model_times,
    ratings_record,
    read_matches,
    rows_to_csv,
    summarise_run,
)

log = logging.getLogger(__name__)


def cli_main(argv: list[str]) -> int:
    cmd = Command("ratings", __doc__.split("\n\n")[0], errors=(OSError, ValueError))
    cmd.add_config()
    cmd.parser.add_argument(
        "--out-dir",
        required=True,
        help="where to write learning_curve.png, elo.csv, elo.json, elo.png, time_to_target.json and "
        "winrate.png",
    )
    cmd.parser.add_argument("--root", default=None, help="run root (default: the config's root)")
    cmd.parser.add_argument("--target", default=None, help="target player (default: config evaluate.target)")
    cmd.parser.add_argument(
        "--prior-draws",
        type=float,
        default=1.0,
        help="virtual draws added to every pairing that was played (default 1)",
    )
    return cmd.run(argv, write_ratings)


def write_ratings(args: argparse.Namespace) -> int:
    cfg = Command.config(args)
    root = args.root or cfg.root
    target = args.target or cfg.evaluate.target
    read = read_matches(root)
    ratings, rows, ttt = summarise_run(root, target, args.prior_draws, read)
    if not rows:
        log.warning(
            "no evaluation results under %s (gen*/vs_*.json); run `minigo evaluate` first",
            layout.evals_dir(root),
        )
    out = args.out_dir
    storage.remove_stale_temporaries([storage.join(out, name) for name in layout.RATINGS_OUTPUTS])
    storage.write_text(storage.join(out, layout.RATINGS_CSV), rows_to_csv(rows))
    storage.write_text(
        storage.join(out, layout.RATINGS_FILE), json.dumps(ratings_record(ratings, rows), indent=1) + "\n"
    )
    storage.write_text(storage.join(out, layout.TIME_TO_TARGET_FILE), json.dumps(ttt, indent=1) + "\n")
    storage.write_bytes(storage.join(out, layout.ELO_PLOT), plots.plot_elo(rows))
    storage.write_bytes(storage.join(out, layout.WINRATE_PLOT), plots.plot_winrate(ttt))
    points = fixed_scale.curve(root, model_times(root))
    rungs = fixed_scale.ladder_rungs(cfg.board_size)
    curve_png = plots.plot_learning_curve(points, rungs, cfg.board_size)
    storage.write_bytes(storage.join(out, layout.LEARNING_CURVE_PLOT), curve_png)
    print(fixed_scale.format_summary(fixed_scale.read_ratings(root), rungs, cfg.board_size))
    print("\nrun-relative Bradley-Terry fit (anchor gen0000 = 0):")
    print(format_table(rows))
    print(format_time_to_target(ttt, target))
    return 0
