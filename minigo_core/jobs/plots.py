"""The report's plots that `minigo ratings` does not draw, and the status table, from a run's files.

    minigo plots --root ROOT --out-dir ROOT/summary

Writes `loss.png` (training losses against the global step, every generation), `game_lengths.png` (self-play
game length per generation: mean and spread), `resign_false_positives.png` (per generation, with the count of
resignation-disabled games it rests on) and `status.txt` (`minigo status ROOT`). The plots are
`minigo_core.report.plots`'s, the table `minigo_core.report.status`'s.
"""

from __future__ import annotations

import argparse

from minigo_core.base.command import Command
from minigo_core.data import layout, storage
from minigo_core.report import plots, status


def write_plots(args: argparse.Namespace) -> None:
    cfg = status.load_run_config(args.root)
    markers = plots.read_markers(cfg)
    out = args.out_dir
    storage.remove_stale_temporaries([storage.join(out, name) for name in layout.PLOTS_OUTPUTS])
    storage.write_bytes(storage.join(out, layout.LOSS_PLOT), plots.plot_loss(cfg))
    storage.write_bytes(storage.join(out, layout.GAME_LENGTHS_PLOT), plots.plot_game_lengths(cfg, markers))
    storage.write_bytes(storage.join(out, layout.RESIGN_PLOT), plots.plot_resign(cfg, markers))
    table = status.format_table(cfg, status.collect(cfg))
    storage.write_text(storage.join(out, layout.STATUS_FILE), table + "\n")
    print(table)


def cli_main(argv: list[str]) -> int:
    cmd = Command("plots", __doc__.split("\n\n")[0], errors=(OSError,))
    cmd.parser.add_argument("--root", required=True, help="the run directory")
    cmd.parser.add_argument("--out-dir", required=True, help="where to write the plots ({root}/summary)")
    return cmd.run(argv, write_plots)
