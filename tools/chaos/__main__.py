"""Chaos run: kill -9 processes of a running workflow, kind by kind, rerun until done, compare with an
undisturbed run.

    python -m tools.chaos --workdir /tmp/chaos [--config config/tiny.yaml] [--kills 10] [--seed 1]
        [--kinds selfplay,train-rank,...] [--profile local|slurm]
    python -m tools.chaos --workdir /tmp/soak --soak [--set generations=12] [--kills K] [--every S]

(from the repository root; the method: `tools/chaos/__init__.py`)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from minigo_core.data import compare as comparison
from minigo_core.data import schedule
from minigo_core.pipeline import workflow
from tools.chaos.checks import Watcher, final_checks, kind_table, per_kind
from tools.chaos.disk import SmallDisk
from tools.chaos.kills import Chaos, kill_plan, plannable_kinds, soak_kinds, soak_plan
from tools.chaos.processes import KINDS
from tools.chaos.runs import (
    REPO,
    ROOT,
    Runner,
    cancel_slurm_jobs,
    reference_run,
    stop_all,
    wait_for_no_jobs,
    write_config,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tools.chaos", description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", required=True, help="scratch directory (emptied first)")
    p.add_argument(
        "--config",
        default=None,
        help="run config (its root is ignored; default config/tiny.yaml, or config.yaml with --soak)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set selfplay.games=2 (YAML value)",
    )
    p.add_argument("--kills", type=int, default=None, help="kills (kill -9s) during the chaos run (10)")
    p.add_argument(
        "--kinds",
        default=None,
        metavar="KIND,KIND,...",
        help=f"kill exactly these kinds, in this order of preference, instead of a drawn plan "
        f"(--kills is then their number); kinds: {', '.join(KINDS)}",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the plan, the kill moments and victims")
    p.add_argument(
        "--soak",
        action="store_true",
        help="a soak: the default config (config.yaml) unless --config, faults at least --every seconds "
        "apart over the whole run, every kind it can meet at least once (kill -9 of each job kind and of "
        "Snakemake, SIGTERMs, a full disk when root), --kills of them (default: twice the kinds)",
    )
    p.add_argument(
        "--every",
        type=float,
        default=None,
        metavar="S",
        help="--soak: the least seconds between two faults (default: run A's length x 0.25 / --kills)",
    )
    p.add_argument(
        "--profile",
        choices=("local", "slurm"),
        default="local",
        help="profiles/local, or profiles/slurm on a running Slurm test cluster "
        "(python tests/cluster/slurm_cluster.py start DIR) with the ranks on 2 nodes",
    )
    p.add_argument("--cores", type=int, default=2, help="Snakemake --cores (local profile)")
    p.add_argument(
        "--retries",
        type=int,
        default=None,
        help="Snakemake --retries (default: the local profile's 0; 2 with --profile slurm, >= 1 there "
        "so that a killed job is resubmitted)",
    )
    p.add_argument("--timeout", type=int, default=1800, help="limit for each Snakemake call (timeout -k)")
    p.add_argument(
        "--max-attempts", type=int, default=None, help="Snakemake starts allowed (default kills + 4)"
    )
    p.add_argument("--report", default=None, help="also write the JSON report to this file")
    args = p.parse_args(argv)
    args.config = args.config or str(REPO / ("config.yaml" if args.soak else "config/tiny.yaml"))
    if args.soak and args.kinds is not None:
        p.error("--soak draws every kind the run can meet: leave out --kinds")
    if args.every is not None and not args.soak:
        p.error("--every is for --soak")
    if args.profile == "slurm":
        args.retries = 2 if args.retries is None else args.retries
        if args.retries < 1:
            p.error("--profile slurm needs --retries >= 1: Snakemake resubmits a killed job")
    if args.kinds is not None:
        args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in args.kinds if k not in KINDS]
        if unknown or not args.kinds:
            p.error(f"--kinds: unknown {unknown or 'nothing given'}; kinds: {', '.join(KINDS)}")
        args.kills = len(args.kinds)
        if "node-loss-selfplay" in args.kinds and {"node-loss", "train-rank-node2"} & set(args.kinds):
            p.error(
                "--kinds: node-loss-selfplay puts the training on one node: no node-loss or "
                "train-rank-node2 beside it"
            )
    elif args.kills is None and not args.soak:
        args.kills = 10
    return args


def output(report: dict, path: str | None) -> None:
    text = json.dumps(report, indent=1)
    print(text)
    if path:
        Path(path).write_text(text + "\n")
    if "kinds" in report:
        print("\n" + kind_table(report["kinds"]), flush=True)


def main(argv: list[str] | None = None) -> int:
    t0 = time.monotonic()
    args = parse_args(argv)
    work = Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "A").mkdir(parents=True)
    (work / "B").mkdir()
    config = write_config(work / "config.yaml", Path(args.config), args.set)
    cfg = workflow.run_config(yaml.safe_load(config.read_text()))
    runner = Runner(config, args.cores, args.timeout, args.profile, args.retries)
    kinds = soak_kinds(cfg, runner.slurm, disk=os.geteuid() == 0) if args.soak else []
    if args.soak:
        args.kills = args.kills or 2 * len(kinds)
        if args.kills < len(kinds):
            print(f"--soak: {len(kinds)} kinds ({', '.join(kinds)}) need --kills >= {len(kinds)}")
            return 2
    plan = args.kinds or kill_plan(
        plannable_kinds(cfg, runner.slurm), args.kills, np.random.default_rng(args.seed)
    )
    runner.selfplay_on_second_node = "node-loss-selfplay" in (kinds or plan)
    report: dict[str, Any] = {
        "config": str(config),
        "profile": args.profile,
        "kills_requested": args.kills,
        "seed": args.seed,
        "kill_plan": [] if args.soak else plan,
    }
    if runner.slurm and not Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")).exists():
        report["problems"] = [
            "--profile slurm: no Slurm "
            "(start the test cluster: python tests/cluster/slurm_cluster.py start DIR)"
        ]
        output(report, args.report)
        return 2

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    code, seconds, lifetimes = reference_run(work / "A", runner)
    report["reference"] = {"exit": code, "seconds": round(seconds, 1), "lifetimes_s": lifetimes.summary()}
    if runner.slurm:
        report["reference"]["slurm_jobs_cancelled"] = cancel_slurm_jobs(work / "A")
    if code != 0:
        report["problems"] = [f"the undisturbed run failed (exit {code}); see {work / 'A'}/snakemake.*.log"]
        output(report, args.report)
        return 2

    gap = None
    if args.soak:  # the faults spread over the run: at least `gap` seconds apart
        gap = args.every or 0.25 * seconds / args.kills
        plan = soak_plan(kinds, args.kills, np.random.default_rng(args.seed))
        report["kill_plan"] = plan
        report["soak"] = {"gap_s": round(gap, 1), "kinds": kinds}
        print(f"chaos: soak of {len(plan)} faults, >= {gap:.0f} s apart: {', '.join(plan)}", flush=True)
    disk = None
    if "disk-full" in plan:  # run B's root on a tmpfs of its own, 4 x run A's bytes and at least 16 MB
        used = sum(p.stat().st_size for p in (work / "A" / ROOT).rglob("*") if p.is_file())
        disk = SmallDisk(work / "B" / ROOT, max(16, 4 * used >> 20))
        try:
            disk.mount()
        except RuntimeError as exc:
            report["problems"] = [f"disk-full: {exc}"]
            output(report, args.report)
            return 2
    watcher = Watcher(work / "B" / ROOT)
    watcher.start()
    sizes = [len(games) for games in schedule.selfplay_jobs(cfg)]
    chaos = Chaos(
        work / "B",
        runner,
        plan,
        np.random.default_rng([args.seed, 1]),
        lifetimes.shortest,
        args.max_attempts or args.kills + 4,
        sizes,
        soak_repeats_from=len(kinds) if args.soak else None,
    )
    chaos.disk, chaos.gap_s = disk, gap
    try:
        report["chaos"] = chaos.run()
    except BaseException:
        stop_all(work / "B", runner.slurm)
        if disk is not None:
            disk.unmount()
        chaos.restore_nodes()
        raise
    left = wait_for_no_jobs(work / "B", 120, runner.slurm)
    if runner.slurm:
        report["chaos"]["slurm_jobs_cancelled"] = cancel_slurm_jobs(work / "B")
    watcher.stop.set()
    watcher.join()
    watcher.scan()
    problems = final_checks(work, runner, chaos, report["chaos"], watcher, left)
    if disk is not None:
        disk.unmount()  # its files stay, in a plain directory
    report["kinds"] = per_kind(chaos.kills, chaos.misses)
    report["artifacts_compared"] = len(comparison.artifacts(work / "A" / ROOT))
    report["artifacts_validated_while_running"] = watcher.checked
    report["problems"] = problems
    report["seconds_total"] = round(time.monotonic() - t0, 1)
    output(report, args.report)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
