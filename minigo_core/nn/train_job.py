"""One rank of `minigo train`, torch-free: plan, batches, the step loop, checkpoints, metrics, provenance.

One pass over the window's shards, starting from generation g-1's model; rank 0 writes generation g's model
with its provenance. The ranks are torch.distributed processes (gloo on CPU, nccl on CUDA) that meet at a TCP
store (`torch.distributed.TCPStore`) hosted by rank 0 at a master address and port unique to each attempt
(`minigo_core.cluster`: `launch` starts N local ranks, `slurm` finds the address of an srun step's). A rank
that does not arrive fails the job after `--timeout` seconds (default $MINIGO_TRAIN_TIMEOUT_S, else the config
key `train.timeout_s`, 600 by default; the job's `Runtime`);
one that dies mid-training, or whose node is lost, breaks its peers' collectives (gloo at once when its
connections close, else after the timeout, which bounds every collective): the rank that notices fails
naming the step, its peers and their nodes, and the timeout, and the train rule's `srun
--kill-on-bad-exit=1` then stops the other tasks. A retry resumes from the checkpoint.

Data layout: the window has S shards; with W ranks (S divisible by W) rank r owns shards r, r+W, ... . A step
takes `c = batch_per_rank * W / S` consecutive rows from every shard, each shard's rows forming one
micro-batch whose gradients are averaged (so W ranks over S shards and one rank over the same S shards with a
W times larger batch compute the same update). Batch i of shard j is a pure function of (i, j): rows i*c ..
(i+1)*c-1 and one random symmetry per example drawn from a generator seeded by (run seed, generation, j, i).
Batch norm running statistics follow the first shard of rank 0 (torch DDP's default of broadcasting rank 0's
buffers). Gradients are summed by one flat all-reduce per step; for two ranks the sum is exact whatever the
order, for more ranks gloo's ring order is fixed for a given world size, so a run is reproducible for a given
number of ranks.

Everything needed to resume lives in `{work_dir}/checkpoint.pt` (weights, their moving average with
`train.ema_decay`, optimiser, step, RNG state; the data position is the step), written atomically every
`train.checkpoint_every` steps. A restarted job resumes from it and ends with the same weights as an
uninterrupted one. Metrics go to `{work_dir}/metrics.jsonl`; a checkpoint holds them as they were, and a
resumed job writes them back, so its file ends as an uninterrupted job's. SIGTERM (a preemption, a time
limit) on any rank stops every rank at the next step boundary (the ranks agree through that step's
all-reduce), rank 0 writing a checkpoint there.

This module imports no torch: the network, optimiser, step, checkpoints and collectives are
`minigo_core.nn.training.Trainer`, imported only by a rank (`train`), so that the launcher of `--ranks N`
starts its ranks at once instead of first paying for torch's import itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np

from minigo_core.base import config as config_mod
from minigo_core.base.runtime import TRAIN_TIMEOUT_ENV, Runtime
from minigo_core.cluster import launch
from minigo_core.cluster.slurm import Master, node_name
from minigo_core.data import layout, prefetch, shards, storage
from minigo_core.data.window import Window, read_manifest
from minigo_core.game import symmetries
from minigo_core.nn import modelfile
from minigo_core.nn.peers import PEER_LOST, collective

if TYPE_CHECKING:
    from minigo_core.nn.training import Trainer

log = logging.getLogger(__name__)

STOPPED_EARLY = 3  # exit code of `--stop-after`: checkpointed, no model written
RECENT_LOSSES = 20  # the final losses are the mean over this many last steps
LOSS_NAMES = ("policy", "value", "ownership", "score", "reply")  # a training step's (nn.training.LOSSES)
T = TypeVar("T")


class TrainError(RuntimeError):
    """Training cannot start or a rank failed; the message says which file, key or rank, and what to do."""


class TrainStopped(Exception):
    """The ranks stopped at a step boundary for `stop_requested` (SIGTERM), after rank 0's checkpoint."""


# ---- the job and its plan ----------------------------------------------------------------------------------
@dataclass
class TrainJob:
    """Everything one rank needs; the same on every rank except `rank` and `local_rank`."""

    cfg: config_mod.RunConfig
    generation: int
    window_dir: str
    parent: str
    out: str
    work_dir: str
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    master: Master | None = None  # where the ranks meet (None: one rank, no process group)
    stop_after: int | None = None
    prefetch_threads: int = 1
    # how the rank runs: its DSP cores and torch threads, ISA, the ranks' timeout (`minigo train` builds it
    # from the command line); None: train.threads_per_rank cores and train.timeout_s
    runtime: Runtime | None = None
    log_every: int = 10
    quiet: bool = False
    record_wall_time: bool = True  # False: identical inputs give a byte-identical model file
    extra_provenance: dict = field(default_factory=dict)
    # asked at every step boundary: True (on any rank) stops every rank there with a checkpoint (SIGTERM)
    stop_requested: Callable[[], bool] | None = None

    @property
    def rank_runtime(self) -> Runtime:
        """`runtime`, or the config's: train.threads_per_rank cores, train.timeout_s."""
        tcfg = self.cfg.train
        return self.runtime or Runtime(threads=tcfg.threads_per_rank, train_timeout_s=tcfg.timeout_s)

    @property
    def timeout_s(self) -> float:
        """Seconds a rank waits for the others (at the store, in every collective)."""
        return self.rank_runtime.train_timeout_s


@dataclass
class TrainPlan:
    """What one rank will do, decided from the window manifest and the parent model's file (no torch yet)."""

    window: Window
    parent_sha256: str
    world: int
    chunk: int  # consecutive rows of every shard in one step
    steps: int
    shard_ids: list[int]  # the shards this rank reads: rank, rank + world, ...
    global_batch: int
    steps_per_pass: int = 0  # steps that read every shard once (more steps read them again)


def make_plan(job: TrainJob) -> TrainPlan:
    """Check that the window splits over the ranks and suits the parent model; TrainError says what to do."""
    tcfg = job.cfg.train
    window = read_manifest(job.window_dir)
    n_shards, world = len(window.shard_urls), job.world_size
    if n_shards % world:
        raise TrainError(
            f"window {job.window_dir} has {n_shards} shards, which cannot be split over {world} ranks; "
            f"run with a number of ranks that divides {n_shards}, or rebuild the window with "
            f"train.ranks = {world}"
        )
    per_rank = n_shards // world
    if tcfg.batch_per_rank % per_rank:
        raise TrainError(
            f"train.batch_per_rank = {tcfg.batch_per_rank} must be divisible by the {per_rank} shards each "
            f"rank reads ({n_shards} shards over {world} ranks)"
        )
    chunk = tcfg.batch_per_rank // per_rank
    steps = per_pass = min(window.shard_rows) // chunk
    if per_pass and tcfg.replay_ratio is not None:
        steps = replay_steps(tcfg.replay_ratio, window.new_positions, tcfg.batch_per_rank * world)
    if per_pass == 0:
        raise TrainError(
            f"window {job.window_dir} has only {min(window.shard_rows)} rows in its smallest shard, fewer "
            f"than one batch of {chunk}; play more games, raise window.sample_fraction or lower "
            "train.batch_per_rank"
        )
    data = modelfile.read_bytes(job.parent)
    _check_parent(job, window, modelfile.decode(job.parent, data).config)
    shard_ids = list(range(job.rank, n_shards, world))
    global_batch = tcfg.batch_per_rank * world
    return TrainPlan(window, modelfile.sha256(data), world, chunk, steps, shard_ids, global_batch, per_pass)


def replay_steps(replay_ratio: float, new_positions: int, global_batch: int) -> int:
    """Steps that train on `replay_ratio` examples per new position (at least one step): `train.replay_ratio`
    x the newest window generation's recorded positions / the global batch, rounded."""
    return max(1, round(replay_ratio * new_positions / global_batch))


def _check_parent(job: TrainJob, window: Window, net: modelfile.ModelConfig) -> None:
    holds = (window.board_size, window.feature_set, window.num_planes)
    if (net.board_size, net.feature_set, net.planes) != holds:
        raise TrainError(
            f"parent model {job.parent} is {net.board_size}x{net.board_size} with {net.feature_set} "
            f"features but window {job.window_dir} holds {window.board_size}x{window.board_size} "
            f"{window.feature_set} examples; check --parent and --window-dir"
        )


def augment(
    planes: np.ndarray,
    pi: np.ndarray,
    rng: np.random.Generator,
    own: np.ndarray | None = None,
    reply: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """One random symmetry of the 8 per example (planes (n, P, N, N), pi (n, N*N+1)): (planes, pi), and
    with `own` (n, N*N) the ownership target under the same symmetry as a third array; with `reply` (n,)
    also the opponent-reply targets (flat move indices, -1 kept: none) moved by it, as the last array."""
    board_size = planes.shape[-1]
    sym = rng.integers(0, symmetries.NUM_SYMMETRIES, size=planes.shape[0])
    out_planes, out_pi = np.empty_like(planes), np.empty_like(pi)
    out_own = None if own is None else np.empty_like(own)
    out_reply = None if reply is None else np.array(reply, copy=True)
    for s in range(symmetries.NUM_SYMMETRIES):
        rows = np.flatnonzero(sym == s)
        if rows.size:
            out_planes[rows] = symmetries.apply_planes(s, planes[rows])
            out_pi[rows] = symmetries.apply_policy(s, pi[rows], board_size)
            if own is not None:
                grid = own[rows].reshape(rows.size, 1, board_size, board_size)
                out_own[rows] = symmetries.apply_planes(s, grid).reshape(rows.size, -1)
            if reply is not None:  # move i lands at j where apply_policy's source index src[j] is i
                dest = np.argsort(symmetries.apply_policy(s, np.arange(board_size**2 + 1), board_size))
                moved = rows[reply[rows] >= 0]
                out_reply[moved] = dest[reply[moved]]
    return (out_planes, out_pi, *(a for a in (out_own, out_reply) if a is not None))


class BatchMaker(Generic[T]):
    """`make(i)`: the micro-batches of step i for the shards this rank owns (a pure function of i).

    A micro-batch is one shard's rows of the step, augmented, as `to_batch(planes, pi, z, own, score, reply)`
    makes it (the trainer's tensors), so that the prefetch threads also do that conversion.
    """

    def __init__(
        self,
        loaded: list[shards.LoadedShard],
        shard_ids: list[int],
        chunk: int,
        seed: int,
        generation: int,
        to_batch: Callable[..., T],
        steps_per_pass: int = 0,
    ) -> None:
        self.loaded, self.shard_ids, self.chunk = loaded, shard_ids, chunk
        self.seed, self.generation, self.to_batch = seed, generation, to_batch
        self.steps_per_pass = steps_per_pass

    def __call__(self, step: int) -> list[T]:
        out = []
        at = step % self.steps_per_pass if self.steps_per_pass else step
        for shard, j in zip(self.loaded, self.shard_ids, strict=True):
            ex = shard.rows(at * self.chunk, (at + 1) * self.chunk)
            rng = np.random.default_rng([self.seed, self.generation, j, step])
            planes, pi, own, reply = augment(ex.planes, ex.pi, rng, ex.own, ex.reply)
            out.append(self.to_batch(planes, pi, ex.z, own, ex.score, reply))
        return out


# ---- one rank ----------------------------------------------------------------------------------------------
@dataclass
class _Clock:
    """Wall-clock accounting for the metrics: loading, computing, and the interval since the last record."""

    start: float = field(default_factory=time.perf_counter)
    load_s: float = 0.0
    compute_s: float = 0.0
    interval_start: float = 0.0
    interval_wait_s: float = 0.0  # the feeder's total wait at the interval's start
    interval_steps: int = 0


@dataclass
class _Run:
    """One rank's training under way: what the parts of `_train` share."""

    job: TrainJob
    plan: TrainPlan
    trainer: Trainer
    identity: dict  # what a checkpoint must match to be resumed
    clock: _Clock
    start_step: int = 0
    recent: list[tuple[float, ...]] = field(default_factory=list)  # the last steps' losses (LOSS_NAMES)
    metrics_kept: bool = False  # resumed with the metrics of the checkpoint: no second `start` record
    feeder: prefetch.Prefetcher | None = None
    nodes: list[str] = field(default_factory=list)  # the node of every rank, in rank order

    @property
    def checkpoint(self) -> str:
        return storage.join(self.job.work_dir, layout.CHECKPOINT)

    @property
    def metrics(self) -> str:
        return storage.join(self.job.work_dir, layout.METRICS)


def train(job: TrainJob) -> dict | None:
    """Run one rank of the training job. Returns the provenance written (rank 0), or None when stopped early
    (`--stop-after`); raises TrainStopped when stopped for `job.stop_requested`.

    With `world_size == 1` no process group is made. Raises TrainError with what to do on bad inputs.
    torch's global settings (threads, RNG, determinism) are restored afterwards, so it can run in-process.
    """
    from minigo_core.nn import training  # lazy: torch takes seconds to import; a launcher of ranks never does

    with training.torch_state_kept():
        return _train(job, training.Trainer)


def _train(job: TrainJob, trainer_cls: type[Trainer]) -> dict | None:
    """The body of `train`: one rank, from the window manifest to the model file."""
    clock = _Clock()
    plan = make_plan(job)
    tcfg = job.cfg.train
    seed = (job.cfg.seed * 1_000_003 + job.generation) % 2**63
    trainer = trainer_cls.from_parent(job.parent, tcfg, seed, job.local_rank, plan.world, job.rank_runtime)
    run = _resume(job, plan, trainer, clock)
    feeder = _start(run)
    for step, micro in enumerate(feeder, start=run.start_step):
        t_step = time.perf_counter()
        lr = config_mod.learning_rate_for(job.cfg, job.generation, trainer.global_step0 + step)
        stop = job.stop_requested is not None and job.stop_requested()
        weights = (tcfg.value_weight, tcfg.ownership_weight, tcfg.score_weight, tcfg.reply_weight)
        with collective(run.job, run.plan.world, run.nodes, f"the all-reduce of step {step + 1}"):
            losses, accuracy, stop = trainer.step_and_agree(micro, lr, weights, stop)  # all stop if one asks
        clock.compute_s += time.perf_counter() - t_step
        clock.interval_steps += 1
        run.recent = [*run.recent, losses][-RECENT_LOSSES:]
        done = step + 1
        if job.rank == 0 and (done % job.log_every == 0 or done == plan.steps):
            _record_step(run, done, lr, losses, accuracy)
        if job.rank == 0 and done % tcfg.checkpoint_every == 0 and done < plan.steps:
            _save_checkpoint(run, done)
        if stop and done < plan.steps:
            _stop_early(run, done, "SIGTERM: a preemption or a time limit")
            raise TrainStopped(f"stopped after step {done} of {plan.steps}")
        if job.stop_after is not None and done >= job.stop_after and done < plan.steps:
            _stop_early(run, done, "--stop-after")
            return None
    return _finish(run)


def _say(job: TrainJob, message: str) -> None:
    if not job.quiet:
        log.info("%s", message)


def _checkpoint_identity(job: TrainJob, plan: TrainPlan) -> dict:
    return {
        "generation": job.generation,
        "window_manifest_sha256": plan.window.manifest_sha256,
        "parent_sha256": plan.parent_sha256,
        "chunk": plan.chunk,
        "shards": len(plan.window.shard_urls),
        "seed": job.cfg.seed,
        # the training settings, less how long a rank waits for the others: a retry with a longer timeout
        # (what a timed-out attempt asks for) resumes the same steps
        "train": {k: v for k, v in config_mod.to_plain(job.cfg.train).items() if k != "timeout_s"},
    }


def _resume(job: TrainJob, plan: TrainPlan, trainer: Trainer, clock: _Clock) -> _Run:
    """Pick up the checkpoint of these inputs if an earlier attempt left one; else start at step 0."""
    run = _Run(job, plan, trainer, _checkpoint_identity(job, plan), clock)
    fs, work_path = storage.fs_and_path(job.work_dir)
    fs.makedirs(work_path, exist_ok=True)
    if job.rank == 0:  # what a killed attempt's writer left: the work directory is this job's alone
        for url in storage.remove_temporaries_in(job.work_dir) + storage.remove_stale_temporaries([job.out]):
            _say(job, f"removed {url}: the temporary file of a killed attempt")
    resumed = trainer.resume(run.checkpoint, run.identity, note=lambda message: _say(job, message))
    if resumed is not None:
        run.start_step, run.recent = resumed.step, resumed.recent_losses
        _say(job, f"resuming from {run.checkpoint} at step {run.start_step} of {plan.steps}")
        if resumed.metrics is not None:
            # the metrics as they were at the checkpoint: the job's file ends as an uninterrupted job's
            run.metrics_kept = True
            if job.rank == 0:
                storage.write_text(run.metrics, resumed.metrics)
    return run


def _save_checkpoint(run: _Run, done: int) -> None:
    """Rank 0: the checkpoint after step `done`, with the metrics file so far."""
    try:
        metrics = storage.read_bytes(run.metrics).decode()
    except FileNotFoundError:
        metrics = None
    run.trainer.save_checkpoint(run.checkpoint, run.identity, done, run.recent, metrics)


def _start(run: _Run) -> prefetch.Prefetcher:
    """Meet the other ranks, load this rank's shards and start preparing batches; rank 0 records the start."""
    job, plan, tcfg, first = run.job, run.plan, run.job.cfg.train, run.trainer.global_step0 + run.start_step
    nodes = [node_name()]
    if plan.world > 1:
        _join(run)
        with collective(run.job, run.plan.world, run.nodes, "gathering the ranks' node names"):
            nodes = run.trainer.gather_strings(nodes[0])
    run.nodes = nodes
    t_load = time.perf_counter()
    window = plan.window
    loaded = [shards.load_shard(window.shard_urls[j], window.shard_sha256[j]) for j in plan.shard_ids]
    run.clock.load_s = time.perf_counter() - t_load
    maker = BatchMaker(loaded, plan.shard_ids, plan.chunk, job.cfg.seed, job.generation,
                       run.trainer.micro_batch, plan.steps_per_pass)  # fmt: skip
    run.feeder = prefetch.Prefetcher(
        maker, run.start_step, plan.steps, capacity=tcfg.prefetch_batches, threads=job.prefetch_threads
    )
    if job.rank == 0 and not run.metrics_kept:
        _say(job, f"{plan.steps} steps of {plan.global_batch} examples ({plan.world} ranks x "
                  f"{tcfg.batch_per_rank}; {len(window.shard_urls)} shards of >= {min(window.shard_rows)} "
                  f"rows), global step {first}, backend {tcfg.backend}, "
                  f"device {run.trainer.device}")  # fmt: skip
        _append_metrics(
            run.metrics,
            {
                "event": "start",
                "generation": job.generation,
                "steps": plan.steps,
                "start_step": run.start_step,
                "ranks": plan.world,
                "global_batch": plan.global_batch,
                **replay(plan),
                "load_s": run.clock.load_s,
                "backend": tcfg.backend,
                "learning_rate_unit": tcfg.learning_rate_unit,  # run_fraction: "lr" is every step's rate
                "lr": config_mod.learning_rate_for(job.cfg, job.generation, first),  # the first step's rate
                "nodes": nodes,  # the node of every rank, in rank order
            },
        )
    run.clock.interval_start = time.perf_counter()
    return run.feeder


def _join(run: _Run) -> None:
    """Meet the other ranks at the TCP store (rank 0 hosts it); TrainError says why not and what to do."""
    job, master = run.job, run.job.master
    if master is None:
        raise TrainError(f"{run.plan.world} ranks but no master address: run under srun or with --ranks")
    try:
        run.trainer.join_group(master.addr, master.port, job.rank, job.timeout_s)
    except RuntimeError as exc:  # torch's DistStoreError / DistNetworkError: a store not reached or timed out
        first_line = (str(exc).strip().splitlines() or [repr(exc)])[0]
        raise TrainError(
            f"rank {job.rank} of {run.plan.world} (node {node_name()}) could not meet the other ranks at the "
            f"TCP store of rank 0 at {master.addr}:{master.port} within --timeout {job.timeout_s:g} s "
            f"({type(exc).__name__}: {first_line}); check that every rank started, that the port is free on "
            "rank 0's node and reachable from the others, or set MASTER_ADDR/MASTER_PORT"
        ) from None
    _say(
        job,
        f"rank {job.rank} of {run.plan.world} on node {node_name()} joined at {master.addr}:{master.port} "
        f"(it waits at most {job.timeout_s:g} s for the others in a collective: --timeout, "
        f"{TRAIN_TIMEOUT_ENV}, train.timeout_s)",
    )


def _append_metrics(url: str, record: dict) -> None:
    fs, path = storage.fs_and_path(url)
    try:
        with fs.open(path, "a") as handle:
            handle.write(json.dumps(record) + "\n")
    except OSError as exc:  # out of space: a line cut short is skipped by its readers (read_json_lines)
        raise storage.disk_full_error(exc, url) from exc


def _record_step(run: _Run, done: int, lr: float, losses: tuple[float, ...], accuracy: float) -> None:
    """Append a `step` record: the step's losses and policy accuracy, and throughput and data wait since the
    last record."""
    clock, tcfg, global_step0 = run.clock, run.job.cfg.train, run.trainer.global_step0
    now = time.perf_counter()
    interval_s = now - clock.interval_start
    wait_total = run.feeder.wait_s
    policy_loss, value_loss, own_loss, score_loss, reply_loss = losses
    l2_loss = run.trainer.l2_loss(tcfg.l2)
    _append_metrics(
        run.metrics,
        {
            "event": "step",
            "step": done,
            "global_step": global_step0 + done,
            "lr": lr,
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "ownership_loss": own_loss,
            "score_loss": score_loss,
            "reply_loss": reply_loss,  # 0 for a model without the opponent-reply head
            "l2_loss": l2_loss,
            "loss": policy_loss
            + tcfg.value_weight * value_loss
            + tcfg.ownership_weight * own_loss
            + tcfg.score_weight * score_loss
            + tcfg.reply_weight * reply_loss
            + l2_loss,
            "policy_accuracy": accuracy,
            "examples_per_s": clock.interval_steps * run.plan.global_batch / max(interval_s, 1e-9),
            "step_ms": 1000 * interval_s / clock.interval_steps,
            "data_wait_ms": 1000 * (wait_total - clock.interval_wait_s) / clock.interval_steps,
        },
    )
    clock.interval_start, clock.interval_wait_s, clock.interval_steps = now, wait_total, 0


def _stop_early(run: _Run, done: int, why: str) -> None:
    """`--stop-after` or SIGTERM (`why`): rank 0 checkpoints; every rank stops without writing the model."""
    if run.job.rank == 0:
        _save_checkpoint(run, done)
        _say(run.job, f"stopped after step {done} of {run.plan.steps} ({why}); checkpoint "
                      f"{run.checkpoint}; rerun the same command (Snakemake's retry does) to resume "
                      "from it")  # fmt: skip
    run.feeder.close()
    _leave_group(run)


def _finish(run: _Run) -> dict | None:
    """After the last step: rank 0 writes the model, the `end` record and removes the checkpoint."""
    job, plan, feeder, clock = run.job, run.plan, run.feeder, run.clock
    wall_s = time.perf_counter() - clock.start
    wait_s, first_wait_s = feeder.wait_s, feeder.first_wait_s
    # Every rank's data wait and compute time, for the metrics (a collective: every rank takes part).
    with collective(run.job, run.plan.world, run.nodes, "gathering the ranks' timings after the last step"):
        per_rank = run.trainer.gather([wait_s, clock.compute_s, float(plan.steps - run.start_step),
                                       first_wait_s])  # fmt: skip
    provenance = None
    if job.rank == 0:
        provenance = _provenance(run, wall_s)
        run.trainer.save_model(job.out, provenance)
        _record_end(run, per_rank, wall_s, provenance)
        _remove(run.checkpoint)  # the model is written: the checkpoint has served
        final, steps, global_step0 = provenance["final_losses"], plan.steps, run.trainer.global_step0
        _say(job, f"wrote {job.out}: {steps} steps, global step {global_step0 + steps}, "
                  f"policy loss {final['policy']:.4f}, value loss {final['value']:.4f}, {wall_s:.1f} s, "
                  f"data wait {100 * (wait_s - first_wait_s) / max(wait_s + clock.compute_s, 1e-9):.1f}% of "
                  f"step time after a first batch of {first_wait_s:.2f} s")  # fmt: skip
    _leave_group(run)
    return provenance


def _provenance(run: _Run, wall_s: float) -> dict:
    job, plan, tcfg, step0 = run.job, run.plan, run.job.cfg.train, run.trainer.global_step0
    final = np.mean(np.array(run.recent), axis=0) if run.recent else np.full(len(LOSS_NAMES), np.nan)
    # the reply loss only for a model with the head: a model without it has the bytes it had before the head
    kept = [name for name in LOSS_NAMES if name != "reply" or run.trainer.model_config.reply_head]
    return {
        "generation": job.generation,
        "parent": job.parent,
        "parent_sha256": plan.parent_sha256,
        "window": job.window_dir,
        "window_manifest_sha256": plan.window.manifest_sha256,
        "steps": plan.steps,
        "examples": plan.steps * plan.global_batch,
        "global_step": step0 + plan.steps,
        "ranks": plan.world,
        "batch_per_rank": tcfg.batch_per_rank,
        **replay(plan),
        "final_losses": {name: float(v) for name, v in zip(LOSS_NAMES, final, strict=True) if name in kept},
        "learning_rate_final": config_mod.learning_rate_for(job.cfg, job.generation, step0 + plan.steps - 1),
        "seed": job.cfg.seed,
        **({} if tcfg.ema_decay is None else {"ema_decay": tcfg.ema_decay}),  # the model is the average
        **({"wall_time_s": round(wall_s, 3)} if job.record_wall_time else {}),
        **job.extra_provenance,
    }


def replay(plan: TrainPlan) -> dict:
    """What the steps train on per new position: `new_positions` (the newest window generation's recorded
    positions), `replay_ratio` = steps x global batch / new_positions, and the window's passes."""
    new = plan.window.new_positions
    return {
        "new_positions": new,
        "replay_ratio": round(plan.steps * plan.global_batch / new, 4) if new else None,
        "window_passes": round(plan.steps / plan.steps_per_pass, 4) if plan.steps_per_pass else None,
    }


def _record_end(run: _Run, per_rank: list[list[float]], wall_s: float, provenance: dict) -> None:
    """Append the `end` record; `per_rank`: every rank's (data wait s, compute s, steps run, first wait s)."""
    plan, ran = run.plan, run.plan.steps - run.start_step
    per_rank_wait = [g[0] for g in per_rank]
    busy_s = sum(g[1] + g[0] for g in per_rank)  # data wait + compute, summed over the ranks
    _append_metrics(
        run.metrics,
        {
            "event": "end",
            "steps": plan.steps,
            "steps_run": ran,
            "wall_s": wall_s,
            "load_s": run.clock.load_s,
            "examples_per_s": ran * plan.global_batch / max(busy_s / plan.world, 1e-9),
            "data_wait_s_per_rank": per_rank_wait,
            "first_batch_wait_s_per_rank": [g[3] for g in per_rank],
            "data_wait_fraction": sum(per_rank_wait) / max(busy_s, 1e-9),
            "final_losses": provenance["final_losses"],
            "resumed_from_step": run.start_step,
            "model": run.job.out,
        },
    )


def _leave_group(run: _Run) -> None:
    """Wait for every rank and take the process group down (rank 0's store goes with it)."""
    with collective(run.job, run.plan.world, run.nodes, "the barrier before leaving the process group"):
        run.trainer.leave_group()


def _remove(url: str) -> None:
    fs, path = storage.fs_and_path(url)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(path)


# ---- launching N local ranks -------------------------------------------------------------------------------
def launch_ranks(rank_command: Callable[[int, Master], list[str]], ranks: int, out: str) -> int:
    """Start `ranks` local ranks (`rank_command(r, master)` runs rank r) and watch them: the exit code.

    If a rank exits with an error the others are stopped and the job fails naming the rank. A failed job
    leaves no model: if rank 0 wrote `out` during this launch before another rank died (it can, in the
    moments after the last collective), the file is removed, so a failed job never leaves its output under
    the final name.
    """
    out_before = _file_stamp(out)
    ok, lost = (0, STOPPED_EARLY), (PEER_LOST,)  # a rank that lost its peer is not the one to name
    result = launch.launch_local(rank_command, ranks, ok_codes=ok, secondary_codes=lost)
    if result.failed is not None:
        if _file_stamp(out) not in (None, out_before):
            _remove(out)
            log.error(f"removed {out}, written before rank {result.failed} failed; rerun the job")
        return 1
    return STOPPED_EARLY if STOPPED_EARLY in result.codes else 0


def _file_stamp(url: str) -> tuple | None:
    """(size, modification time) of the file at `url`, or None when there is none."""
    fs, path = storage.fs_and_path(url)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    return (info.get("size"), str(info.get("mtime", info.get("LastModified"))))
