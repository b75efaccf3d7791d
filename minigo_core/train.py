"""Synchronous data-parallel training of generation g over its window's shards (`minigo train`).

One pass over the shards, starting from generation g-1's model; rank 0 writes generation g's model with its
provenance. The ranks are torch.distributed processes (gloo on CPU, nccl on CUDA) that find each other
through a rendezvous file on the shared filesystem, at a path unique to each attempt:

- `minigo train --ranks N` starts N local processes itself and picks `{work_dir}/rdzv-<uuid>` for them;
  it watches them, and if one dies it stops the others and fails naming the rank.
- under `srun`, each task is one rank (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`) and every task derives
  the same path without talking: `{work_dir}/rdzv-slurm-<SLURM_JOB_ID>-<SLURM_STEP_ID>-<SLURM_RESTART_COUNT>`.

Rank 0 removes the rendezvous file when training ends; a killed attempt's stale file is never reused.

Data layout: the window has S shards; with W ranks (S divisible by W) rank r owns shards r, r+W, ... . A step
takes `c = batch_per_rank * W / S` consecutive rows from every shard, each shard's rows forming one
micro-batch whose gradients are averaged (so W ranks over S shards and one rank over the same S shards with a
W times larger batch compute the same update). Batch i of shard j is a pure function of (i, j): rows i*c ..
(i+1)*c-1 and one random symmetry per example drawn from a generator seeded by (run seed, generation, j, i).
Batch norm running statistics follow the first shard of rank 0 (torch DDP's default of broadcasting rank 0's
buffers). Gradients are summed by one flat all-reduce per step; for two ranks the sum is exact whatever the
order, for more ranks gloo's ring order is fixed for a given world size, so a run is reproducible for a given
number of ranks.

Everything needed to resume lives in `{work_dir}/checkpoint.pt` (weights, optimiser, step, RNG state; the data
position is the step), written atomically every `train.checkpoint_every` steps. A restarted job resumes from
it and ends with the same weights as an uninterrupted one. Metrics go to `{work_dir}/metrics.jsonl`.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from minigo_core import config as config_mod
from minigo_core import prefetch, shards, storage, symmetries
from minigo_core import window as window_mod

if TYPE_CHECKING:
    import torch

# torch (and the model module, which imports it) is imported inside the functions that run a rank, so that the
# launcher of `--ranks N` starts its ranks at once instead of first paying for torch's import itself.

CHECKPOINT_FORMAT = "minigo-train-checkpoint"
CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.jsonl"
DEFAULT_TIMEOUT_S = 600.0
# Step ids of the batch script, extern and interactive steps (Slurm >= 20.11, then older): not srun tasks.
SLURM_NON_TASK_STEPS = (
    *("batch", "extern", "interactive"),
    *("4294967290", "4294967291", "4294967292", "4294967294", "4294967295"),
)
STOPPED_EARLY = 3  # exit code of `--stop-after`: checkpointed, no model written


class TrainError(RuntimeError):
    """Training cannot start or a rank failed; the message says which file, key or rank, and what to do."""


# ---- where the ranks meet ----------------------------------------------------------------------------------
def slurm_rank_env(env: Mapping[str, str] | None = None) -> tuple[int, int, int] | None:
    """(rank, world size, local rank) when running as a task of an `srun` step, else None."""
    env = os.environ if env is None else env
    keys = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID", "SLURM_JOB_ID")
    if not all(k in env for k in keys):
        return None
    if env["SLURM_STEP_ID"] in SLURM_NON_TASK_STEPS:  # the batch script itself, not a task of an srun step
        return None
    return int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"]), int(env.get("SLURM_LOCALID", "0"))


def rendezvous_path(work_dir: str, env: Mapping[str, str] | None = None) -> str:
    """A rendezvous file path unique to this attempt.

    Under srun every task computes the same name from the job id, step id and restart count; otherwise (the
    parent of a local launch) a fresh random name.
    """
    env = os.environ if env is None else env
    if slurm_rank_env(env) is not None:
        tag = f"slurm-{env['SLURM_JOB_ID']}-{env['SLURM_STEP_ID']}-{env.get('SLURM_RESTART_COUNT', '0')}"
    else:
        tag = uuid.uuid4().hex
    return storage.join(work_dir, f"rdzv-{tag}")


def _local_path(url: str, what: str) -> str:
    fs, path = storage.fs_and_path(url)
    if "file" not in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)):
        raise TrainError(
            f"{what} {url} must be on a POSIX filesystem shared by the ranks (the rendezvous file needs file "
            "locking); pass --work-dir on the shared filesystem"
        )
    return path


@dataclass
class Window:
    """A window's manifest as training needs it."""

    dir: str
    manifest_sha256: str
    shard_urls: list[str]
    shard_rows: list[int]
    shard_sha256: list[str]
    board_size: int
    feature_set: str
    num_planes: int
    rows: int


def read_window(window_dir: str) -> Window:
    url = storage.join(window_dir, "manifest.json")
    try:
        data = storage.read_bytes(url)
    except FileNotFoundError:
        raise TrainError(
            f"window manifest {url} does not exist; run `minigo window` for this generation"
        ) from None
    try:
        manifest = json.loads(data)
        shard_list = manifest["shards"]
        return Window(
            dir=window_dir,
            manifest_sha256=window_mod.manifest_digest(manifest),
            shard_urls=[storage.join(window_dir, s["name"]) for s in shard_list],
            shard_rows=[int(s["rows"]) for s in shard_list],
            shard_sha256=[str(s["sha256"]) for s in shard_list],
            board_size=int(manifest["board_size"]),
            feature_set=str(manifest["feature_set"]),
            num_planes=int(manifest["num_planes"]),
            rows=int(manifest["rows"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise TrainError(f"window manifest {url} is not valid ({exc!r}); rebuild the window") from None


# ---- one rank ----------------------------------------------------------------------------------------------
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
    rendezvous: str | None = None
    stop_after: int | None = None
    prefetch_threads: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    log_every: int = 10
    quiet: bool = False
    record_wall_time: bool = True  # False: identical inputs give a byte-identical model file
    extra_provenance: dict = field(default_factory=dict)


@dataclass
class MicroBatch:
    x: torch.Tensor  # float32 (c, P, N, N)
    pi: torch.Tensor  # float32 (c, N*N+1)
    z: torch.Tensor  # float32 (c,)


def augment(planes: np.ndarray, pi: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One random symmetry of the 8 per example (planes (n, P, N, N), pi (n, N*N+1))."""
    board_size = planes.shape[-1]
    sym = rng.integers(0, symmetries.NUM_SYMMETRIES, size=planes.shape[0])
    out_planes, out_pi = np.empty_like(planes), np.empty_like(pi)
    for s in range(symmetries.NUM_SYMMETRIES):
        rows = np.flatnonzero(sym == s)
        if rows.size:
            out_planes[rows] = symmetries.apply_planes(s, planes[rows])
            out_pi[rows] = symmetries.apply_policy(s, pi[rows], board_size)
    return out_planes, out_pi


class BatchMaker:
    """`make(i)`: the micro-batches of step i for the shards this rank owns (a pure function of i)."""

    def __init__(
        self,
        loaded: list[shards.LoadedShard],
        shard_ids: list[int],
        chunk: int,
        seed: int,
        generation: int,
        device: torch.device,
    ) -> None:
        self.loaded, self.shard_ids, self.chunk = loaded, shard_ids, chunk
        self.seed, self.generation, self.device = seed, generation, device

    def __call__(self, step: int) -> list[MicroBatch]:
        import torch

        out = []
        for shard, j in zip(self.loaded, self.shard_ids, strict=True):
            ex = shard.rows(step * self.chunk, (step + 1) * self.chunk)
            rng = np.random.default_rng([self.seed, self.generation, j, step])
            planes, pi = augment(ex.planes, ex.pi, rng)
            out.append(
                MicroBatch(
                    x=torch.from_numpy(planes).to(torch.float32),
                    pi=torch.from_numpy(pi),
                    z=torch.from_numpy(ex.z),
                )
            )
        return out


def _param_groups(net: torch.nn.Module, l2: float) -> list[dict]:
    """L2 on conv and dense weights only; biases and batch-norm parameters are not decayed."""
    decay, no_decay = [], []
    for name, p in net.named_parameters():
        is_bn = ".bn." in f".{name}" or name.startswith("bn.")
        (decay if p.ndim > 1 and not is_bn else no_decay).append(p)
    return [{"params": decay, "weight_decay": l2}, {"params": no_decay, "weight_decay": 0.0}]


@contextlib.contextmanager
def _buffers_kept(net: torch.nn.Module, keep: bool):
    """With keep=True, undo any change the block makes to the batch-norm running statistics."""
    import torch

    if not keep:
        yield
        return
    saved = [b.detach().clone() for b in net.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for b, s in zip(net.buffers(), saved, strict=True):
                b.copy_(s)


def _losses(net: torch.nn.Module, mb: MicroBatch) -> tuple[torch.Tensor, torch.Tensor]:
    import torch.nn.functional as F

    logits, value = net(mb.x)
    policy_loss = -(mb.pi * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = F.mse_loss(value, mb.z)
    return policy_loss, value_loss


def sgd_step(
    net: torch.nn.Module,
    opt: torch.optim.Optimizer,
    micro: list[MicroBatch],
    lr: float,
    value_weight: float,
    world: int,
    device: torch.device,
) -> tuple[float, float]:
    """One synchronous SGD step over this rank's micro-batches; returns the global (policy, value) losses.

    Each micro-batch's loss is scaled by 1 / (micro-batches x ranks) so that the gradients summed here and
    by the all-reduce are the mean over the global batch. Only the first micro-batch updates the batch-norm
    running statistics (as DDP keeps rank 0's).
    """
    import torch

    for group in opt.param_groups:
        group["lr"] = lr
    opt.zero_grad(set_to_none=False)
    scale = 1.0 / (len(micro) * world)
    stats = torch.zeros(2, dtype=torch.float32, device=device)
    for k, mb in enumerate(micro):
        with _buffers_kept(net, keep=k > 0):
            policy_loss, value_loss = _losses(
                net, MicroBatch(mb.x.to(device), mb.pi.to(device), mb.z.to(device))
            )
            ((policy_loss + value_weight * value_loss) * scale).backward()
        stats += torch.stack([policy_loss.detach(), value_loss.detach()]) * scale
    if world > 1:
        import torch.distributed as dist

        params = list(net.parameters())
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [stats])
        dist.all_reduce(flat)  # the sum over ranks: one flat buffer, one ring all-reduce
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p.grad))
            offset += p.numel()
        stats = flat[offset:]
    opt.step()
    return float(stats[0]), float(stats[1])


def _checkpoint_identity(job: TrainJob, window: Window, parent_digest: str, chunk: int) -> dict:
    return {
        "generation": job.generation,
        "window_manifest_sha256": window.manifest_sha256,
        "parent_sha256": parent_digest,
        "chunk": chunk,
        "shards": len(window.shard_urls),
        "seed": job.cfg.seed,
        "train": config_mod.to_plain(job.cfg.train),
    }


def _save_checkpoint(
    url: str, identity: dict, net: torch.nn.Module, opt: torch.optim.Optimizer, step: int, recent: list
) -> None:
    import torch

    payload = {
        "format": CHECKPOINT_FORMAT,
        "identity_json": json.dumps(identity, sort_keys=True),
        "step": step,
        "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
        "optimizer": opt.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "recent_losses": [list(x) for x in recent],
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    storage.write_bytes(url, buf.getvalue())


def _load_checkpoint(url: str, identity: dict, log) -> dict | None:
    import torch

    if not storage.exists(url):
        return None
    try:
        payload = torch.load(io.BytesIO(storage.read_bytes(url)), map_location="cpu", weights_only=True)
    except Exception as exc:  # a foreign or damaged file: start over rather than fail
        log(
            f"checkpoint {url} is unreadable ({type(exc).__name__}); starting this generation from the parent"
        )
        return None
    if payload.get("format") != CHECKPOINT_FORMAT or payload.get("identity_json") != json.dumps(
        identity, sort_keys=True
    ):
        log(f"checkpoint {url} belongs to other inputs (window, parent or settings differ); ignoring it")
        return None
    return payload


def _append_metrics(url: str, record: dict) -> None:
    fs, path = storage.fs_and_path(url)
    with fs.open(path, "a") as handle:
        handle.write(json.dumps(record) + "\n")


def _init_process_group(job: TrainJob, device: torch.device) -> None:
    import torch.distributed as dist

    path = _local_path(job.rendezvous or "", "rendezvous file")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    store = dist.FileStore(path, job.world_size)
    dist.init_process_group(
        backend="nccl" if device.type == "cuda" else "gloo",
        store=store,
        rank=job.rank,
        world_size=job.world_size,
        timeout=datetime.timedelta(seconds=job.timeout_s),
    )


def train(job: TrainJob) -> dict | None:
    """Run one rank of the training job. Returns the provenance written (rank 0), or None when stopped early.

    With `world_size == 1` no process group is made. Raises TrainError with what to do on bad inputs.
    torch's global settings (threads, RNG, determinism) are restored afterwards, so it can run in-process.
    """
    import torch

    saved = (torch.get_num_threads(), torch.get_rng_state(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())  # fmt: skip
    try:
        return _train(job)
    finally:
        torch.set_num_threads(saved[0])
        torch.set_rng_state(saved[1])
        torch.use_deterministic_algorithms(saved[2], warn_only=saved[3])


def _train(job: TrainJob) -> dict | None:
    """The body of `train`: one rank, from the window manifest to the model file."""
    import torch

    from minigo_core import model as model_mod

    t_start = time.perf_counter()
    cfg, tcfg = job.cfg, job.cfg.train
    log = (
        (lambda msg: None)
        if job.quiet
        else (
            lambda msg: print(f"[train g{job.generation} rank {job.rank}] {msg}", file=sys.stderr, flush=True)
        )
    )
    window = read_window(job.window_dir)
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
    steps = min(window.shard_rows) // chunk
    if steps == 0:
        raise TrainError(
            f"window {job.window_dir} has only {min(window.shard_rows)} rows in its smallest shard, fewer "
            f"than one batch of {chunk}; play more games, raise window.sample_fraction or lower "
            "train.batch_per_rank"
        )

    torch.manual_seed((cfg.seed * 1_000_003 + job.generation) % 2**63)
    torch.set_num_threads(tcfg.threads_per_rank)
    cuda = torch.cuda.is_available() and tcfg.backend == "torch"
    device = torch.device(f"cuda:{job.local_rank % max(1, torch.cuda.device_count())}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.use_deterministic_algorithms(True, warn_only=True)

    net = model_mod.load_model(job.parent, backend=tcfg.backend, threads=tcfg.threads_per_rank)
    if (net.cfg.board_size, net.cfg.feature_set, net.cfg.planes) != (
        window.board_size,
        window.feature_set,
        window.num_planes,
    ):
        raise TrainError(
            f"parent model {job.parent} is {net.cfg.board_size}x{net.cfg.board_size} with "
            f"{net.cfg.feature_set} "
            f"features but window {job.window_dir} holds {window.board_size}x{window.board_size} "
            f"{window.feature_set} examples; check --parent and --window-dir"
        )
    parent_digest = model_mod.model_digest(job.parent)
    global_step0 = int(net.provenance.get("global_step", 0))
    net.to(device).train()
    opt = torch.optim.SGD(
        _param_groups(net, tcfg.l2),
        lr=config_mod.learning_rate_at(tcfg.learning_rate, global_step0),
        momentum=tcfg.momentum,
    )

    identity = _checkpoint_identity(job, window, parent_digest, chunk)
    fs, work_path = storage.fs_and_path(job.work_dir)
    fs.makedirs(work_path, exist_ok=True)
    ckpt_url = storage.join(job.work_dir, CHECKPOINT_NAME)
    metrics_url = storage.join(job.work_dir, METRICS_NAME)
    start_step = 0
    ckpt = _load_checkpoint(ckpt_url, identity, log)
    if ckpt is not None:
        net.load_state_dict(ckpt["state_dict"])
        opt.load_state_dict(ckpt["optimizer"])
        torch.set_rng_state(ckpt["torch_rng"])
        start_step = int(ckpt["step"])
        log(f"resuming from {ckpt_url} at step {start_step} of {steps}")

    if world > 1:
        _init_process_group(job, device)

    t_load = time.perf_counter()
    my_shards = list(range(job.rank, n_shards, world))
    loaded = [shards.load_shard(window.shard_urls[j], window.shard_sha256[j]) for j in my_shards]
    load_s = time.perf_counter() - t_load
    maker = BatchMaker(loaded, my_shards, chunk, cfg.seed, job.generation, device)
    feeder = prefetch.Prefetcher(
        maker, start_step, steps, capacity=tcfg.prefetch_batches, threads=job.prefetch_threads
    )
    decayed = opt.param_groups[0]["params"]
    global_batch = tcfg.batch_per_rank * world
    if job.rank == 0:
        log(
            f"{steps} steps of {global_batch} examples ({world} ranks x {tcfg.batch_per_rank}; {n_shards} "
            f"shards of >= {min(window.shard_rows)} rows), global step {global_step0 + start_step}, "
            f"backend {tcfg.backend}, "
            f"device {device}"
        )
        _append_metrics(
            metrics_url,
            {
                "event": "start",
                "generation": job.generation,
                "steps": steps,
                "start_step": start_step,
                "ranks": world,
                "global_batch": global_batch,
                "load_s": load_s,
                "backend": tcfg.backend,
            },
        )

    recent: list[tuple[float, float]] = [tuple(x) for x in ckpt["recent_losses"]] if ckpt is not None else []
    t_interval, wait_interval, steps_interval = time.perf_counter(), 0.0, 0
    compute_s = 0.0
    for step, micro in enumerate(feeder, start=start_step):
        t_step = time.perf_counter()
        lr = config_mod.learning_rate_at(tcfg.learning_rate, global_step0 + step)
        policy_loss, value_loss = sgd_step(net, opt, micro, lr, tcfg.value_weight, world, device)
        compute_s += time.perf_counter() - t_step
        recent.append((policy_loss, value_loss))
        recent = recent[-20:]
        steps_interval += 1
        done = step + 1
        if job.rank == 0 and (done % job.log_every == 0 or done == steps):
            now = time.perf_counter()
            wait_total = feeder.wait_s
            l2_loss = 0.5 * tcfg.l2 * sum(float(p.detach().pow(2).sum()) for p in decayed)
            _append_metrics(
                metrics_url,
                {
                    "event": "step",
                    "step": done,
                    "global_step": global_step0 + done,
                    "lr": lr,
                    "policy_loss": policy_loss,
                    "value_loss": value_loss,
                    "l2_loss": l2_loss,
                    "loss": policy_loss + tcfg.value_weight * value_loss + l2_loss,
                    "examples_per_s": steps_interval * global_batch / max(now - t_interval, 1e-9),
                    "step_ms": 1000 * (now - t_interval) / steps_interval,
                    "data_wait_ms": 1000 * (wait_total - wait_interval) / steps_interval,
                },
            )
            t_interval, wait_interval, steps_interval = now, wait_total, 0
        if job.rank == 0 and done % tcfg.checkpoint_every == 0 and done < steps:
            _save_checkpoint(ckpt_url, identity, net, opt, done, recent)
        if job.stop_after is not None and done >= job.stop_after and done < steps:
            if job.rank == 0:
                _save_checkpoint(ckpt_url, identity, net, opt, done, recent)
                log(
                    f"stopped after step {done} of {steps} (--stop-after); checkpoint {ckpt_url}; "
                    "rerun to resume"
                )
            feeder.close()
            _finish_group(world, job)
            return None

    wall_s = time.perf_counter() - t_start
    ran = steps - start_step
    wait_s = feeder.wait_s
    summary = torch.tensor([wait_s, compute_s, float(ran), feeder.first_wait_s], dtype=torch.float64)
    gathered = [summary]
    if world > 1:  # every rank's data wait and compute time, for the metrics
        import torch.distributed as dist

        gathered = [torch.zeros_like(summary, device=device) for _ in range(world)]
        dist.all_gather(gathered, summary.to(device))
        gathered = [g.cpu() for g in gathered]
    result = None
    if job.rank == 0:
        final = np.mean(np.array(recent), axis=0) if recent else np.array([float("nan")] * 2)
        provenance = {
            "generation": job.generation,
            "parent": job.parent,
            "parent_sha256": parent_digest,
            "window": job.window_dir,
            "window_manifest_sha256": window.manifest_sha256,
            "steps": steps,
            "examples": steps * global_batch,
            "global_step": global_step0 + steps,
            "ranks": world,
            "batch_per_rank": tcfg.batch_per_rank,
            "final_losses": {"policy": float(final[0]), "value": float(final[1])},
            "learning_rate_final": config_mod.learning_rate_at(tcfg.learning_rate, global_step0 + steps - 1),
            "seed": cfg.seed,
            **({"wall_time_s": round(wall_s, 3)} if job.record_wall_time else {}),
            **job.extra_provenance,
        }
        net.to("cpu")
        model_mod.save_model(job.out, net, provenance)
        per_rank_wait = [float(g[0]) for g in gathered]
        _append_metrics(
            metrics_url,
            {
                "event": "end",
                "steps": steps,
                "steps_run": ran,
                "wall_s": wall_s,
                "load_s": load_s,
                "examples_per_s": ran
                * global_batch
                / max(sum(float(g[1] + g[0]) for g in gathered) / world, 1e-9),
                "data_wait_s_per_rank": per_rank_wait,
                "first_batch_wait_s_per_rank": [float(g[3]) for g in gathered],
                "data_wait_fraction": sum(per_rank_wait)
                / max(sum(float(g[0] + g[1]) for g in gathered), 1e-9),
                "final_losses": provenance["final_losses"],
                "resumed_from_step": start_step,
                "model": job.out,
            },
        )
        with contextlib.suppress(FileNotFoundError):
            fs.rm(storage.fs_and_path(ckpt_url)[1])  # the model is written: the checkpoint has served
        log(
            f"wrote {job.out}: {steps} steps, global step {global_step0 + steps}, "
            f"policy loss {final[0]:.4f}, value loss {final[1]:.4f}, {wall_s:.1f} s, "
            f"data wait {100 * (wait_s - feeder.first_wait_s) / max(wait_s + compute_s, 1e-9):.1f}% of step "
            f"time after a first batch of {feeder.first_wait_s:.2f} s"
        )
        result = provenance
    _finish_group(world, job)
    return result


def _finish_group(world: int, job: TrainJob) -> None:
    if world <= 1:
        return
    import torch.distributed as dist

    dist.barrier()
    dist.destroy_process_group()
    if job.rank == 0 and job.rendezvous:
        with contextlib.suppress(FileNotFoundError):
            os.remove(_local_path(job.rendezvous, "rendezvous file"))


# ---- launching N local ranks -------------------------------------------------------------------------------
def _die_with_parent() -> None:
    """In a child: get SIGKILL when the launching parent dies (Linux), so no rank outlives its job."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def launch_local(
    base_argv: list[str],
    ranks: int,
    work_dir: str,
    timeout_s: float,
    poll_s: float = 0.2,
    out: str | None = None,
) -> int:
    """Start `ranks` processes of this command, one per rank, and watch them.

    If a rank exits with an error the others are stopped and the job fails naming the rank; the rendezvous
    file (unique to this launch) is removed in every case. A failed job leaves no model: if rank 0 wrote `out`
    during this launch before another rank died (it can, in the moments after the last collective), the file
    is removed, so a failed job never leaves its output under the final name.
    """
    out_before = _file_stamp(out) if out is not None else None
    rdzv = rendezvous_path(work_dir, env={})
    path = _local_path(rdzv, "rendezvous file")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    procs: list[subprocess.Popen] = []
    failed: tuple[int, int] | None = None
    previous = None
    if threading.current_thread() is threading.main_thread():
        # A scheduler stops jobs with SIGTERM: turn it into SystemExit so the cleanup below still runs.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        for r in range(ranks):
            argv = [
                sys.executable,
                "-m",
                "minigo_core.train",
                *base_argv,
                "--rank",
                str(r),
                "--world-size",
                str(ranks),
                "--rendezvous",
                rdzv,
                "--timeout",
                str(timeout_s),
            ]
            procs.append(subprocess.Popen(argv))
        while True:
            codes = [p.poll() for p in procs]
            bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0, STOPPED_EARLY)]
            if bad:
                failed = bad[0]
                break
            if all(c is not None for c in codes):
                break
            time.sleep(poll_s)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 10
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if failed is not None:
        rank, code = failed
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        print(
            f"minigo train: rank {rank} of {ranks} {how}; the other ranks were stopped (see rank {rank}'s "
            "messages above)",
            file=sys.stderr,
        )
        if out is not None and _file_stamp(out) not in (None, out_before):
            fs, path = storage.fs_and_path(out)
            with contextlib.suppress(FileNotFoundError):
                fs.rm(path)
            print(f"minigo train: removed {out}, written before rank {rank} failed; rerun the job",
                  file=sys.stderr)  # fmt: skip
        return 1
    return STOPPED_EARLY if any(p.returncode == STOPPED_EARLY for p in procs) else 0


def _file_stamp(url: str) -> tuple | None:
    """(size, modification time) of the file at `url`, or None when there is none."""
    fs, path = storage.fs_and_path(url)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    return (info.get("size"), str(info.get("mtime", info.get("LastModified"))))


# ---- command line ------------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="minigo train",
        description="Data-parallel training of generation G over "
        "its window's shards, starting from the parent model.",
    )
    p.add_argument("--config", required=True, help="run config YAML")
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
        help="checkpoints, metrics and the rendezvous file (default {root}/train/genGGGG)",
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
        default=DEFAULT_TIMEOUT_S,
        help="seconds a rank waits for the others in a collective before failing",
    )
    p.add_argument(
        "--no-wall-time",
        action="store_true",
        help="leave the wall time out of the model's provenance, so identical inputs give a byte-identical "
        "model file (it stays in metrics.jsonl)",
    )
    p.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--world-size", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--rendezvous", default=None, help=argparse.SUPPRESS)
    return p


def cli_main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cfg = config_mod.load_config(args.config)
    except config_mod.ConfigError as exc:
        print(f"minigo train: {exc}", file=sys.stderr)
        return 2
    if args.generation < 1:
        print("minigo train: --generation must be >= 1 (generation 0 is `minigo bootstrap`)", file=sys.stderr)
        return 2
    work_dir = args.work_dir or storage.train_dir(cfg.root, args.generation)
    job = TrainJob(
        cfg=cfg,
        generation=args.generation,
        window_dir=args.window_dir,
        parent=args.parent,
        out=args.out,
        work_dir=work_dir,
        stop_after=args.stop_after,
        prefetch_threads=args.prefetch_threads,
        timeout_s=args.timeout,
        record_wall_time=not args.no_wall_time,
    )
    slurm = slurm_rank_env()
    if args.rank is not None:  # a child of a local launch
        _die_with_parent()
        job.rank, job.world_size, job.rendezvous = args.rank, args.world_size, args.rendezvous
        job.local_rank = args.rank
    elif args.ranks is None and slurm is not None:  # one task of an srun step
        job.rank, job.world_size, job.local_rank = slurm
        job.rendezvous = rendezvous_path(work_dir)
    else:
        ranks = args.ranks if args.ranks is not None else cfg.train.ranks
        if ranks < 1:
            print("minigo train: --ranks must be >= 1", file=sys.stderr)
            return 2
        if ranks > 1:
            base = list(argv if argv is not None else sys.argv[1:])
            base = _strip_option(base, "--ranks")
            return launch_local(base + ["--work-dir", work_dir], ranks, work_dir, args.timeout, out=args.out)
    from minigo_core import model as model_mod

    try:
        result = train(job)
    except (TrainError, shards.ShardError, model_mod.ModelFileError) as exc:
        print(f"minigo train (rank {job.rank}): {exc}", file=sys.stderr)
        return 1
    if result is None and job.stop_after is not None:
        return STOPPED_EARLY
    return 0


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
