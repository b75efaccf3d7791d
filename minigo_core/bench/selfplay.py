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
import math
import os
import subprocess
import sys
import tempfile
import time

from minigo_core.base import config as config_mod
from minigo_core.data.gamefile import write_game
from minigo_core.data.layout import timing_path
from minigo_core.game import go
from minigo_core.jobs.selfplay import GameTiming, play_game
from minigo_core.nn import inference, model


def _play(net, cfg, games: int, generation: int, model_url: str, out_dir: str, clock) -> dict:

    totals = dict(
        wall_s=0.0,
        search_s=0.0,
        network_s=0.0,
        features_s=0.0,
        readouts=0,
        moves=0,
        bytes=0,
        positions=0,
        files=0,
    )
    for game in range(games):
        timing = GameTiming(clock=clock)
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

    out = os.path.join(out_dir, "startup", "game00000.arrow")
    argv = [
        sys.executable,
        "-m",
        "minigo_core.cli",
        "selfplay",
        "--config",
        config,
        "--model",
        model_url,
        "--generation",
        "0",
        "--game",
        "0",
        "--out",
        out,
        "--backend",
        backend,
        "--threads",
        str(threads),
    ]
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    )
    t0 = time.time()
    subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    process_wall = time.time() - t0
    with open(timing_path(out)) as f:
        timing = json.load(f)
    timing["process_wall_s"] = process_wall
    return timing


def _report(t: dict, games: int, board_size: int, parallel_readouts: int, unit: str) -> None:
    other = t["search_s"] - t["network_s"] - t["features_s"]
    total = t["wall_s"]
    overhead = (total - t["network_s"]) / total
    batch_ms = 1e3 * t["network_s"] / max(1, t["readouts"] / parallel_readouts)

    def row(name: str, seconds: float, note: str = "") -> None:
        print(f"  {name:<29}{seconds:7.2f} {unit}  {seconds / total:6.1%}  {note}")

    print(
        f"\n{board_size}x{board_size}: {games} game(s), {t['moves']} moves, {t['readouts']} readouts in "
        f"{total:.2f} {unit}:"
    )
    print(
        f"  readouts/s {t['readouts'] / total:8.0f}    moves/s {t['moves'] / total:6.1f}    "
        f"per game {total / games:.2f} {unit}"
    )
    row("network (fused inference)", t["network_s"], f"({batch_ms:.2f} ms per batch)")
    row(
        "features + symmetry",
        t["features_s"],
        f"({1e6 * t['features_s'] / t['readouts']:.0f} us per readout)",
    )
    row("tree search + Go rules", other, f"({1e6 * other / t['readouts']:.0f} us per readout)")
    row("game loop (outside search)", total - t["search_s"])
    verdict = "met" if overhead <= 0.25 else "NOT met"
    print(f"  search overhead (all but the network): {overhead:.1%}   target <= 25%: {verdict}")
    per_position = t["bytes"] / max(1, t["positions"])
    limit = 150 if board_size <= 9 else 700
    print(
        f"  game files: {t['bytes'] / t['files']:.0f} bytes per game, {t['positions']} positions recorded, "
        f"{per_position:.0f} bytes per recorded position   target <= {limit}: "
        f"{'met' if per_position <= limit else 'NOT met'}"
    )


def _go_rules_share(net, cfg, model_url: str, out_dir: str, clock, other_us: float) -> None:
    """One more game, recording the Go-rules calls the search makes; then time those calls again in a loop.

    (Timing each call in place would cost a system call per call for CPU time, more than some calls take.)
    """

    calls: dict[str, list] = {"play_move": [], "all_legal_moves": []}
    originals = {name: getattr(go.Position, name) for name in calls}

    def recording(name):
        original, log = originals[name], calls[name]

        def wrapper(*args):
            log.append(args)
            return original(*args)

        return wrapper

    try:
        for name in calls:
            setattr(go.Position, name, recording(name))
        t = _play(net, cfg, 1, 1, model_url, out_dir, clock)
    finally:
        for name, original in originals.items():
            setattr(go.Position, name, original)
    per_readout = {}
    for name, log in calls.items():
        original = originals[name]
        t0 = clock()
        for args in log:
            original(*args)
        per_readout[name] = 1e6 * (clock() - t0) / t["readouts"]
    rules = sum(per_readout.values())
    print(
        f"  of the {other_us:.0f} us: go.play_move {per_readout['play_move']:.0f} us + go.all_legal_moves "
        f"{per_readout['all_legal_moves']:.0f} us per readout at least (one more game's calls re-timed in a "
        f"warm loop; in the search their caches are cold); the rest, {other_us - rules:.0f} us at most, is "
        "the tree walk, expansion and backup"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench selfplay",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", default="config.yaml", help="run config (default: config.yaml)")
    parser.add_argument(
        "--games", type=int, default=2, help="in-process games on the config's board (default 2)"
    )
    parser.add_argument("--backend", choices=("dsp", "torch"), default=None, help="default: model.backend")
    parser.add_argument("--threads", type=int, default=1, help="DSP cores / torch threads (default 1)")
    parser.add_argument(
        "--games-19", type=int, default=1, help="19x19 games for the file-size figure (0: skip)"
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
    args = parser.parse_args(argv)

    import torch  # lazy: only the torch-backend comparison needs it

    torch.set_num_threads(args.threads)
    cfg = config_mod.load_config(args.config)
    backend = args.backend or cfg.model.backend
    s = cfg.selfplay
    print(
        f"self-play benchmark: {cfg.board_size}x{cfg.board_size}, {cfg.model.blocks} blocks x "
        f"{cfg.model.filters} filters, {cfg.features}; readouts {s.readouts} on "
        f"{s.full_search_fraction:g} of "
        f"moves, {s.fast_readouts} on the rest; batches of {s.parallel_readouts}; backend {backend}, "
        f"{args.threads} thread(s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )

    with tempfile.TemporaryDirectory(prefix="minigo-bench-selfplay-") as tmp:
        model_url = os.path.join(tmp, "gen0000.safetensors")
        net = model.random_model(model.ModelConfig.from_run(cfg), cfg.seed, backend="torch")
        model.save_model(model_url, net, {"generation": 0, "kind": "benchmark"})
        net = inference.load_for_inference(model_url, backend=backend, threads=args.threads)  # what jobs use

        # One thread: count CPU seconds (steady on a shared machine); more threads: wall-clock seconds.
        clock = time.process_time if args.threads == 1 else time.perf_counter
        unit = "CPU s" if args.threads == 1 else "s"
        t = _play(net, cfg, args.games, 0, model_url, os.path.join(tmp, "games9"), clock)
        _report(t, args.games, cfg.board_size, s.parallel_readouts, unit)
        other_us = 1e6 * (t["search_s"] - t["network_s"] - t["features_s"]) / t["readouts"]
        _go_rules_share(net, cfg, model_url, os.path.join(tmp, "games9-rules"), clock, other_us)

        if not args.no_startup:
            cfg_path = os.path.abspath(args.config)
            st = _startup(cfg_path, model_url, backend, args.threads, tmp)
            ratio = st["startup_s"] / st["game_wall_s"]
            cpu_ratio = st["startup_cpu_s"] / st["game_cpu_s"]
            print(
                f"\nstart-up of a `minigo selfplay` job: {st['startup_s']:.2f}s "
                "from process start to first move "
                f"(of which {st['first_move_s']:.2f}s the first search); that game took "
                f"{st['game_wall_s']:.2f}s ({st['moves']} moves), "
                f"the whole process {st['process_wall_s']:.2f}s"
            )
            print(
                f"  in CPU seconds: start-up {st['startup_cpu_s']:.2f}, game {st['game_cpu_s']:.2f}"
                f"\n  start-up / game: {ratio:.1%} wall, {cpu_ratio:.1%} CPU   "
                f"target <= 10%: {'met' if max(ratio, cpu_ratio) <= 0.10 else 'NOT met'}"
            )
            per_job = math.ceil(max(ratio, cpu_ratio) / 0.10)
            print(
                f"  `minigo selfplay --count K` pays it once per K games: K >= {per_job} brings it under 10%"
            )

        if args.games_19 > 0:
            cfg19 = dataclasses.replace(cfg, board_size=19)
            net19 = model.random_model(model.ModelConfig.from_run(cfg19), cfg.seed, backend=backend)
            dir19 = os.path.join(tmp, "games19")
            t19 = _play(net19, cfg19, args.games_19, 0, "gen0000-19x19.safetensors", dir19, clock)
            _report(t19, args.games_19, 19, s.parallel_readouts, unit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
