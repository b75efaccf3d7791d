"""Dry-run planning cost at paper scale: `python -m minigo_core.bench dag [--games 8192] [--at 100]
[--games-per-job K] [--no-pack]`.

Builds two run directories with placeholder files for the paper config (`config/paper.yaml`, 8192 games per
generation): one where only generation 0 is finished (so the workflow plans generation 1) and one where
generations 0..AT-1 are finished (so it plans generation AT): the last W generations' game files, job
records and logs loose, the older ones packed (the paper config's `storage.pack_old_generations`; with
`--no-pack`, every file loose). Then times
`snakemake -n` in each, and prints both times and their ratio (target: <= 1.2, and <= 20 s).

The run's `generations` is set above AT so that both dry runs plan a full generation (ceil(8192 / K)
self-play jobs of K = `selfplay.games_per_job` games: 128 at the paper's 64, 8192 at K = 1; games-complete,
window, train, evaluations, summary). Placeholder files are empty (JSON files hold `{}`); their
modification times increase with the generation, as in a real run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from minigo_core.base.config import load_config
from minigo_core.data import layout, schedule

REPO = Path(__file__).resolve().parents[2]


def _touch(path: str, mtime: float, text: str = "") -> None:
    with open(path, "w") as handle:
        handle.write(text)
    os.utime(path, (mtime, mtime))


def build_run(
    root: str,
    config_file: Path,
    done: int,
    games: int,
    generations: int,
    games_per_job: int | None = None,
    pack: bool | None = None,
) -> Path:
    """A run directory whose generations 0..done-1 are finished (placeholder files, increasing mtimes); with
    `storage.pack_old_generations` (or `pack`), the generations whose last window is built are packed (a
    placeholder pack and its marker instead of their game files, job records and self-play logs).

    Returns the config file to plan it with (`root.yaml` next to the run directory).
    """
    data = yaml.safe_load(config_file.read_text())
    data.update(root=root, generations=generations)
    data["selfplay"]["games"] = games
    if games_per_job is not None:
        data["selfplay"]["games_per_job"] = games_per_job
    if pack is not None:
        data.setdefault("storage", {})["pack_old_generations"] = pack
    cfg = load_config(data)
    os.makedirs(root, exist_ok=True)
    run_config = Path(root + ".yaml")
    run_config.write_text(yaml.safe_dump(data, sort_keys=False))
    t0 = time.time() - 3600 * (done + 2)
    _touch(layout.effective_config_path(root), t0, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    for g in range(done):
        t = t0 + 3600 * (g + 1)
        if g >= 1:
            window = layout.window_dir(root, g)
            os.makedirs(window, exist_ok=True)
            for rank in range(cfg.train.ranks):
                _touch(layout.shard_path(root, g, rank), t - 30)
            _touch(layout.window_manifest_path(root, g), t - 30, "{}")
            os.makedirs(layout.train_dir(root, g), exist_ok=True)
            _touch(layout.train_metrics_path(root, g), t - 1, "{}\n")
        os.makedirs(layout.model_path(root, g).rsplit("/", 1)[0], exist_ok=True)
        _touch(layout.model_path(root, g), t)
        _add_games(cfg, g, t, packed=cfg.storage.pack_old_generations and schedule.last_window(cfg, g) < done)
        if g >= 1:
            os.makedirs(layout.eval_dir(root, g), exist_ok=True)
            for path in schedule.evaluation_files(cfg, g):  # the matches and the ladder rating
                _touch(path, t + 90, "{}")
    return run_config


def _add_games(cfg, g: int, t: float, packed: bool) -> None:
    """Generation g's games: loose (a file per game, a record and a log per job) or packed (one pack)."""
    root = cfg.root
    os.makedirs(os.path.dirname(layout.complete_marker_path(root, g)), exist_ok=True)
    if packed:  # packed once its last window (g + W's) was built
        after = 3600 * (schedule.last_window(cfg, g) - g)
        _touch(layout.pack_path(root, g), t + after + 60)
        _touch(layout.packed_marker_path(root, g), t + after + 61, "{}")
    else:
        os.makedirs(layout.games_dir(root, g), exist_ok=True)
        os.makedirs(os.path.dirname(layout.selfplay_log_path(root, g, 0)), exist_ok=True)
        for i in range(cfg.selfplay.games):
            _touch(layout.game_path(root, g, i), t + 60)
        for j in range(schedule.selfplay_job_count(cfg)):  # one record and one log per self-play job
            _touch(layout.selfplay_job_path(root, g, j), t + 61, "{}")
            _touch(layout.selfplay_log_path(root, g, j), t + 61)
    _touch(layout.complete_marker_path(root, g), t + 120, "{}")


def packed_generations(cfg, at: int) -> int:
    """Generations packed at generation `at` (`storage.pack_old_generations`): those whose last window, g + W
    (`schedule.last_window`), is built."""
    if not cfg.storage.pack_old_generations:
        return 0
    return sum(1 for g in range(at) if schedule.last_window(cfg, g) < at)


def small_files_report(cfg, at: int, files: int) -> str:
    """The run directory's file count at generation `at` (loose and packed generations) and Snakemake's
    metadata files; what it would be without packing; and the layout before self-play jobs wrote records
    (commit acf390c): a `.timing.json` sidecar per game, every game file an output Snakemake tracked."""
    packed = packed_generations(cfg, at)
    per_gen, jobs_gen = cfg.selfplay.games, schedule.selfplay_job_count(cfg)
    games, jobs = per_gen * (at - packed), jobs_gen * (at - packed)
    loose = files + packed * (per_gen + 2 * jobs_gen - 2)  # a pack and its marker for 8192 + 256 files
    # outputs of a finished generation besides self-play's: model, marker, shards, manifest, metrics, evals
    others = sum(
        2 + (cfg.train.ranks + 2 + len(schedule.evaluation_files(cfg, g)) if g else 0) for g in range(at)
    )
    before_files = loose - jobs_gen * at + per_gen * at  # no job records; a sidecar per game
    after_meta, before_meta = jobs_gen * at + others + packed, per_gen * at + others
    return (
        f"small files at generation {at}: run directory {files:,} files ({games:,} game files, {jobs:,} job "
        f"records, {jobs:,} self-play logs of {at - packed} loose generations; {packed} packs and their "
        f"markers); without packing {loose:,} files ({loose / max(1, files):.1f}x);\n"
        f"  Snakemake metadata {after_meta:,} files (one per tracked output); before job records (acf390c): "
        f"{before_files:,} files (a sidecar per game), metadata {before_meta:,} files (one per game file)"
    )


def dry_run(config_file: Path, quiet: bool) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak memory (MB) and job count of `snakemake -n` for the run of `config_file`."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-n",
        "--cores",
        "1",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(REPO),
        "--configfile",
        str(config_file),
    ]
    if quiet:
        cmd += ["--quiet", "rules"]  # no per-job listing: printing 8192 job descriptions would be timed too
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake -n failed for {config_file}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    jobs = next((line.split()[-1] for line in lines if line.strip().startswith("total")), "?")
    return seconds, cpu, after.ru_maxrss / 1024, jobs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench dag", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--config", default=str(REPO / "config" / "paper.yaml"), help="run config (paper)")
    parser.add_argument("--games", type=int, default=8192, help="self-play games per generation (8192)")
    parser.add_argument("--at", type=int, default=100, help="the later generation to plan (100)")
    parser.add_argument(
        "--games-per-job", type=int, default=None, help="games per self-play job (the config's: 64)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="dry runs per directory; the best is kept (2)")
    parser.add_argument(
        "--quiet", action="store_true", help="pass --quiet rules to snakemake (no per-job listing)"
    )
    parser.add_argument(
        "--workdir", default=None, help="where to build the run directories (a temporary dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the run directories")
    parser.add_argument(
        "--no-pack", action="store_true", help="no generation packed (storage.pack_old_generations: false)"
    )
    args = parser.parse_args(argv)

    config_file = Path(args.config).resolve()
    pack = False if args.no_pack else None  # None: the config's storage.pack_old_generations
    generations = args.at + 5
    base = args.workdir or tempfile.mkdtemp(prefix="minigo-bench-dag-")
    early, late = os.path.join(base, "at1"), os.path.join(base, f"at{args.at}")
    try:
        start = time.perf_counter()
        configs = {
            at: build_run(root, config_file, at, args.games, generations, args.games_per_job, pack)
            for at, root in ((1, early), (args.at, late))
        }
        files = sum(len(names) for _, _, names in os.walk(late))
        cfg = load_config(str(configs[1]))
        print(
            f"built run directories in {time.perf_counter() - start:.1f} s under {base}: "
            f"generation {args.at}'s has {files:,} files ({args.games} games x {args.at} finished "
            f"generations, {packed_generations(cfg, args.at)} packed); "
            f"{schedule.selfplay_job_count(cfg)} self-play jobs of {cfg.selfplay.games_per_job} games each"
        )
        print(small_files_report(cfg, args.at, files))
        results = {}
        for at, run_config in configs.items():
            label = f"generation {at}"
            runs = [dry_run(run_config, args.quiet) for _ in range(args.repeat)]
            best = min(runs)
            results[at] = best
            print(
                f"snakemake -n at {label:>15}: {best[0]:6.2f} s wall, {best[1]:6.2f} s CPU (best of "
                f"{args.repeat}), peak RSS so far {best[2]:5.0f} MB, {best[3]} jobs planned"
            )
        wall, cpu = results[args.at][0] / results[1][0], results[args.at][1] / results[1][1]
        ok = wall <= 1.2 and results[args.at][0] <= 20
        load = os.getloadavg()[0]
        print(
            f"ratio generation {args.at} / generation 1: {wall:.2f} wall, {cpu:.2f} CPU (target <= 1.2); "
            f"generation {args.at}: {results[args.at][0]:.1f} s wall (target <= 20 s): "
            f"{'met' if ok else 'NOT met'} (load average {load:.1f} on {os.cpu_count()} cores)"
        )
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
