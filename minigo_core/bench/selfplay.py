"""Self-play benchmark: `python -m minigo_core.bench selfplay [--config C] [--games G] [--backend dsp|torch]`.

Measures on the given config (default `config.yaml`, 9x9) with a freshly initialised model:
- readouts per second and moves per second of in-process self-play games;
- where the time goes: the network (`net.predict`), feature planes + symmetry, and the search's own Python
  (tree walk, expansion, backup, Go rules) -- the target is search overhead <= 25% of self-play time;
- the job's fixed start-up cost: a real `minigo selfplay` process, from process start to its first move
  (imports, config, model load), against the wall time of one game -- target <= 10%;
- bytes per recorded position on disk for 9x9 and 19x19 games (targets <= 150 and <= 700).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time


def _play(net, cfg, games: int, generation: int, model_url: str, out_dir: str) -> dict:
    from minigo_core.gamefile import write_game
    from minigo_core.selfplay import GameTiming, play_game

    totals = dict(wall_s=0.0, search_s=0.0, network_s=0.0, features_s=0.0, readouts=0, moves=0, bytes=0,
                  positions=0, files=0)
    for game in range(games):
        timing = GameTiming()
        record = play_game(net, cfg, generation, game, model_url, timing=timing)
        size = write_game(os.path.join(out_dir, f"game{game:05d}.arrow"), record)
        for key in ("wall_s", "search_s", "network_s", "features_s", "readouts", "moves"):
            totals[key] += getattr(timing, key)
        totals["bytes"] += size
        totals["positions"] += record.num_positions
        totals["files"] += 1
    return totals


def _startup(config: str, model_url: str, backend: str, threads: int, out_dir: str) -> dict:
    """Run one real `minigo selfplay` job; its timing sidecar holds process start -> first move."""
    from minigo_core.gamefile import timing_path

    out = os.path.join(out_dir, "startup", "game00000.arrow")
    argv = [sys.executable, "-m", "minigo_core.cli", "selfplay", "--config", config, "--model", model_url,
            "--generation", "0", "--game", "0", "--out", out, "--backend", backend, "--threads", str(threads)]
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    t0 = time.time()
    subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    process_wall = time.time() - t0
    with open(timing_path(out)) as f:
        timing = json.load(f)
    timing["process_wall_s"] = process_wall
    return timing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigo_core.bench selfplay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="config.yaml", help="run config (default: config.yaml)")
    parser.add_argument("--games", type=int, default=2, help="in-process games on the config's board (default 2)")
    parser.add_argument("--backend", choices=("dsp", "torch"), default=None, help="default: model.backend")
    parser.add_argument("--threads", type=int, default=1, help="DSP cores / torch threads (default 1)")
    parser.add_argument("--games-19", type=int, default=1, help="19x19 games for the file-size figure (0: skip)")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
    args = parser.parse_args(argv)

    import torch

    from minigo_core import config as config_mod
    from minigo_core import model

    torch.set_num_threads(args.threads)
    cfg = config_mod.load_config(args.config)
    backend = args.backend or cfg.model.backend
    s = cfg.selfplay
    print(f"self-play benchmark: {cfg.board_size}x{cfg.board_size}, {cfg.model.blocks} blocks x "
          f"{cfg.model.filters} filters, {cfg.features}; readouts {s.readouts} on {s.full_search_fraction:g} of "
          f"moves, {s.fast_readouts} on the rest; batches of {s.parallel_readouts}; backend {backend}, "
          f"{args.threads} thread(s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    with tempfile.TemporaryDirectory(prefix="minigo-bench-selfplay-") as tmp:
        model_url = os.path.join(tmp, "gen0000.pt")
        net = model.random_model(model.ModelConfig.from_run(cfg), cfg.seed, backend="torch")
        model.save_model(model_url, net, {"generation": 0, "kind": "benchmark"})
        net = model.load_model(model_url, backend=backend, threads=args.threads)

        t = _play(net, cfg, args.games, 0, model_url, os.path.join(tmp, "games9"))
        other = t["search_s"] - t["network_s"] - t["features_s"]
        overhead = (t["wall_s"] - t["network_s"]) / t["wall_s"]
        print(f"\n{args.games} games, {t['moves']} moves, {t['readouts']} readouts in {t['wall_s']:.2f}s:")
        print(f"  readouts/s {t['readouts'] / t['wall_s']:8.0f}    moves/s {t['moves'] / t['wall_s']:6.1f}    "
              f"game wall time {t['wall_s'] / args.games:.2f}s")
        print(f"  network (net.predict)        {t['network_s']:7.2f}s  {t['network_s'] / t['wall_s']:6.1%}  "
              f"({1e3 * t['network_s'] / max(1, t['readouts'] / s.parallel_readouts):.2f} ms per batch)")
        print(f"  features + symmetry          {t['features_s']:7.2f}s  {t['features_s'] / t['wall_s']:6.1%}")
        print(f"  tree search + Go rules       {other:7.2f}s  {other / t['wall_s']:6.1%}  "
              f"({1e6 * other / t['readouts']:.0f} us per readout)")
        print(f"  game loop (outside search)   {t['wall_s'] - t['search_s']:7.2f}s")
        print(f"  search overhead (all but the network): {overhead:.1%}   target <= 25%: "
              f"{'met' if overhead <= 0.25 else 'NOT met'}")
        per_pos9 = t["bytes"] / max(1, t["positions"])
        print(f"  game files: {t['bytes'] / t['files']:.0f} bytes per game, {t['positions']} positions recorded, "
              f"{per_pos9:.0f} bytes per recorded 9x9 position   target <= 150: "
              f"{'met' if per_pos9 <= 150 else 'NOT met'}")

        if not args.no_startup:
            cfg_path = os.path.abspath(args.config)
            st = _startup(cfg_path, model_url, backend, args.threads, tmp)
            ratio = st["startup_s"] / st["game_wall_s"]
            print(f"\nstart-up of a `minigo selfplay` job: {st['startup_s']:.2f}s from process start to first move "
                  f"(of which {st['first_move_s']:.2f}s the first search); that game took "
                  f"{st['game_wall_s']:.2f}s ({st['moves']} moves), the whole process {st['process_wall_s']:.2f}s")
            print(f"  start-up / game wall time: {ratio:.1%}   target <= 10%: {'met' if ratio <= 0.10 else 'NOT met'}")

        if args.games_19 > 0:
            cfg19 = dataclasses.replace(cfg, board_size=19)
            net19 = model.random_model(model.ModelConfig.from_run(cfg19), cfg.seed, backend=backend)
            t19 = _play(net19, cfg19, args.games_19, 0, "gen0000-19x19.pt", os.path.join(tmp, "games19"))
            per_pos19 = t19["bytes"] / max(1, t19["positions"])
            print(f"\n19x19 ({args.games_19} game(s), same settings): {t19['moves']} moves, {t19['positions']} "
                  f"positions recorded, {t19['bytes']} bytes, {per_pos19:.0f} bytes per recorded position   "
                  f"target <= 700: {'met' if per_pos19 <= 700 else 'NOT met'}  "
                  f"({t19['readouts'] / t19['wall_s']:.0f} readouts/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
