"""GUI analysis speed: `python -m minigo_core.bench analysis [--model M] [--seconds S] [--moves K]`.

What `lz-analyze` runs (`search.analysis.Ponder` for S seconds on one position) on the compiled searcher, the
search `minigo gtp`'s genmove plays (PUCT, 8 leaves a network batch, by default), against the baseline
measured in the same run: the reference search (`mcts.py`, the same network through the fused inference
engine, one leaf a batch as the config says), which analysis ran before. Prints the root visits a second of
each row and its ratio to the baseline, the tree's nodes, the CPU and the model. Without `--model`, a random
net of the default config's shape (`config.yaml`); the position: K moves of a fixed random opening (seed 7).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from minigo_core.base.config import load_config, play_settings
from minigo_core.base.machine import cpu_model
from minigo_core.base.project_files import project_dir
from minigo_core.game import go
from minigo_core.gtp.analysis import Analysis, Ponder
from minigo_core.jobs.gtp import available_cores
from minigo_core.play.players import ModelPlayer, load_network


def opening(board_size: int, moves: int, seed: int = 7) -> go.Position:
    """`moves` random legal moves (not filling the mover's own eyes, no pass) from the empty board."""
    rng = np.random.default_rng(seed)
    position = go.Position(board_size)
    for _ in range(moves):
        legal = position.all_legal_moves()[:-1] & ~position.eyeish(position.to_play).ravel()
        choices = np.flatnonzero(legal)
        if len(choices) == 0:
            break
        position = position.play_move(divmod(int(rng.choice(choices)), board_size))
    return position


def ponder_rate(player: ModelPlayer, position: go.Position, seconds: float) -> tuple[float, int, int]:
    """Root visits a second of `seconds` of pondering (as lz-analyze does), the root's visits and the tree's
    nodes at the end."""
    analysis = Analysis(player, position.board_size, position.komi, seed=1)
    analysis.start(position)
    before, start = analysis.visits, time.perf_counter()
    ponder = Ponder(analysis, 0.0, lambda: None)
    ponder.start()
    time.sleep(seconds)
    ponder.stop()
    took = time.perf_counter() - start
    return (analysis.visits - before) / took, analysis.visits, analysis.tree_nodes


def _default_model(folder: Path) -> str:
    from minigo_core.nn.model import ModelConfig, random_model, save_model  # lazy: torch only without --model

    cfg = ModelConfig.from_run(load_config(str(project_dir() / "config.yaml")))
    path = folder / "random.safetensors"
    save_model(str(path), random_model(cfg, 1), {"generation": 0, "kind": "random initialisation"})
    return str(path)


ROWS = (  # (label, engine, root search, leaves a batch, DSP cores: None = every core)
    ("reference search (mcts.py), the baseline", "python", None, None, 1),
    ("compiled, PUCT, 8 leaves a batch, 1 core", "compiled", "puct", 8, 1),
    ("compiled, PUCT, 8 leaves a batch, all cores", "compiled", "puct", 8, None),
    ("compiled, the config's root search, 1 leaf", "compiled", None, None, 1),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench analysis", description=__doc__.split("\n")[0]
    )
    p.add_argument("--model", help="model file (default: a random net of config.yaml's shape)")
    p.add_argument("--seconds", type=float, default=4.0, help="seconds of pondering per row (default 4)")
    p.add_argument("--moves", type=int, default=10, help="moves of the fixed opening before the position")
    p.add_argument(
        "--rounds", type=int, default=2, help="rounds over the rows (the best of each row is kept)"
    )
    args = p.parse_args(argv)
    cores = available_cores()
    run_cfg = load_config(str(project_dir() / "config.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or _default_model(Path(tmp))
        best: dict[str, tuple[float, int, int]] = {}
        for _ in range(max(1, args.rounds)):  # interleaved, so a busy moment of the machine hits every row
            for label, engine_name, root, parallel, threads in ROWS:
                net = load_network(model, "dsp", threads or cores, engine_name)
                search = play_settings(run_cfg, run_cfg.evaluate.readouts)
                search = replace(search, search=root or search.search,
                                 parallel_readouts=parallel or search.parallel_readouts)  # fmt: skip
                player = ModelPlayer(net, search, "model", engine_name)
                player.new_game(net.cfg.board_size, run_cfg.komi, 1)
                position = opening(net.cfg.board_size, args.moves)
                result = ponder_rate(player, position, args.seconds)
                if label not in best or result[0] > best[label][0]:
                    best[label] = result
        shape = f"{net.cfg.blocks}x{net.cfg.filters}, {net.cfg.board_size}x{net.cfg.board_size}"
    print(f"CPU: {cpu_model()} ({cores} cores); model: {args.model or 'random'} ({shape}); lz-analyze's "
          f"pondering, {args.seconds:g} s a row, best of {args.rounds}; the config's root search: "
          f"{run_cfg.selfplay.search}")  # fmt: skip
    base = best[ROWS[0][0]][0]
    for label, *_ in ROWS:
        rate, visits, nodes = best[label]
        print(f"  {label:<46} {rate:>9,.0f} root visits/s  ({rate / max(base, 1e-9):4.1f}x)   root "
              f"{visits:>7,} visits, tree {nodes:>7,} nodes")  # fmt: skip
    return 0
