"""DSP-offload emulation: compiled NHWC conv3x3/conv1x1 and fused BN+ReLU kernels on a pool of "DSP cores".

The paper moves convolution and BN+ReLU off the CPU onto DSP cores with hand-mapped kernels. Here the compiled
extension `minigo_core.nn.dsp._C` (built at install time from `csrc/`) plays that part on ordinary CPUs:

- a pool of worker threads stands for the DSP cores (`set_num_threads`; default: the cores given to the job);
- `conv(x, w)`: stride-1 conv3x3 (pad 1) or conv1x1 on NHWC activations, the batch split evenly across the
  cores, K output channels held in SIMD registers (one input value broadcast and multiplied with K weights);
  backward: input gradient as the conv with the flipped kernel, weight gradient accumulated per core and
  combined by a pairwise tree reduction; float32 3x3 convs run all three passes as Winograd F(3x3,3x3) (or
  F(2x2,3x3), by the board: `set_winograd_training`; Lavin & Gray 2016), the weight gradient's per-core
  partials summed by the same tree in the transform domain;
- `bn_relu(x, bn, training, residual)`: fused batch norm (+ residual add) + ReLU, forward and backward;
- the training forward of a DualNet: the trunk (`trunk.trunk`) and the heads' inputs (`heads.heads`), each one
  autograd Function over the kernels above; `reference.forward_per_op` is the same network with one Function
  per conv and per BN+ReLU, the reference the tests compare the production path with;
- `FusedNet(net)`: the whole network in one call with BN folded into the convolutions (self-play inference);
  each core runs its share of the batch through every layer, in chunks of images that stay in L2; 3x3
  convs with >= 16 input channels use Winograd F(3x3,3x3) (25 instead of 81 multiplications per 3x3
  outputs; a 9x9 board is 3 x 3 tiles) or F(2x2,3x3) (16 instead of 36 per 2x2), whichever needs fewer
  for the board (`set_winograd(False)` for the direct kernel), the products on the same broadcast-FMA kernel.

All ops take float32 (fast path) or float64 (for gradcheck). The float32 kernels come in four builds: the
widest the CPU has is chosen once at load, of AVX-512 (16 lanes), AVX2+FMA (8 lanes) and a portable build (GCC
vectors with explicit FMAs: NEON/SVE on Arm); `portable16` (the AVX-512 build's tile shapes in portable code)
tests the tiling on any CPU; `set_isa` forces one. Each output channel is a lane, so every output's sum runs
in the same order with one FMA per term on every build: the fused engine gives the same floats on all of them
(tests/unit/test_dsp_isa.py).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

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
    "FusedNet",
    "bn_relu",
    "conv",
    "default_num_threads",
    "get_isa",
    "get_num_threads",
    "measure_peak_gflops",
    "set_isa",
    "set_num_threads",
    "set_winograd",
    "set_winograd_training",
    "supported_isas",
    "winograd_training_tile",
]


def default_num_threads() -> int:
    """The cores given to this job: SLURM_CPUS_PER_TASK if set, else the CPU affinity mask."""

    return fused.default_num_threads()


def set_num_threads(n: int) -> None:
    """Number of DSP cores (worker threads) used by every kernel call from now on (training kernels and the
    fused inference engine)."""

    if int(n) < 1:
        raise ValueError(f"the number of DSP cores must be at least 1, got {n}")
    _C.set_num_threads(int(n))
    fused.set_num_threads(int(n))


def set_isa(isa: str | int) -> None:
    """Force the kernels of one instruction set, "avx512", "avx2", "portable" or "portable16", for the
    training kernels and the inference engine; ValueError if this CPU cannot run it. Default: the widest."""

    n = fused.isa_number(isa)
    if not _C.set_isa(n):
        raise ValueError(
            f"this CPU cannot run the {fused.ISAS[n]} kernels; it runs: {', '.join(supported_isas())}"
        )
    fused.set_isa(n)


def get_isa() -> str:
    """The instruction set of the kernels in use: "avx512", "avx2", "portable" or "portable16"."""
    return fused.ISAS[int(_C.get_isa())]


def supported_isas() -> list[str]:
    """The kernel instruction sets this CPU runs, widest first (portable16, the portable code at AVX-512's
    width for tests, last)."""
    return [fused.ISAS[n] for n in fused.WIDEST_FIRST if _C.isa_supported(n)]


def set_winograd(on: bool | int) -> None:
    """Fused inference: True (default) Winograd, the tile by the board (F(3x3,3x3) on 5x5 to 19x19); 2 or 3
    force F(2x2,3x3) or F(3x3,3x3); False the direct kernel (see `fused.set_winograd`)."""

    fused.set_winograd(on)


def set_winograd_training(on: bool | int) -> None:
    """Training ops' float32 3x3 convs (forward, input and weight gradients): True (default) Winograd, the
    tile by the board (F(3x3,3x3) on 5x5 to 19x19) where both channel counts are >= 16 (else direct); 2 or 3
    force F(2x2,3x3) or F(3x3,3x3) on every shape; False the direct kernels (the reference). float64 always
    runs the direct kernels."""

    mode = int(on)  # True -> 1, False -> 0
    if mode not in (0, 1, 2, 3):
        raise ValueError(f"set_winograd_training: True, False, 2 or 3, not {on!r}")
    _C.set_winograd_training(mode)


def winograd_training_tile(h: int, w: int, c: int, k: int) -> int:
    """The Winograd tile m of F(m x m, 3x3) a float32 3x3 training conv of this shape runs now; 0: direct."""
    return int(_C.winograd_training_tile(int(h), int(w), int(c), int(k)))


def get_num_threads() -> int:
    return int(_C.get_num_threads())


def measure_peak_gflops(seconds: float = 0.5) -> float:
    """FP32 GFLOP/s of one core running an FMA loop (the kernels' instruction set)."""
    return float(_C.measure_peak_gflops(seconds))


set_num_threads(default_num_threads())


# ---- autograd wrappers --------------------------------------------------------------------------------
class ConvFunction(torch.autograd.Function):
    """y (B,H,W,K) = conv(x (B,H,W,C), w (K,C,R,R)); R = 3 (pad 1) or 1."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, w)
        return _C.conv_forward(x.contiguous(), w.contiguous())

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        x, w = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        dx, dw = _C.conv_backward(dy.contiguous(), x.contiguous(), w.contiguous(), need_x, need_w)
        return (dx if need_x else None), (dw if need_w else None)


def conv(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """DSP conv3x3/conv1x1 on NHWC `x` with torch-layout weights `w` (K, C, R, R); differentiable.
    CPU tensors only (`DspDeviceError` otherwise)."""
    require_cpu("dsp.conv", x, w)
    return ConvFunction.apply(x, w)


class BnReluFunction(torch.autograd.Function):
    """y = relu(BN(x) + residual), NHWC; batch statistics and running-stat update when training."""

    @staticmethod
    def forward(ctx, x, gamma, beta, residual, running_mean, running_var, training, momentum, eps):
        x = x.contiguous()
        res = residual.contiguous() if residual is not None else None
        y, mean, invstd = _C.bn_relu_forward(
            x, gamma.contiguous(), beta.contiguous(), running_mean, running_var, res, training, momentum, eps
        )
        ctx.training = training
        ctx.has_residual = residual is not None
        ctx.save_for_backward(x, y, gamma, mean, invstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, gamma, mean, invstd = ctx.saved_tensors
        need_res = ctx.has_residual and ctx.needs_input_grad[3]
        dx, dgamma, dbeta, dres = _C.bn_relu_backward(
            dy.contiguous(), y, x, gamma.contiguous(), mean, invstd, ctx.training, need_res
        )
        return dx, dgamma, dbeta, (dres if need_res else None), None, None, None, None, None


def bn_relu(
    x: torch.Tensor, bn: nn.BatchNorm2d, training: bool, residual: torch.Tensor | None = None
) -> torch.Tensor:
    """Fused BN (+ residual) + ReLU of NHWC `x` with the parameters and running stats of `bn`; CPU tensors
    only (`DspDeviceError` otherwise)."""
    require_cpu("dsp.bn_relu", x, residual, bn.weight, bn.running_mean)
    if training and bn.num_batches_tracked is not None:
        bn.num_batches_tracked.add_(1)
    return BnReluFunction.apply(
        x, bn.weight, bn.bias, residual, bn.running_mean, bn.running_var, training, bn.momentum, bn.eps
    )


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
    """A DualNet's eval-mode network folded into one call of the fused inference engine:
    `fused(x) -> (logits, value)` on torch tensors, `fused.predict(planes)` on numpy.

    The engine is the torch-free `minigo_core.nn.fused.FusedModel` (the `_infer` library, the `_C` kernels),
    built from the net's current weights; self-play jobs load it straight from the model file instead.
    """

    def __init__(self, net) -> None:

        with torch.no_grad():
            state = {k: v.detach().to("cpu", torch.float32).contiguous().numpy() for k, v in
                     net.state_dict().items() if not k.endswith("num_batches_tracked")}  # fmt: skip
        self._engine = fused.FusedModel(net.cfg, state)

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """float or uint8 (B, planes, N, N) -> (policy logits (B, N*N+1), value (B,)), float32."""
        if x.dtype not in (torch.uint8, torch.float32):
            x = x.float()
        logits, value = self._engine.logits(x.detach().cpu().contiguous().numpy())
        return torch.from_numpy(logits), torch.from_numpy(value)

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint8 (B, planes, N, N) -> (move probabilities (B, N*N+1), values (B,)), float32 numpy."""
        return self._engine.predict(planes)
