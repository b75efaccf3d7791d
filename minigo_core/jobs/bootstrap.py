"""`minigo bootstrap --config C --out MODEL [--seed S]`: generation 0, a randomly initialised model file."""

from __future__ import annotations

import argparse

from minigo_core.base.command import Command
from minigo_core.data import storage
from minigo_core.nn.model import ModelConfig, random_model, save_model


def bootstrap(args: argparse.Namespace) -> None:
    run_cfg = Command.config(args)
    seed = run_cfg.seed if args.seed is None else args.seed
    cfg = ModelConfig.from_run(run_cfg)
    net = random_model(cfg, seed)
    provenance = {
        "generation": 0,
        "parent": None,
        "data": [],
        "seed": int(seed),
        "kind": "random initialisation",
    }
    storage.remove_stale_temporaries([args.out])  # what a killed attempt left
    save_model(args.out, net, provenance)
    n_params = sum(p.numel() for p in net.parameters())
    print(
        f"wrote {args.out}: generation 0, {cfg.board_size}x{cfg.board_size}, {cfg.blocks} blocks x "
        f"{cfg.filters} filters, {cfg.feature_set} features, {n_params} parameters, seed {seed}"
    )


def cli_main(argv: list[str] | None = None) -> int:
    cmd = Command(
        "bootstrap", "Generation 0: a model file with random weights (from the run seed).", errors=(OSError,)
    )
    cmd.add_config(help="run config YAML")
    cmd.parser.add_argument(
        "--out", required=True, help="model file to write (e.g. {root}/models/gen0000.safetensors)"
    )
    cmd.parser.add_argument("--seed", type=int, default=None, help="weight seed (default: the run seed)")
    return cmd.run(argv, bootstrap)
