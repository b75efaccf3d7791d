"""Unpack one generation: write back the game files, job records and self-play logs its pack holds (the same
bytes and modification times), then delete its `games/genGGGG.packed.json` and the pack.

    minigo unpack --config ROOT/config.yaml --generation G

What to do before rerunning a packed generation's self-play (README: "Rerunning one generation"). Safe to
kill and rerun: the pack goes last. The logic is `minigo_core.data.pack.unpack_generation`.
"""

from __future__ import annotations

import argparse

from minigo_core.base.command import Command
from minigo_core.base.config import load_config
from minigo_core.data import layout
from minigo_core.data import pack as packing


def unpack(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    written = packing.unpack_generation(cfg, args.generation)
    print(
        f"generation {args.generation}: {written} files written back "
        f"({layout.games_dir(cfg.root, args.generation)}, its self-play logs); the pack is gone"
    )
    return 0


def cli_main(argv: list[str]) -> int:
    cmd = Command("unpack", __doc__.split("\n\n")[0], errors=(packing.PackError, OSError))
    cmd.add_config(help="the run's effective config ({root}/config.yaml)")
    cmd.parser.add_argument("--generation", type=int, required=True)
    return cmd.run(argv, unpack)
