"""Window parts benchmark: `python -m minigo_core.bench window_parts [--games 896] [--window 3] ...`.

What turning a generation's games into training windows costs, two ways, on the same synthetic games (valid
game files with job records, as self-play writes them), measured in one run:

(a) without parts: the games-complete check (`games_complete.read_games`: read, SHA-256, metadata), then each
    window reads and decodes the game files of its W generations itself;
(b) with parts: games-complete checks each generation and samples it once for its W windows
    (`parts.write_parts`, `commit`), then each window reads its parts.

Per generation of a steady run: (a) one check + one window, (b) one `write_parts` + one window. Printed: CPU
seconds (the process's; one reader, `window.read_threads: 1`) and wall seconds of each, best of `--repeat`,
and the ratios. `write_generation()` writes a generation of synthetic games with job records (also for tests).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

from minigo_core.base import config as config_mod
from minigo_core.base.machine import cpu_model
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.data import gamefile, games_complete, jobrecord, layout, pack, parts, storage, window
from minigo_core.data.schedule import selfplay_jobs


def write_generation(cfg: config_mod.RunConfig, generation: int, max_moves: int, policy: bool = True) -> None:
    """`cfg.selfplay.games` synthetic game files of `generation` (random legal moves, at most `max_moves`;
    every position recorded; with `policy` a dense Gumbel-like policy target, as the default run's games
    store) and their jobs' records, as self-play writes them."""
    rng = np.random.default_rng([cfg.seed, generation, 99])
    for job, games in enumerate(selfplay_jobs(cfg)):
        files = []
        for game in games:
            record = synthetic_game(random_moves(cfg.board_size, rng, max_moves), cfg.board_size, rng,
                                    cfg.features, recorded_fraction=1.0)  # fmt: skip
            record.metadata["result"]["string"] = "B+R" if record.winner == 1 else "W+R"
            if policy:
                record.policy = record.visits + rng.random(record.visits.shape).astype(np.float32)
            url = layout.game_path(cfg.root, generation, game)
            data = gamefile.game_bytes(record)
            os.makedirs(os.path.dirname(url), exist_ok=True)
            with open(url, "wb") as handle:  # no per-file fsync (write_game's): thousands of files
                handle.write(data)
            meta = gamefile.metadata_from_bytes(data, url)
            files.append(jobrecord.file_entry(url, game, len(data), storage.sha256_bytes(data), meta))
        record = jobrecord.make_record(generation=generation, first_game=games.start, games=len(games),
                                       model_url="bench", model_sha256="00", engine="synthetic", files=files,
                                       attempt={})  # fmt: skip
        jobrecord.write_record(layout.selfplay_job_path(cfg.root, generation, job), record)


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `fn()`, each the best of `repeat` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def _config(root: str, args: argparse.Namespace) -> config_mod.RunConfig:
    window = {"generations": args.window, "sample_fraction": args.sample_fraction, "read_threads": 1}
    selfplay = {"games": args.games, "games_per_job": max(1, args.games // 2)}
    return config_mod.from_dict({"root": root, "seed": 1, "board_size": args.board_size, "features": "agz",
                                 "generations": args.window + 1, "window": window, "train": {"ranks": 1},
                                 "selfplay": selfplay})  # fmt: skip


def run(args: argparse.Namespace, scratch: str) -> dict[str, tuple[float, float]]:
    """The measurements (CPU s, wall s) by step; prints the table."""
    cfg = _config(os.path.join(scratch, "run"), args)
    gens = list(range(args.window))
    t0 = time.perf_counter()
    for g in gens:
        write_generation(cfg, g, args.max_moves)
    size = sum(os.path.getsize(url) for g in gens for url in pack.game_urls(cfg.root, g))
    print(f"CPU: {cpu_model()}")
    print(f"{len(gens)} generations x {args.games} games ({args.board_size}x{args.board_size}, at most "
          f"{args.max_moves} moves, every position recorded), {size / 2**20:.1f} MiB of game files, "
          f"written in {time.perf_counter() - t0:.0f} s; window W = {args.window}, sample_fraction "
          f"{args.sample_fraction}, one reader; best of {args.repeat}")  # fmt: skip
    out = os.path.join(scratch, "w")
    m: dict[str, tuple[float, float]] = {}
    m["check"] = _timed(lambda: games_complete.read_games(cfg, 0, 1), args.repeat)
    m["window_files"] = _timed(lambda: window.build_window(cfg, args.window, out), args.repeat)

    def write_all() -> None:
        for g in gens:
            parts.commit(cfg, g, parts.write_parts(cfg, g, 1).manifest)

    cpu, wall = _timed(write_all, args.repeat)
    m["write_parts"] = (cpu / len(gens), wall / len(gens))
    built: dict = {}
    m["window_parts"] = _timed(lambda: built.update(window.build_window(cfg, args.window, out)), args.repeat)
    assert all(s["rows"] == "parts" for s in built["sources"]), built["sources"]
    manifests = [json.loads(storage.read_bytes(layout.parts_manifest_path(cfg.root, g))) for g in gens]
    _print(m, built, float(np.mean([sum(f["bytes"] for f in p["files"]) for p in manifests])))
    return m


def _print(m: dict[str, tuple[float, float]], built: dict, part_bytes: float) -> None:
    print(f"{'step':<44} {'CPU s':>8} {'wall s':>8}")
    rows = [("(a) games-complete check, one generation", "check"), ("(a) window from the game files (W gens)",
            "window_files"), ("(b) games-complete check + parts, one gen", "write_parts"),
            ("(b) window from parts (W gens)", "window_parts")]  # fmt: skip
    for label, key in rows:
        print(f"{label:<44} {m[key][0]:8.3f} {m[key][1]:8.3f}")
    today = [m["check"][i] + m["window_files"][i] for i in (0, 1)]
    parted = [m["write_parts"][i] + m["window_parts"][i] for i in (0, 1)]
    print(f"per generation, (a) check + window:          {today[0]:8.3f} {today[1]:8.3f}")
    print(f"per generation, (b) check + parts + window:  {parted[0]:8.3f} {parted[1]:8.3f}")
    print(f"ratio (b) / (a), per generation: CPU {parted[0] / today[0]:.2f}, wall {parted[1] / today[1]:.2f}")
    print(f"ratio window job alone (b) / (a): CPU {m['window_parts'][0] / m['window_files'][0]:.2f}, "
          f"wall {m['window_parts'][1] / m['window_files'][1]:.2f}")  # fmt: skip
    extra = m["write_parts"][1] - m["check"][1]
    print(f"games-complete's wall grows by {extra:.3f} s a generation (on the critical path, as the window's "
          f"drop of {m['window_files'][1] - m['window_parts'][1]:.3f} s is)")  # fmt: skip
    print(f"window: {built['rows']} rows; parts: {part_bytes / 2**20:.1f} MiB a generation on disk")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m minigo_core.bench window_parts", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--games", type=int, default=896, help="games per generation [896: the default run]")
    p.add_argument("--board-size", type=int, default=9)
    p.add_argument("--window", type=int, default=3, help="W, window.generations [3]")
    p.add_argument("--sample-fraction", type=float, default=0.25)
    p.add_argument("--max-moves", type=int, default=100, help="moves per game at most [100]")
    p.add_argument("--repeat", type=int, default=3, help="best of this many timings [3]")
    p.add_argument("--tmp", default=None, help="scratch directory (default a fresh temporary directory)")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)  # (a)'s windows say, for each generation, that it has no parts
    scratch = tempfile.mkdtemp(prefix="minigo-bench-parts-", dir=args.tmp)
    try:
        run(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
