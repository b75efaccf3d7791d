"""A player's readouts a second by leaves a network batch: `python -m minigo_core.bench play_batch --model M`.

    python -m minigo_core.bench play_batch --model runs/local/models/gen0048.safetensors \\
        [--config config.yaml] [--readouts 256] [--parallel 1,2,4,8,16] [--positions 8] [--seed 1]

A player's search (a match, a rating, GTP: `evaluate.parallel_readouts`) sends its leaves to the network one
at a time or several at once: Gumbel the simulations of a phase's different considered moves (the same
search as one at a time; a batch ends with its phase of sequential halving or at a move it holds), PUCT with
MiniGo's virtual loss. Self-play batches across its games instead. One row per batch size: the CPU time of
one search of `--readouts` readouts from a fresh tree, over positions of the model's own play (it plays them
by its match search at one leaf a batch from the empty board, every `GAP`-th position kept), the microseconds
a readout, the tree's nodes a search (the distinct leaves the network evaluated) and the readouts a second
against one leaf a batch (rate), measured in the same run. Prints the CPU and the model.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from minigo_core.base.config import load_config
from minigo_core.base.machine import cpu_model
from minigo_core.base.project_files import project_dir
from minigo_core.nn import modelfile
from minigo_core.play import match
from minigo_core.search import engine

GAP = 6  # moves between the positions searched
PLAY_READOUTS = 16  # the readouts a move of the play that makes the positions


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--parallel {text!r}: integers, e.g. 1,4,8") from None
    if not sizes or min(sizes) < 1 or max(sizes) > 256:
        raise argparse.ArgumentTypeError(f"--parallel {text!r}: batch sizes in 1..256")
    return sorted(set(sizes) | {1})


def positions(net, cfg, board_size: int, count: int, seed: int) -> list[list[int]]:
    """Move lists of `count` positions of the model's own play from the empty board (fewer if it ends)."""
    settings = engine.settings_for(
        replace(match.match_search(cfg, PLAY_READOUTS), parallel_readouts=1), net.cfg.feature_set, board_size
    )
    searcher = engine.Searcher(net, settings, board_size=board_size, komi=cfg.komi, seed=seed)
    moves: list[int] = []
    out: list[list[int]] = []
    passes = 0
    while len(out) < count and passes < 2 and len(moves) < 2 * board_size**2:
        if len(moves) % GAP == 0:
            out.append(list(moves))
        move = searcher.search(moves).move
        passes = passes + 1 if move == board_size**2 else 0
        moves.append(move)
    return out


def measure(
    net, cfg, board_size: int, readouts: int, parallel: int, games: list[list[int]], seed: int
) -> dict:
    search = replace(match.match_search(cfg, readouts), parallel_readouts=parallel)
    settings = engine.settings_for(search, net.cfg.feature_set, board_size)
    cpu, nodes = 0.0, 0
    for moves in games:
        searcher = engine.Searcher(net, settings, board_size=board_size, komi=cfg.komi, seed=seed)
        start = time.process_time()
        searcher.search(moves)
        cpu += time.process_time() - start
        nodes += searcher.root_stats().tree_nodes
    n = len(games)
    return {"parallel": parallel, "ms_a_search": 1e3 * cpu / n, "us_a_readout": 1e6 * cpu / (n * readouts),
            "tree_nodes": nodes / n}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench play_batch", description=__doc__.split("\n")[0]
    )
    p.add_argument("--model", required=True, help="the model file (.safetensors)")
    p.add_argument("--config", default=str(project_dir() / "config.yaml"),
                   help="the run config whose match search the model plays")  # fmt: skip
    p.add_argument("--readouts", type=int, default=256, help="readouts a search (default 256)")
    p.add_argument("--parallel", type=parse_sizes, default=parse_sizes("1,2,4,8,16"),
                   help="leaves a network batch, a row each; 1 always runs (default 1,2,4,8,16)")  # fmt: skip
    p.add_argument("--positions", type=int, default=8, help="positions searched (default 8)")
    p.add_argument("--seed", type=int, default=1, help="the searches' seed (default 1)")
    args = p.parse_args(argv)
    if args.readouts < 1 or args.positions < 1:
        p.error("--readouts and --positions must be at least 1")
    cfg = load_config(args.config)
    board_size = modelfile.read(args.model).config.board_size
    net = engine.load_network(args.model)
    games = positions(net, cfg, board_size, args.positions, args.seed)
    print(f"CPU: {cpu_model()}; model {Path(args.model).name}, {args.readouts} readouts a search from a "
          f"fresh tree, {len(games)} positions of its own play; {cfg.selfplay.search} search")  # fmt: skip
    rows = [measure(net, cfg, board_size, args.readouts, k, games, args.seed) for k in args.parallel]
    base = rows[0]["us_a_readout"]
    print(f"{'leaves a batch':>14} {'ms a search':>12} {'us a readout':>13} {'tree nodes':>11} {'rate':>7}")
    for r in rows:
        print(f"{r['parallel']:>14} {r['ms_a_search']:>12.2f} {r['us_a_readout']:>13.1f} "
              f"{r['tree_nodes']:>11.1f} {base / r['us_a_readout']:>6.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
