"""Winograd in the training path: `python -m minigo_core.bench winograd [--part step|numerics|losses]`.

- step: one SGD step (`nn.training.sgd_step`: forward, the four losses, backward, SGD with momentum) at the
  paper's shape (19x19, 6x64, mlperf07, batch 96), the default run's (config.yaml's net and per-rank batch:
  9x9, 4x32, agz, auxiliary heads, batch 128) and that net at batch 32 (the default run's shape before issue
  24): torch (1 thread) against the dsp backend (1 core) with the direct and the Winograd 3x3 convs,
  timed interleaved (process CPU time, medians), on each vector build of the kernels (`--isa all`).
- numerics: each pass of a 3x3 conv (forward, input gradient, weight gradient) against a float64 reference
  (torch's conv in double): max |error| / max |reference| of torch's float32 direct conv, the dsp direct
  kernel, Winograd F(2x2,3x3) and F(3x3,3x3), on the residual convs of both shapes.
- losses: the tiny (5x5, 1x8) and default (9x9, 4x32) nets trained N steps from the same weights on the same
  synthetic batches with Winograd (F(3x3,3x3) forced on the tiny net, whose 8 filters the default rule
  leaves to the direct kernels), with the direct convs, and on torch; mean losses per window side by side.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import torch
import torch.nn.functional as F

from minigo_core.base import native
from minigo_core.base.config import RunConfig
from minigo_core.base.machine import cpu_model
from minigo_core.base.runtime import Runtime
from minigo_core.bench.ops import resolve_isas
from minigo_core.nn import training
from minigo_core.nn.dsp import ops as dsp
from minigo_core.nn.flatsgd import FlatSGD
from minigo_core.nn.model import DualNet, ModelConfig, random_model

# The default run's net and per-rank batch, as config.yaml has them (RunConfig's defaults are config.yaml's)
_DEFAULT_RUN = RunConfig()
SHAPES = {  # name: (config, batch)
    "paper": (ModelConfig(19, 6, 64, 64, "mlperf07"), 96),
    "default": (ModelConfig.from_run(_DEFAULT_RUN), _DEFAULT_RUN.train.batch_per_rank),
    "default-b32": (ModelConfig(9, 4, 32, 64, "agz", aux_heads=True), 32),  # the default net, a small batch
    "tiny": (ModelConfig(5, 1, 8, 8, "agz", aux_heads=True), 16),
}
CPU = torch.device("cpu")


def _batch(cfg: ModelConfig, b: int, seed: int) -> training.MicroBatch:
    """Synthetic examples: random planes, a softmax policy target, +-1 outcomes, ownership and scores."""
    g = torch.Generator().manual_seed(seed)
    n = cfg.board_size
    own = torch.sign(torch.randn(b, n * n, generator=g)) if cfg.aux_heads else None
    score = torch.randn(b, generator=g) * 5 if cfg.aux_heads else None
    return training.MicroBatch(
        torch.randint(0, 2, (b, cfg.planes, n, n), generator=g).float(),
        torch.softmax(torch.randn(b, n * n + 1, generator=g) * 2, 1),
        torch.sign(torch.randn(b, generator=g)),
        own,
        score,
    )


def _trainer(net: DualNet, lr: float = 0.01):
    net.train()
    opt = FlatSGD(training.param_groups(net, 1e-4), lr=lr, momentum=0.9)  # as the Trainer's

    def step(mb: training.MicroBatch) -> tuple[float, ...]:
        return training.sgd_step(net, opt, [mb], lr, (1.0, 1.0, 1.0), 1, CPU)

    return step


def _with_runtime(net: DualNet, rt: Runtime, fn):
    """`fn` with `net` running as `rt` says (two variants of one net, interleaved, share its weights)."""

    def run(*args):
        net.runtime = rt
        return fn(*args)

    return run


def keep_heap() -> None:
    """Let glibc's malloc keep freed memory (no trimming, no mmap for tensors): the step benchmark runs three
    nets interleaved in one process, whose frees and allocations otherwise made malloc hand ~5 MB back and
    fault it in again every step (~1,300 page faults a step, torch and dsp alike); a training process runs
    one net and sees none. No-op off glibc."""
    try:
        libc = native.libc()
    except OSError:  # not glibc
        return
    if hasattr(libc, "mallopt"):
        libc.mallopt(-3, 1 << 26)  # M_MMAP_THRESHOLD: 64 MiB
        libc.mallopt(-1, 1 << 28)  # M_TRIM_THRESHOLD: 256 MiB


def bench_step(shape: str, repeats: int, rt: Runtime) -> dict:
    cfg, b = SHAPES[shape]
    net_t = random_model(cfg, 0, backend="torch")
    net_d = DualNet(cfg, backend="dsp", runtime=rt)
    net_d.load_state_dict(net_t.state_dict())
    mb = _batch(cfg, b, 2)
    step_t, step_d = _trainer(net_t, 1e-3), _trainer(net_d, 1e-3)
    direct, winograd = rt.replace(winograd_training=0), rt.replace(winograd_training=1)
    fns = {"torch": step_t, "dsp direct": _with_runtime(net_d, direct, step_d),
           "dsp winograd": _with_runtime(net_d, winograd, step_d)}  # fmt: skip
    for fn in fns.values():
        fn(mb)
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn(mb)
            times[name].append(time.process_time() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def _rel(a: torch.Tensor, ref: torch.Tensor) -> float:
    return float((a.double() - ref).abs().max() / ref.abs().max())


def _conv_passes(x, w, dy, fn):
    """(y, dx, dw) of conv `fn` (NCHW x, torch-layout w) with output gradient dy, by autograd."""
    x = x.detach().requires_grad_(True)
    w = w.detach().requires_grad_(True)
    y = fn(x, w)
    return (y.detach(), *torch.autograd.grad(y, (x, w), dy))


def numerics(shape: str) -> dict[str, list[float]]:
    """{method: [error of y, dx, dw]} on one residual conv of `shape` (its batch, random inputs)."""
    cfg, b = SHAPES[shape]
    n, c = cfg.board_size, cfg.filters
    g = torch.Generator().manual_seed(5)
    x = torch.randn(b, c, n, n, generator=g, dtype=torch.float64)
    w = torch.randn(c, c, 3, 3, generator=g, dtype=torch.float64) / (3 * c**0.5)
    dy = torch.randn(b, c, n, n, generator=g, dtype=torch.float64)

    def torch_conv(xx, ww):
        return F.conv2d(xx, ww, padding=1)

    def dsp_conv(xx, ww, rt):
        return dsp.conv(xx.permute(0, 2, 3, 1), ww, rt).permute(0, 3, 1, 2)

    ref = _conv_passes(x, w, dy, torch_conv)
    f32 = (x.float(), w.float(), dy.float())
    out = {
        "torch float32 direct": [_rel(a, r) for a, r in zip(_conv_passes(*f32, torch_conv), ref, strict=True)]
    }
    for mode, name in ((0, "dsp direct"), (2, "dsp F(2x2,3x3)"), (3, "dsp F(3x3,3x3)")):
        conv = functools.partial(dsp_conv, rt=Runtime(winograd_training=mode))
        out[name] = [_rel(a, r) for a, r in zip(_conv_passes(*f32, conv), ref, strict=True)]
    return out


def losses(shape: str, steps: int, every: int) -> list[tuple[int, dict[str, list[float]]]]:
    """[(step, {run: mean losses over the last `every` steps})] of three runs from the same weights on the
    same batches: dsp with Winograd, dsp with the direct convs, and torch (whose rounding differs from the
    direct dsp kernels' as much as Winograd's does: the scale of divergence that rounding alone gives)."""
    cfg, b = SHAPES[shape]
    start = random_model(cfg, 1, backend="torch").state_dict()
    runs = {}
    wino = 3 if cfg.filters < 16 else 1  # the tiny net's 8 filters run direct unless forced
    for name, backend, mode in (("winograd", "dsp", wino), ("direct", "dsp", 0), ("torch", "torch", 1)):
        net = DualNet(cfg, backend=backend, runtime=Runtime(winograd_training=mode))
        net.load_state_dict(start)
        runs[name] = _trainer(net)
    rows, window = [], {name: [] for name in runs}
    for s in range(1, steps + 1):
        mb = _batch(cfg, b, 1000 + s % 16)  # 16 batches seen again and again: the losses fall
        for name, fn in runs.items():
            window[name].append(fn(mb))
        if s % every == 0:
            rows.append(
                (s, {k: [statistics.mean(col) for col in zip(*v, strict=True)] for k, v in window.items()})
            )
            window = {name: [] for name in runs}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigo_core.bench winograd", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--part", choices=["step", "numerics", "losses", "all"], default="all")
    parser.add_argument("--isa", default="all", help="step: best, all (each vector build) or one build")
    parser.add_argument("--repeats", type=int, default=11, help="step: timed steps per variant (median)")
    parser.add_argument("--steps", type=int, default=200, help="losses: training steps per run")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # and every dsp net and op runs on one core (a Runtime's default)
    keep_heap()
    print(f"cpu: {cpu_model()}; 1 torch thread, 1 dsp core; malloc keeps freed memory")
    if args.part in ("step", "all"):
        for isa in resolve_isas(args.isa):
            for shape in ("paper", "default", "default-b32"):
                repeats = max(3, args.repeats // 2) if shape == "paper" else args.repeats
                t = bench_step(shape, repeats, Runtime(isa=isa))
                d, w = t["dsp direct"], t["dsp winograd"]
                print(
                    f"step {shape:<11} dsp {isa:<7} torch {t['torch']:8.2f} ms  dsp direct {d:8.2f} ms "
                    f"({t['torch'] / d:.2f}x)  dsp winograd {w:8.2f} ms ({t['torch'] / w:.2f}x)"
                )
    if args.part in ("numerics", "all"):
        for shape in ("default", "paper"):
            print(f"\nnumerics, residual conv of {shape}: max|err|/max|ref| vs float64 (y, dx, dw)")
            for name, errs in numerics(shape).items():
                print(f"  {name:<22}" + "".join(f"{e:10.1e}" for e in errs))
    if args.part in ("losses", "all"):
        for shape in ("tiny", "default"):
            every = max(1, args.steps // 8)
            print(f"\nlosses, {shape}: (policy, value, ownership, score), means over {every} steps")
            for s, means in losses(shape, args.steps, every):
                print(
                    f"  {s:5d}  "
                    + "  ".join(f"{k} " + " ".join(f"{v:.4f}" for v in m) for k, m in means.items())
                )
    return 0
