"""`minigo train`: data-parallel training of generation g over its window's shards, from the parent model.

How the ranks are started:
- `minigo train --ranks N` starts N local processes (`minigo_core.cluster.launch`), each this module with
  the hidden options `--rank R --world-size N --master-addr 127.0.0.1 --master-port P`; if one dies the
  others are stopped and the job fails naming the rank.
- under `srun`, each task is one rank and every task derives the same rendezvous address and port without
  talking (`minigo_core.cluster.slurm`).
- otherwise one rank, in this process.
What a rank does (plan, batches, steps, checkpoints, metrics) is `minigo_core.nn.train_job`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from minigo_core.base import preempt
from minigo_core.base.command import Command, UsageError, setup_logging
from minigo_core.base.runtime import TRAIN_TIMEOUT_ENV, Runtime
from minigo_core.cluster import launch
from minigo_core.cluster.slurm import ClusterError, Master, slurm_master, slurm_rank_env
from minigo_core.data import layout, shards, storage
from minigo_core.data.window import WindowError
from minigo_core.nn import modelfile, peers
from minigo_core.nn.train_job import STOPPED_EARLY, TrainError, TrainJob, TrainStopped, launch_ranks, train
from minigo_core.report import tensorboard

log = logging.getLogger(__name__)


_ERRORS = (TrainError, ClusterError, WindowError, shards.ShardError, modelfile.ModelFileError)


def _command() -> Command:
    cmd = Command(
        "train",
        "Data-parallel training of generation G over its window's shards, starting from the parent model.",
        errors=_ERRORS,
    )
    p = cmd.parser
    cmd.add_config(help="run config YAML")
    p.add_argument("--generation", type=int, required=True, help="generation G to train (>= 1)")
    p.add_argument("--window-dir", required=True, help="window of generation G (shards + manifest.json)")
    p.add_argument("--parent", required=True, help="model of generation G-1")
    p.add_argument("--out", required=True, help="model file of generation G to write")
    p.add_argument(
        "--ranks",
        type=int,
        default=None,
        help="start this many local ranks (default: one rank per srun task under Slurm, else train.ranks)",
    )
    p.add_argument(
        "--work-dir",
        default=None,
        help="checkpoints and metrics (default {root}/train/genGGGG)",
    )
    p.add_argument(
        "--stop-after",
        type=int,
        default=None,
        help="checkpoint and stop after this many steps without writing the model (rerun to resume)",
    )
    p.add_argument(
        "--prefetch-threads",
        type=int,
        default=1,
        help="background threads preparing batches; 0 turns prefetch off",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds a rank waits for the others (to meet at the store, in every collective) before failing "
        f"and naming them (default: ${TRAIN_TIMEOUT_ENV}, else the config's train.timeout_s)",
    )
    p.add_argument(
        "--no-wall-time",
        action="store_true",
        help="leave the wall time out of the model's provenance, so identical inputs give a "
        "byte-identical model file (it stays in metrics.jsonl)",
    )
    p.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--world-size", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--master-addr", default=None, help=argparse.SUPPRESS)
    p.add_argument("--master-port", type=int, default=None, help=argparse.SUPPRESS)
    return cmd


def cli_main(argv: list[str] | None = None) -> int:
    return _command().run(argv, lambda args: _main(args, argv))


def _main(args: argparse.Namespace, argv: list[str] | None) -> int:
    cfg = Command.config(args)
    if args.generation < 1:
        raise UsageError("--generation must be >= 1 (generation 0 is `minigo bootstrap`)")
    work_dir = args.work_dir or layout.train_dir(cfg.root, args.generation)
    # how each rank runs: train.threads_per_rank cores; the ISA and the timeout from here, the command line
    runtime = Runtime.from_environ(
        os.environ, threads=cfg.train.threads_per_rank, cfg=cfg, train_timeout_s=args.timeout
    )
    timeout_s = runtime.train_timeout_s
    job = TrainJob(
        cfg=cfg,
        generation=args.generation,
        window_dir=args.window_dir,
        parent=args.parent,
        out=args.out,
        work_dir=work_dir,
        stop_after=args.stop_after,
        prefetch_threads=args.prefetch_threads,
        runtime=runtime,
        record_wall_time=not args.no_wall_time,
    )
    slurm = slurm_rank_env()
    if args.rank is not None:  # a child of a local launch
        launch.die_with_parent()
        job.rank, job.world_size, job.local_rank = args.rank, args.world_size, args.rank
        if args.master_addr is not None and args.master_port is not None:
            job.master = Master(args.master_addr, args.master_port)
    elif args.ranks is None and slurm is not None:  # one task of an srun step
        job.rank, job.world_size, job.local_rank = slurm
        if job.world_size > 1:
            job.master = slurm_master()
    else:
        ranks = args.ranks if args.ranks is not None else cfg.train.ranks
        if ranks < 1:
            raise UsageError("--ranks must be >= 1")
        if ranks > 1:
            base = _strip_option(list(argv if argv is not None else sys.argv[1:]), "--ranks")
            base += ["--work-dir", work_dir]
            return launch_ranks(lambda r, master: _rank_command(base, r, ranks, master, timeout_s), ranks,
                                args.out)  # fmt: skip
    setup_logging(f"minigo train (rank {job.rank})", args.verbose)  # a rank's messages say which rank
    # a scheduler's SIGTERM (preemption, time limit): every rank stops at the next step boundary, rank 0
    # writing a checkpoint there; the exit code makes Snakemake or Slurm resubmit the job, which resumes
    with preempt.StopFlag().installed() as stop:
        job.stop_requested = stop
        try:
            result = train(job)
        except TrainStopped:
            return preempt.TERMINATED  # stopped by SIGTERM (here or on another rank), checkpointed
        except (peers.PeerLost, *_ERRORS) as exc:
            if not peers.in_group():
                raise
            # a rank of several, a process of its own, its process group up: it leaves now (peers.py)
            log.error("%s", exc)
            peers.leave_at_once(peers.PEER_LOST if isinstance(exc, peers.PeerLost) else 1)
    if result is not None and job.rank == 0:  # the model is written: its training scalars for TensorBoard
        tensorboard.update(
            cfg.root, tensorboard.write_train, cfg, args.generation, storage.join(work_dir, layout.METRICS)
        )
    return STOPPED_EARLY if result is None and job.stop_after is not None else 0


def _rank_command(base_argv: list[str], rank: int, ranks: int, master: Master, timeout_s: float) -> list[str]:
    """The command line of one rank of a local launch (`--rank` makes it a rank: see `_main`)."""
    return [sys.executable, "-m", "minigo_core.jobs.train", *base_argv, "--rank", str(rank),
            "--world-size", str(ranks), "--master-addr", master.addr, "--master-port", str(master.port),
            "--timeout", str(timeout_s)]  # fmt: skip


def _strip_option(argv: list[str], name: str) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == name:
            skip = True
            continue
        if a.startswith(name + "="):
            continue
        out.append(a)
    return out


if __name__ == "__main__":
    sys.exit(cli_main())
