"""DSP-offload emulation: compiled NHWC conv3x3/conv1x1 and fused BN+ReLU kernels on a pool of "DSP cores".

The paper moves convolution and BN+ReLU off the CPU onto DSP cores with hand-mapped kernels. Here the compiled
extension `minigo_core.nn.dsp._C` (built at install time from `csrc/`) plays that part on ordinary CPUs:

- a pool of worker threads stands for the DSP cores; each call runs on the cores its `Runtime` names
  (`runtime.threads`: a DualNet's `runtime`, given when it is built or loaded);
- `conv(x, w, runtime)`: stride-1 conv3x3 (pad 1) or conv1x1 on NHWC activations, the batch split evenly
  across the cores, K output channels held in SIMD registers (one input value broadcast and multiplied with K
  weights); backward: input gradient as the conv with the flipped kernel, weight gradient accumulated per core
  and combined by a pairwise tree reduction; float32 3x3 convs run all three passes as Winograd F(3x3,3x3) (or
  F(2x2,3x3), by the board: `runtime.winograd_training`; Lavin & Gray 2016), the weight gradient's per-core
  partials summed by the same tree in the transform domain;
- `bn_relu(x, bn, training, residual, runtime)`: fused batch norm (+ residual add) + ReLU, forward and
  backward;
- the training forward of a DualNet: the trunk (`trunk.trunk`) and the heads' inputs (`heads.heads`), each one
  autograd Function over the kernels above; `reference.forward_per_op` is the same network with one Function
  per conv and per BN+ReLU, the reference the tests compare the production path with;
- `FusedNet(net)`: the whole network in one call with BN folded into the convolutions (self-play inference);
  each core runs its share of the batch through every layer, in chunks of images that stay in L2; 3x3
  convs with >= 16 input channels use Winograd F(3x3,3x3) (25 instead of 81 multiplications per 3x3
  outputs; a 9x9 board is 3 x 3 tiles) or F(2x2,3x3) (16 instead of 36 per 2x2), whichever needs fewer
  for the board (`runtime.winograd` 0 for the direct kernel), the products on the same broadcast-FMA kernel.

All ops take float32 (fast path) or float64 (for gradcheck). The float32 kernels come in four builds: by
default (`runtime.isa` "auto") the widest the CPU has, of AVX-512 (16 lanes), AVX2+FMA (8 lanes) and a
portable build (GCC vectors with explicit FMAs: NEON/SVE on Arm); `portable16` (the AVX-512 build's tile
shapes in portable code) tests the tiling on any CPU; a runtime's `isa` names one. Each output channel is a
lane, so every output's sum runs in the same order with one FMA per term on every build: the fused network
gives the same floats on all of them (tests/unit/test_dsp_isa.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minigo_core.base.runtime import DEFAULT_RUNTIME, ISAS, Runtime
from minigo_core.nn import fused
from minigo_core.nn.dsp_device import require_cpu

try:
    from minigo_core.nn.dsp import _C
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "the DSP-emulation extension minigo_core.nn.dsp._C is not built; run "
        "`.venv/bin/pip install --no-build-isolation -e .` (or `make setup`) in the repository, "
        "or use the torch backend (model.backend: torch)"
    ) from exc

__all__ = [
    "BnState",
    "FusedNet",
    "KernelRun",
    "bn_relu",
    "conv",
    "isa_of",
    "kernel_run",
    "measure_peak_gflops",
    "supported_isas",
    "winograd_training_tile",
]


class KernelRun(NamedTuple):
    """What every `_C` op is given first (`run`): how it runs, a `Runtime` resolved on this CPU."""

    cores: int
    isa: int  # the number of base.runtime.ISAS
    winograd: int  # the training Winograd mode of float32 3x3 convs (base.runtime.WINOGRAD_MODES)


def kernel_run(runtime: Runtime) -> KernelRun:
    """The `_C` ops' `run` of `runtime`: its DSP cores, its ISA's number ("auto": the widest this CPU runs;
    ValueError for one it cannot run) and its training Winograd mode."""
    return KernelRun(runtime.threads, fused.resolve_isa(runtime.isa), runtime.winograd_training)


def isa_of(runtime: Runtime) -> str:
    """The instruction set the kernels of `runtime` run: "avx512", "avx2", "portable" or "portable16"."""
    return ISAS[kernel_run(runtime).isa]


def supported_isas() -> list[str]:
    """The kernel instruction sets this CPU runs, widest first (portable16, the portable code at AVX-512's
    width for tests, last)."""
    return fused.supported_isas()


def winograd_training_tile(h: int, w: int, c: int, k: int, mode: int = 1) -> int:
    """The Winograd tile m of F(m x m, 3x3) a float32 3x3 training conv of this shape runs under the training
    Winograd `mode` (`Runtime.winograd_training`); 0: direct."""
    return int(_C.winograd_training_tile(int(mode), int(h), int(w), int(c), int(k)))


def measure_peak_gflops(seconds: float = 0.5, runtime: Runtime = DEFAULT_RUNTIME) -> float:
    """FP32 GFLOP/s of one core running an FMA loop on the kernels' instruction set (`runtime.isa`)."""
    return float(_C.measure_peak_gflops(kernel_run(runtime).isa, seconds))


# ---- autograd wrappers --------------------------------------------------------------------------------
class ConvFunction(torch.autograd.Function):
    """y (B,H,W,K) = conv(x (B,H,W,C), w (K,C,R,R)); R = 3 (pad 1) or 1; `run`: a KernelRun."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor, run: KernelRun) -> torch.Tensor:
        ctx.save_for_backward(x, w)
        ctx.run = run
        return _C.conv_forward(run, x.contiguous(), w.contiguous())

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        x, w = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        dx, dw = _C.conv_backward(ctx.run, dy.contiguous(), x.contiguous(), w.contiguous(), need_x, need_w)
        return (dx if need_x else None), (dw if need_w else None), None


def conv(x: torch.Tensor, w: torch.Tensor, runtime: Runtime = DEFAULT_RUNTIME) -> torch.Tensor:
    """DSP conv3x3/conv1x1 on NHWC `x` with torch-layout weights `w` (K, C, R, R), run as `runtime` says;
    differentiable. CPU tensors only (`DspDeviceError` otherwise)."""
    require_cpu("dsp.conv", x, w)
    return ConvFunction.apply(x, w, kernel_run(runtime))


class BnState(NamedTuple):
    """What the BN+ReLU kernels take of a BatchNorm besides its parameters: its running statistics (updated
    in place when training), whether it trains, its momentum and eps."""

    running_mean: torch.Tensor
    running_var: torch.Tensor
    training: bool
    momentum: float
    eps: float


class BnReluFunction(torch.autograd.Function):
    """y = relu(BN(x) + residual), NHWC; batch statistics and running-stat update when training (`state`, a
    BnState); `run`: a KernelRun."""

    @staticmethod
    def forward(ctx, x, gamma, beta, residual, state: BnState, run: KernelRun):
        x = x.contiguous()
        res = residual.contiguous() if residual is not None else None
        training = state.training
        y, mean, invstd = _C.bn_relu_forward(
            run, x, gamma.contiguous(), beta.contiguous(), state.running_mean, state.running_var, res,
            training, state.momentum, state.eps,
        )  # fmt: skip
        ctx.training, ctx.run = training, run
        ctx.has_residual = residual is not None
        ctx.save_for_backward(x, y, gamma, mean, invstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, gamma, mean, invstd = ctx.saved_tensors
        need_res = ctx.has_residual and ctx.needs_input_grad[3]
        dx, dgamma, dbeta, dres = _C.bn_relu_backward(
            ctx.run, dy.contiguous(), y, x, gamma.contiguous(), mean, invstd, ctx.training, need_res
        )
        return dx, dgamma, dbeta, (dres if need_res else None), None, None


def bn_relu(
    x: torch.Tensor,
    bn: nn.BatchNorm2d,
    training: bool,
    residual: torch.Tensor | None = None,
    runtime: Runtime = DEFAULT_RUNTIME,
) -> torch.Tensor:
    """Fused BN (+ residual) + ReLU of NHWC `x` with the parameters and running stats of `bn`, run as
    `runtime` says; CPU tensors only (`DspDeviceError` otherwise)."""
    require_cpu("dsp.bn_relu", x, residual, bn.weight, bn.running_mean)
    run = kernel_run(runtime)
    if training and bn.num_batches_tracked is not None:
        bn.num_batches_tracked.add_(1)
    state = BnState(bn.running_mean, bn.running_var, training, bn.momentum, bn.eps)
    return BnReluFunction.apply(x, bn.weight, bn.bias, residual, state, run)


def torch_bn_relu(
    x: torch.Tensor, bn: nn.BatchNorm2d, training: bool, residual: torch.Tensor | None = None
) -> torch.Tensor:
    """PyTorch's batch_norm + relu on NHWC `x` (viewed as channels_last NCHW), what `bn_relu` is measured
    against (`python -m minigo_core.bench ops`)."""
    xc = x.permute(0, 3, 1, 2)
    y = F.batch_norm(xc, bn.running_mean, bn.running_var, bn.weight, bn.bias, training, bn.momentum, bn.eps)
    if residual is not None:
        y = y + residual.permute(0, 3, 1, 2)
    return F.relu(y).permute(0, 2, 3, 1)


# ---- fused inference ----------------------------------------------------------------------------------
class FusedNet:
    """A DualNet's eval-mode network folded into one call of the fused inference network:
    `fused(x) -> (logits, value)` on torch tensors, `fused.predict(planes)` on numpy.

    The engine is the torch-free `minigo_core.nn.fused.FusedModel` (the `_infer` library, the `_C` kernels),
    built from the net's current weights and run as the net's `runtime` says; self-play jobs load it straight
    from the model file instead.
    """

    def __init__(self, net) -> None:

        with torch.no_grad():
            state = {k: v.detach().to("cpu", torch.float32).contiguous().numpy() for k, v in
                     net.state_dict().items() if not k.endswith("num_batches_tracked")}  # fmt: skip
        self._engine = fused.FusedModel(net.cfg, state, runtime=net.runtime)

    @property
    def runtime(self) -> Runtime:
        """How the engine runs: the net's runtime when it was built."""
        return self._engine.runtime

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """float or uint8 (B, planes, N, N) -> (policy logits (B, N*N+1), value (B,)), float32."""
        if x.dtype not in (torch.uint8, torch.float32):
            x = x.float()
        logits, value = self._engine.logits(x.detach().cpu().contiguous().numpy())
        return torch.from_numpy(logits), torch.from_numpy(value)

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint8 (B, planes, N, N) -> (move probabilities (B, N*N+1), values (B,)), float32 numpy."""
        return self._engine.predict(planes)

    def predict_all(self, planes: np.ndarray) -> fused.Heads:
        """Every head, as `fused.FusedModel.predict_all` (the search's score utility reads the score)."""
        return self._engine.predict_all(planes)
