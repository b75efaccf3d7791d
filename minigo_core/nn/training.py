"""The torch side of `minigo train` (`minigo_core.nn.train_job`): one rank's network, optimiser, SGD step.

`Trainer.from_parent` sets up torch for a rank (seed, threads, device, deterministic algorithms), loads the
parent model and makes its SGD optimiser; `Trainer.step` is one synchronous step over the rank's micro-batches
with one flat all-reduce of the gradients, then (`train.ema_decay`) one step of the weights' moving average
(`minigo_core.nn.ema`); checkpoints (weights, their average, optimiser, RNG state), the process group and
the end-of-run gather are here too. The job itself (plan, data, metrics, launching ranks) is torch-free.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

from minigo_core.base import config as config_mod
from minigo_core.base.runtime import Runtime
from minigo_core.data import storage
from minigo_core.nn import model as model_mod
from minigo_core.nn import modelfile
from minigo_core.nn.ema import WeightEMA
from minigo_core.nn.flatsgd import FlatSGD
from minigo_core.nn.modelfile import ModelConfig

CHECKPOINT_FORMAT = "minigo-train-checkpoint"


@contextlib.contextmanager
def torch_state_kept() -> Iterator[None]:
    """Restore torch's global settings (threads, RNG, determinism) after the block (training in-process)."""
    saved = (torch.get_num_threads(), torch.get_rng_state(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())  # fmt: skip
    try:
        yield
    finally:
        torch.set_num_threads(saved[0])
        torch.set_rng_state(saved[1])
        set_deterministic(saved[2], warn_only=saved[3])


LOSSES = ("policy", "value", "ownership", "score", "reply")  # what `sgd_step` returns, in this order


@dataclass
class MicroBatch:
    x: torch.Tensor  # float32 (c, P, N, N)
    pi: torch.Tensor  # float32 (c, N*N+1)
    z: torch.Tensor  # float32 (c,)
    own: torch.Tensor | None = None  # float32 (c, N*N): final ownership, the mover's view (1, -1, 0)
    score: torch.Tensor | None = None  # float32 (c,): final score margin, points, the mover's view; NaN: none
    reply: torch.Tensor | None = None  # int64 (c,): the opponent's answer, flat index (pass N*N); -1: none

    @classmethod
    def from_arrays(
        cls,
        planes: np.ndarray,
        pi: np.ndarray,
        z: np.ndarray,
        own: np.ndarray | None = None,
        score: np.ndarray | None = None,
        reply: np.ndarray | None = None,
    ) -> MicroBatch:
        """One shard's examples of a step (planes (c, P, N, N), pi (c, N*N+1), z (c,), the auxiliary
        targets own (c, N*N) and score (c,), and the opponent-reply target (c,), -1 for none) as tensors."""
        return cls(
            x=torch.from_numpy(planes).to(torch.float32),
            pi=torch.from_numpy(pi),
            z=torch.from_numpy(z),
            own=None if own is None else torch.from_numpy(own).to(torch.float32),
            score=None if score is None else torch.from_numpy(score).to(torch.float32),
            reply=None if reply is None else torch.from_numpy(np.asarray(reply, dtype=np.int64)),
        )

    def to(self, device: torch.device) -> MicroBatch:
        def move(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.to(device)

        return MicroBatch(self.x.to(device), self.pi.to(device), self.z.to(device), move(self.own),
                          move(self.score), move(self.reply))  # fmt: skip


def param_groups(net: torch.nn.Module, l2: float) -> list[dict]:
    """L2 on conv and dense weights only; biases and batch-norm parameters are not decayed."""
    decay, no_decay = [], []
    for name, p in net.named_parameters():
        is_bn = ".bn." in f".{name}" or name.startswith("bn.")
        (decay if p.ndim > 1 and not is_bn else no_decay).append(p)
    return [{"params": decay, "weight_decay": l2}, {"params": no_decay, "weight_decay": 0.0}]


@contextlib.contextmanager
def _buffers_kept(net: torch.nn.Module, keep: bool) -> Iterator[None]:
    """With keep=True, undo any change the block makes to the batch-norm running statistics."""
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


def _losses(net: torch.nn.Module, mb: MicroBatch) -> torch.Tensor:
    """The losses (`LOSSES`) of a micro-batch, each a mean over its examples (`_stats`)."""
    return _stats(net, mb)[: len(LOSSES)]


def _stats(net: torch.nn.Module, mb: MicroBatch) -> torch.Tensor:
    """The losses (`LOSSES`) of a micro-batch, each a mean over its examples, then its policy accuracy: the
    fraction of its examples whose most likely move under the network is the target's most likely move.

    Ownership: binary cross-entropy per point between the ownership logits and (1 + own) / 2, averaged over
    the points (KataGo's form; a neutral point is a target of 1/2). Score: squared error of the predicted
    margin / N*N. Rows without auxiliary targets (resigned games: score NaN) add nothing to either; a net
    without the auxiliary heads gives 0 for both. Reply: cross-entropy of the opponent-reply logits against
    the move the opponent played next, the mean over the rows that have one (0 when none has, or the net has
    no reply head).
    """
    logits, value, own_logits, score, reply_logits = net.forward_train(mb.x)
    policy_loss = -(mb.pi * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = F.mse_loss(value, mb.z)
    zero = value_loss.new_zeros(())
    own_loss = score_loss = zero
    if own_logits is not None and mb.own is not None and mb.score is not None:
        has = torch.isfinite(mb.score).to(value.dtype)
        per_point = F.binary_cross_entropy_with_logits(own_logits, (1 + mb.own) / 2, reduction="none")
        own_loss = (per_point.mean(dim=1) * has).mean()
        target = torch.nan_to_num(mb.score, nan=0.0) / own_logits.shape[1]
        score_loss = ((score - target).square() * has).mean()
    reply_loss = zero
    if reply_logits is not None and mb.reply is not None:
        has = mb.reply >= 0
        per_row = F.cross_entropy(reply_logits, mb.reply.clamp(min=0), reduction="none")
        reply_loss = (per_row * has.to(value.dtype)).sum() / has.sum().clamp(min=1).to(value.dtype)
    hits = (logits.detach().argmax(dim=1) == mb.pi.argmax(dim=1)).to(value.dtype).mean()
    return torch.stack([policy_loss, value_loss, own_loss, score_loss, reply_loss, hits])


def sgd_step(
    net: torch.nn.Module,
    opt: torch.optim.Optimizer,
    micro: list[MicroBatch],
    lr: float,
    weights: tuple[float, ...],
    world: int,
    device: torch.device,
    votes: torch.Tensor | None = None,
) -> tuple[float, ...]:
    """One synchronous SGD step over this rank's micro-batches; returns the global losses (`LOSSES`)
    (`sgd_step_stats`: and the global batch's policy accuracy)."""
    return sgd_step_stats(net, opt, micro, lr, weights, world, device, votes)[0]


def sgd_step_stats(
    net: torch.nn.Module,
    opt: torch.optim.Optimizer,
    micro: list[MicroBatch],
    lr: float,
    weights: tuple[float, ...],
    world: int,
    device: torch.device,
    votes: torch.Tensor | None = None,
) -> tuple[tuple[float, ...], float]:
    """One synchronous SGD step over this rank's micro-batches; returns the global losses (`LOSSES`) and the
    global batch's policy accuracy (`_stats`, carried by the same all-reduce).

    `votes` (float32, on `device`), if given, is summed over the ranks in place by the step's all-reduce:
    the ranks agree on something (stop after this step) without a collective of its own.

    The loss is policy + value_w * value + ownership_w * ownership + score_w * score + reply_w * reply
    (`weights` = the w in that order; a reply_w left off is 0).

    Each micro-batch's loss is scaled by 1 / (micro-batches x ranks) so that the gradients summed here and
    by the all-reduce are the mean over the global batch. Only the first micro-batch updates the batch-norm
    running statistics (as DDP keeps rank 0's).
    """
    for group in opt.param_groups:
        group["lr"] = lr
    opt.zero_grad(set_to_none=False)
    scale = 1.0 / (len(micro) * world)
    n = len(LOSSES) + 1  # the losses, then the policy accuracy
    stats = torch.zeros(n, dtype=torch.float32, device=device)
    if not len(LOSSES) - 2 <= len(weights) <= len(LOSSES) - 1:
        raise ValueError(
            f"weights: the w of {', '.join(LOSSES[1:])} (the last may be left off), got {weights}"
        )
    w = torch.tensor([1.0, *weights, *[0.0] * (len(LOSSES) - 1 - len(weights))], dtype=torch.float32,
                     device=device)  # fmt: skip
    for k, mb in enumerate(micro):
        with _buffers_kept(net, keep=k > 0):
            values = _stats(net, mb.to(device))
            ((values[: len(LOSSES)] * w).sum() * scale).backward()
        stats += values.detach() * scale
    if world > 1:
        params = list(net.parameters())
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [stats] + ([] if votes is None else [votes]))
        dist.all_reduce(flat)  # the sum over ranks: one flat buffer, one ring all-reduce
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p.grad))
            offset += p.numel()
        stats = flat[offset : offset + n]
        if votes is not None:
            votes.copy_(flat[offset + n :])
    opt.step()
    values = [float(v) for v in stats]
    return tuple(values[: len(LOSSES)]), values[len(LOSSES)]


def _setup_torch(seed: int, threads: int, backend: str, local_rank: int) -> torch.device:
    """Seed torch's RNG, set its threads and pick the rank's device (a GPU for the torch backend, if any)."""
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    cuda = torch.cuda.is_available() and backend == "torch"
    device = torch.device(f"cuda:{local_rank % max(1, torch.cuda.device_count())}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    set_deterministic(True, warn_only=True)
    return device


def set_deterministic(mode: bool, warn_only: bool) -> None:
    """torch's deterministic-algorithms flag, without the second of start-up a training job would pay for it:
    `torch.use_deterministic_algorithms` imports torch._inductor (and dynamo) to set the compiler's copy of
    the flag, which only torch.compile reads, and training does not compile. Where the compiler is already
    loaded (or torch lacks the low-level setter), the public call sets both."""
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


@dataclass
class Resumed:
    """What a checkpoint gives back besides the weights, optimiser and RNG state: the data position."""

    step: int
    recent_losses: list[tuple[float, float]]
    metrics: str | None = None  # the metrics file as it was at the checkpoint (None: not kept)


class Trainer:
    """One rank's network (in training mode on its device), its SGD optimiser and its step; with
    `train.ema_decay` the moving average of its weights (`ema`, from `ema_start`, else the net's weights),
    which is what `save_model` writes as the model, the raw weights beside it."""

    def __init__(
        self,
        net: model_mod.DualNet,
        tcfg: config_mod.TrainSettings,
        device: torch.device,
        world: int,
        ema_start: dict[str, torch.Tensor] | None = None,
    ):
        self.net, self.device, self.world = net, device, world
        self.global_step0 = int(net.provenance.get("global_step", 0))  # the parent's: the schedule goes on
        net.to(device).train()
        self.opt = FlatSGD(  # torch's SGD over one flat buffer: the same floats, far fewer ops
            param_groups(net, tcfg.l2),
            lr=config_mod.learning_rate_at(tcfg.learning_rate, self.global_step0),
            momentum=tcfg.momentum,
        )
        self.ema = None
        if tcfg.ema_decay is not None:
            self.ema = WeightEMA(
                net, self.opt, tcfg.ema_decay, net.state_dict() if ema_start is None else ema_start
            )

    @classmethod
    def from_parent(
        cls,
        parent: str,
        tcfg: config_mod.TrainSettings,
        seed: int,
        local_rank: int,
        world: int,
        runtime: Runtime | None = None,
    ) -> Trainer:
        """Set up torch for the rank (`seed` seeds its RNG), load the parent model, make the optimiser.

        Training goes on from the parent's raw weights where it has them (a model trained with
        `train.ema_decay`), else from its weights; the moving average from its weights (for generation 0,
        or a parent trained without the average, the two are the same). `runtime`: how the rank runs, its
        `threads` the torch threads and the dsp kernels' cores (default: `tcfg.threads_per_rank` of them).
        """
        runtime = runtime or Runtime(threads=tcfg.threads_per_rank)
        device = _setup_torch(seed, runtime.threads, tcfg.backend, local_rank)
        f = modelfile.read(parent)
        net = model_mod.model_from_file(f, backend=tcfg.backend, runtime=runtime, raw=True)
        ema_start = None
        if tcfg.ema_decay is not None:
            ema_start = {k: torch.from_numpy(np.array(v)) for k, v in f.tensors.items()}
        return cls(net, tcfg, device, world, ema_start)

    @property
    def model_config(self) -> ModelConfig:
        return self.net.cfg

    micro_batch = staticmethod(MicroBatch.from_arrays)

    def step(self, micro: list[MicroBatch], lr: float, weights: tuple[float, ...]) -> tuple[float, ...]:
        """One synchronous SGD step (`sgd_step`), then the moving average's; returns the global losses."""
        losses = sgd_step(self.net, self.opt, micro, lr, weights, self.world, self.device)
        if self.ema is not None:
            self.ema.update()
        return losses

    def step_and_agree(
        self, micro: list[MicroBatch], lr: float, weights: tuple[float, ...], stop: bool
    ) -> tuple[tuple[float, ...], float, bool]:
        """`step`: its losses and policy accuracy (`sgd_step_stats`), and whether any rank asked to `stop`
        after it (carried by the step's all-reduce)."""
        votes = torch.tensor([1.0 if stop else 0.0], dtype=torch.float32, device=self.device)
        step = (self.net, self.opt, micro, lr, weights, self.world, self.device, votes)
        losses, accuracy = sgd_step_stats(*step)
        if self.ema is not None:
            self.ema.update()
        return losses, accuracy, bool(votes[0] > 0)

    def l2_loss(self, l2: float) -> float:
        """The L2 penalty of the decayed weights, 0.5 * l2 * sum of their squares."""
        return 0.5 * l2 * sum(float(p.detach().pow(2).sum()) for p in self.opt.param_groups[0]["params"])

    # ---- checkpoints ---------------------------------------------------------------------------------------
    def save_checkpoint(
        self, url: str, identity: dict, step: int, recent: list, metrics: str | None = None
    ) -> None:
        """Write weights (and their moving average), optimiser, step, RNG state, recent losses and `metrics`
        (the metrics file's text so far, for a resumed job to go on from) atomically to `url`."""
        payload = {
            "format": CHECKPOINT_FORMAT,
            "identity_json": json.dumps(identity, sort_keys=True),
            "step": step,
            "state_dict": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
            "optimizer": self.opt.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "recent_losses": [list(x) for x in recent],
            **({} if self.ema is None else {"ema": self.ema.state_dict()}),
            **({} if metrics is None else {"metrics": metrics}),
        }
        buf = io.BytesIO()
        torch.save(payload, buf)
        storage.write_bytes(url, buf.getvalue())

    def resume(self, url: str, identity: dict, note: Callable[[str], None]) -> Resumed | None:
        """Load the checkpoint at `url` if there is one of these inputs (`identity`); else None.

        A foreign, damaged or other inputs' checkpoint is not an error: `note` says why it is not used and
        training starts over from the parent.
        """
        payload = _read_checkpoint(url, identity, note)
        if payload is None:
            return None
        self.net.load_state_dict(payload["state_dict"])
        self.opt.load_state_dict(payload["optimizer"])
        if self.ema is not None:  # the identity holds train.ema_decay: a checkpoint of these inputs has it
            self.ema.load(payload["ema"])
        torch.set_rng_state(payload["torch_rng"])
        recent = [tuple(x) for x in payload["recent_losses"]]
        return Resumed(int(payload["step"]), recent, payload.get("metrics"))

    def save_model(self, url: str, provenance: dict) -> None:
        """Write the model file: the weights, or with `train.ema_decay` their moving average as the model
        and the raw weights under `modelfile.RAW_PREFIX` (what the next generation trains on from)."""
        ema = None if self.ema is None else model_mod.state_arrays(self.ema.state_dict())
        self.net.to("cpu")
        if ema is None:
            model_mod.save_model(url, self.net, provenance)
        else:
            raw = model_mod.state_arrays(self.net.state_dict())
            modelfile.write(url, self.net.cfg, provenance, ema, raw=raw)

    # ---- the process group ---------------------------------------------------------------------------------
    def join_group(self, master_addr: str, master_port: int, rank: int, timeout_s: float) -> None:
        """Meet the other ranks at a TCP store that rank 0 hosts on `master_port` (the others connect to
        `master_addr:master_port`), then make the process group (nccl on CUDA, else gloo).

        Rank 0 waits at most `timeout_s` for every rank to connect, the others as long to reach it; the same
        timeout bounds every collective. torch raises (a RuntimeError) when it runs out.
        """
        timeout = datetime.timedelta(seconds=timeout_s)
        store = dist.TCPStore(
            master_addr, master_port, self.world, is_master=rank == 0, timeout=timeout, wait_for_workers=True
        )
        dist.init_process_group(
            backend="nccl" if self.device.type == "cuda" else "gloo",
            store=store,
            rank=rank,
            world_size=self.world,
            timeout=timeout,
        )

    def gather_strings(self, value: str) -> list[str]:
        """Every rank's `value`, in rank order (a collective when there are several ranks)."""
        if self.world <= 1:
            return [value]
        out: list = [None] * self.world
        dist.all_gather_object(out, value)
        return [str(v) for v in out]

    def gather(self, values: list[float]) -> list[list[float]]:
        """Every rank's `values` (float64), in rank order; a collective when there are several ranks."""
        mine = torch.tensor(values, dtype=torch.float64)
        gathered = [mine]
        if self.world > 1:
            gathered = [torch.zeros_like(mine, device=self.device) for _ in range(self.world)]
            dist.all_gather(gathered, mine.to(self.device))
            gathered = [g.cpu() for g in gathered]
        return [[float(v) for v in g] for g in gathered]

    def leave_group(self) -> None:
        """Wait for every rank, then take the process group down (nothing to do for one rank)."""
        if self.world <= 1:
            return
        dist.barrier()
        dist.destroy_process_group()


def _read_checkpoint(url: str, identity: dict, note: Callable[[str], None]) -> dict | None:
    if not storage.exists(url):
        return None
    try:
        payload = torch.load(io.BytesIO(storage.read_bytes(url)), map_location="cpu", weights_only=True)
    except Exception as exc:  # a foreign or damaged file: start over rather than fail
        note(
            f"checkpoint {url} is unreadable ({type(exc).__name__}); starting this generation from the parent"
        )
        return None
    if payload.get("format") != CHECKPOINT_FORMAT or payload.get("identity_json") != json.dumps(
        identity, sort_keys=True
    ):
        note(f"checkpoint {url} belongs to other inputs (window, parent or settings differ); ignoring it")
        return None
    return payload
