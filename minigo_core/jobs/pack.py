"""Pack one generation that no window reads any more: its game files, job records and self-play logs into
`games/genGGGG.pack.arrow`, verified, then the loose files deleted; then its `games/genGGGG.packed.json`.

    minigo pack --config ROOT/config.yaml --generation G [--out MARKER]

Safe to kill anywhere and to rerun (a rerun finishes the job). The format, the checks and the states a kill
can leave are `minigo_core.data.pack`'s; `minigo unpack` writes the loose files back.
"""

from __future__ import annotations

import argparse

from minigo_core.base.command import Command
from minigo_core.base.config import load_config
from minigo_core.data import layout
from minigo_core.data import pack as packing


def pack(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    summary = packing.pack_generation(cfg, args.generation)
    out = args.out or layout.packed_marker_path(cfg.root, args.generation)
    packing.write_packed_marker(out, summary)
    print(
        f"generation {args.generation}: {summary['games']} games, {summary['job_records']} job records and "
        f"{summary['logs']} logs in {layout.pack_path(cfg.root, args.generation)}"
    )
    return 0


def cli_main(argv: list[str]) -> int:
    cmd = Command("pack", __doc__.split("\n\n")[0], errors=(packing.PackError, OSError))
    cmd.add_config(help="the run's effective config ({root}/config.yaml)")
    cmd.parser.add_argument("--generation", type=int, required=True)
    cmd.parser.add_argument("--out", help="the marker to write (default: {root}/games/genGGGG.packed.json)")
    return cmd.run(argv, pack)
