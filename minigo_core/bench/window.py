"""Window benchmarks: `python -m minigo_core.bench window [--games-per-gen 8192] ...`.

(a) Table 1 in kind: the time for N_train readers to load their training data at the start of training, each
    reading every raw game file of the window itself (read, parse, replay, features for its share of the
    sampled positions) versus reading its own shard (one sequential read, decompress, unpack bits).
(d) window build time, peak memory and bytes per example on disk, 9x9 and 19x19, at growing window sizes (peak
    memory should stay flat as the window grows).

The window is synthetic: valid game files written with `gamefile.write_game`, their move lists taken from a
pool of random legal games (playing tens of thousands of distinct 19x19 games would take hours here) and their
visit counts drawn fresh for every file, so every file's bytes differ. Also `synthetic_game()` for tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from minigo_core.base import config as config_mod
from minigo_core.data import gamefile, layout, shards, storage, window
from minigo_core.data.sampling.positions import sample_count
from minigo_core.game import features, go


def random_moves(board_size: int, rng: np.random.Generator, max_moves: int | None = None) -> list:
    """A random legal game that does not fill its own one-point eyes; ends on two passes or the move cap."""
    max_moves = max_moves or 2 * board_size * board_size
    position = go.Position(board_size=board_size)
    moves: list = []
    passes = 0
    while len(moves) < max_moves and passes < 2:
        legal = position.all_legal_moves()
        legal[:-1] &= ~position.eyeish(position.to_play).reshape(-1)
        legal[-1] = False
        choices = np.flatnonzero(legal)
        move = None if choices.size == 0 else divmod(int(rng.choice(choices)), board_size)
        passes = passes + 1 if move is None else 0
        position = position.play_move(move)
        moves.append(move)
    return moves


def synthetic_game(
    moves: list,
    board_size: int,
    rng: np.random.Generator,
    features: str = "agz",
    komi: float = 7.5,
    recorded_fraction: float = 0.75,
    readouts: int = 800,
) -> gamefile.GameRecord:
    """A valid game record over `moves` with MCTS-like visit counts (a few moves get most of the readouts)."""
    n_moves = len(moves)
    recorded = np.flatnonzero(rng.random(n_moves) < recorded_fraction)
    n2 = board_size * board_size
    # 4..23 candidate moves per position (the played move among them), Dirichlet(0.3) shares of the readouts.
    k = rng.integers(4, 24, size=recorded.size)
    keys = rng.random((recorded.size, n2 + 1))
    played = np.array(
        [n2 if moves[i] is None else moves[i][0] * board_size + moves[i][1] for i in recorded], dtype=np.int64
    ).reshape(-1)
    keys[np.arange(recorded.size), played] = -1.0  # the played move is always a candidate
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)
    shares = rng.gamma(0.3, size=keys.shape) * (rank < k[:, None])
    shares[np.arange(recorded.size), played] += 1e-3
    shares /= shares.sum(axis=1, keepdims=True)
    visits = rng.multinomial(readouts, shares) if recorded.size else np.zeros((0, n2 + 1), dtype=np.int64)
    visits[np.arange(recorded.size), played] += 1
    winner = 1 if rng.random() < 0.5 else -1
    to_play = np.where(recorded % 2 == 0, 1, -1)
    metadata = {
        "format": gamefile.FORMAT,
        "format_version": gamefile.FORMAT_VERSION,
        "board_size": board_size,
        "komi": komi,
        "features": features,
        "result": {"winner": winner, "score": None, "resigned": True},
        "synthetic": True,
    }
    return gamefile.GameRecord(
        metadata=metadata,
        moves=list(moves),
        move_index=recorded.astype(np.int64),
        visits=visits,
        value_target=(winner * to_play).astype(np.float32),
        full_search=np.ones(recorded.size, dtype=bool),
        root_value=rng.uniform(-1, 1, recorded.size).astype(np.float32),
    )


@dataclass(frozen=True)
class SyntheticGames:
    """What `make_window_games` writes: games of random moves (at most `max_moves`; None: to the end) on a
    `board_size` board, drawn from a pool of `pool` move sequences (0: fresh moves every file), with
    `recorded_fraction` of their positions recorded, for the `features` set, from the seed `seed`."""

    board_size: int
    features: str = "agz"
    recorded_fraction: float = 0.75
    max_moves: int | None = None
    pool: int = 24
    seed: int = 0


def make_window_games(root: str, generations: list[int], games_per_gen: int, games: SyntheticGames) -> float:
    """Write synthetic game files under `{root}/games/genXXXX/`; returns seconds taken."""
    board_size, seed, pool, max_moves = games.board_size, games.seed, games.pool, games.max_moves
    features, recorded_fraction = games.features, games.recorded_fraction
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pool_moves = [random_moves(board_size, rng, max_moves) for _ in range(pool)]
    for gen in generations:
        for i in range(games_per_gen):
            moves = pool_moves[int(rng.integers(pool))] if pool else random_moves(board_size, rng, max_moves)
            record = synthetic_game(moves, board_size, rng, features, recorded_fraction=recorded_fraction)
            # game_bytes + a plain write: the files are the same, without write_game's per-file fsync, which
            # would make 40960 files take an hour on this disk.
            path = layout.game_path(root, gen, i)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(gamefile.game_bytes(record))
    return time.perf_counter() - t0


def _config(root: str, board_size: int, ranks: int, features: str) -> config_mod.RunConfig:
    return config_mod.from_dict(
        {
            "root": root,
            "board_size": board_size,
            "features": features,
            "window": {"read_threads": 2, "sample_fraction": 0.3},
            "train": {"ranks": ranks},
        }
    )


def load_raw(cfg: config_mod.RunConfig, generation: int, rank: int, ranks: int) -> tuple[float, int]:
    """One reader without shards: read every raw game file, sample, build its 1/ranks share of the rows."""

    t0 = time.perf_counter()
    rows = 0
    for i, (gen, url) in enumerate(window.game_files(cfg.root, window.window_generations(generation, 5))):
        record = gamefile.read_game(url)
        recorded = np.flatnonzero(record.full_search)
        rng = np.random.default_rng([cfg.seed, generation, gen, i])
        chosen = rng.choice(recorded.size, sample_count(recorded.size, 0.3, rng), replace=False)
        mine = recorded[chosen[(np.arange(chosen.size) + i) % ranks == rank]]
        if mine.size:
            positions = record.positions()
            features.extract_batch([positions[int(j)] for j in record.move_index[mine]], cfg.features)
            rows += mine.size
    return time.perf_counter() - t0, rows


def load_shard(url: str) -> tuple[float, int]:
    """One reader with shards: read its shard and decode every row into training arrays."""

    t0 = time.perf_counter()
    shard = shards.load_shard(url)
    rows = sum(len(ex) for ex in shard.iter_batches())
    return time.perf_counter() - t0, rows


def _build_in_subprocess(config_path: str, generation: int, out_dir: str) -> dict:
    """Build a window in a fresh process so its peak RSS is the window's alone."""
    code = (
        "import json,sys,resource;from minigo_core import config,window;"
        f"m=window.build_window(config.load_config({config_path!r}),{generation},{out_dir!r});"
        "print(json.dumps({'rows':m['rows'],'bytes_per_example':m['bytes_per_example'],'timings':m['timings'],"
        "'games':len(m['games']),'peak_rss_mb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024,"
        "'reader_peak_rss_mb':resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024}))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench window",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--games-per-gen", type=int, default=8192, help="games per generation for (a) [8192]")
    p.add_argument("--board-size", type=int, default=19, help="board size for (a) [19]")
    p.add_argument("--ranks", type=int, default=4, help="N_train readers for (a) (each timed alone)")
    p.add_argument(
        "--raw-files",
        type=int,
        default=256,
        help="raw-reader timing: time this many files and scale to the window (0: all files)",
    )
    p.add_argument("--sizes9", default="40,160,640", help="9x9 games per generation for (d) [40,160,640]")
    p.add_argument("--sizes19", default="20,80,320", help="19x19 games per generation for (d) [20,80,320]")
    p.add_argument("--skip-a", action="store_true")
    p.add_argument("--skip-d", action="store_true")
    p.add_argument("--tmp", default=None, help="scratch directory (default a fresh temporary directory)")
    args = p.parse_args(argv)
    scratch = args.tmp or tempfile.mkdtemp(prefix="minigo-bench-window-")
    try:
        if not args.skip_a:
            _bench_a(args, scratch)
        if not args.skip_d:
            _bench_d(args, scratch)
    finally:
        if args.tmp is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _bench_a(args: argparse.Namespace, scratch: str) -> None:

    root = os.path.join(scratch, "a")
    gens = [0, 1, 2, 3, 4]
    print(
        f"(a) synthetic window: {len(gens)} generations x {args.games_per_gen} games, "
        f"{args.board_size}x{args.board_size}"
    )
    shape = SyntheticGames(args.board_size, recorded_fraction=0.8, max_moves=int(0.7 * args.board_size**2),
                           pool=200)  # fmt: skip
    gen_s = make_window_games(root, gens, args.games_per_gen, shape)
    n_files = len(gens) * args.games_per_gen
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
    print(f"    generated {n_files} game files ({size / 2**20:.0f} MiB) in {gen_s:.0f} s")
    cfg = _config(root, args.board_size, args.ranks, "mlperf07" if args.board_size == 19 else "agz")
    out_dir = os.path.join(root, "window")
    t0 = time.perf_counter()
    manifest = window.build_window(cfg, 5, out_dir, workers="processes")
    build_s = time.perf_counter() - t0
    print(
        f"    window build (once, by one job): {build_s:.1f} s, {manifest['rows']} examples, "
        f"{manifest['bytes_per_example']:.0f} bytes/example, peak RSS {manifest['peak_rss_mb']:.0f} MiB"
    )
    shard_times = []
    for r in range(args.ranks):
        t, rows = load_shard(storage.join(out_dir, layout.shard_name(r)))
        shard_times.append(t)
    print(
        f"    shard load per reader: mean {np.mean(shard_times):.3f} s, max {max(shard_times):.3f} s "
        f"({rows} rows in the last)"
    )
    # Raw readers: each reads every file; time it on a prefix of the files and scale (stated below).
    files = window.game_files(root, gens)
    limit = len(files) if args.raw_files <= 0 else min(args.raw_files, len(files))
    sub_cfg = cfg
    if limit < len(files):
        sub_root = os.path.join(scratch, "a-sub")
        for gen, url in files[:limit]:
            dst = layout.game_path(sub_root, gen, int(os.path.basename(url)[4:9]))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(url, dst)
        sub_cfg = _config(sub_root, args.board_size, args.ranks, cfg.features)
    t_raw, rows_raw = load_raw(sub_cfg, 5, 0, args.ranks)
    t_io = time.perf_counter()
    for _, url in files[:limit]:
        gamefile.read_game(url)
    t_io = time.perf_counter() - t_io
    scale = len(files) / limit
    raw_est, io_est = t_raw * scale, t_io * scale
    note = f" (measured on {limit} of {len(files)} files, scaled x{scale:.0f})" if scale > 1 else ""
    print(f"    raw load per reader: {raw_est:.1f} s{note}; of which read+parse only: {io_est:.1f} s")
    print(
        f"    speed-up shard vs raw: {raw_est / np.mean(shard_times):.0f}x "
        f"(vs read+parse only: {io_est / np.mean(shard_times):.0f}x); target >= 20x"
    )


def _bench_d(args: argparse.Namespace, scratch: str) -> None:

    print("(d) window build: time, peak RSS of a fresh process, bytes per example on disk; 'packed' is the")
    print("    size of the window's examples bit-packed, which an in-memory shuffle would hold at once")
    runs = [(9, "agz", int(x)) for x in args.sizes9.split(",")]
    runs += [(19, "mlperf07", int(x)) for x in args.sizes19.split(",")]
    runs += [(19, "agz", int(args.sizes19.split(",")[0]))]
    for board_size, feats, games in runs:
        root = os.path.join(scratch, f"d{board_size}{feats}-{games}")
        # Fresh random games for every file (no pool): repeated positions would flatter the compression.
        # Random play, cut at 0.7 N^2 moves (about the length of real 19x19 self-play games).
        max_moves = int(0.7 * board_size**2)
        gens = [0, 1, 2, 3, 4]
        shape = SyntheticGames(board_size, features=feats, max_moves=max_moves, pool=0, seed=games)
        gen_s = make_window_games(root, gens, games, shape)
        cfg_path = os.path.join(root, "config.yaml")
        with open(cfg_path, "w") as fh:
            json.dump({"root": root, "board_size": board_size, "features": feats,
                       "window": {"read_threads": 2}, "train": {"ranks": 2}}, fh)  # fmt: skip
        r = _build_in_subprocess(cfg_path, 5, os.path.join(root, "window"))
        packed_mib = r["rows"] * shards.packed_width(features.num_planes(feats), board_size) / 2**20
        print(
            f"    {board_size}x{board_size} {feats:8s} {5 * games:6d} games {r['rows']:8d} examples "
            f"(packed {packed_mib:6.1f} MiB): build {r['timings']['total_s']:6.1f} s "
            f"({r['rows'] / r['timings']['total_s']:5.0f} ex/s), peak RSS {r['peak_rss_mb']:4.0f} MiB "
            f"(readers {r['reader_peak_rss_mb']:4.0f}), "
            f"{r['bytes_per_example']:6.1f} bytes/example  [games generated in {gen_s:.0f} s]"
        )
        sys.stdout.flush()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
