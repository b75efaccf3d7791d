"""DSP-emulation kernels against PyTorch's reference operators (forward and backward) and gradcheck.

Tolerances: float32 comparisons use rtol 1e-4 / atol 1e-4 scaled by the size of the reduction (the kernels sum
in a different order than oneDNN); float64 gradcheck uses torch's defaults (eps 1e-6, atol 1e-5, rtol 1e-3).
Each case runs with every kernel build this CPU runs (AVX-512, AVX2+FMA, portable, portable16), and with 1
and 2 DSP cores (odd batches, so the batch does not divide evenly across the cores; batch 1 splits pixels).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from minigo_core.base.runtime import Runtime, RuntimeSettingError
from minigo_core.nn.dsp import ops as dsp  # fails with build instructions if the extension is not built

_C = dsp._C

ISAS = dsp.supported_isas()  # every path this CPU runs: avx512, avx2, portable


@pytest.fixture(
    params=[(isa, cores) for isa in ISAS for cores in (1, 2)], ids=lambda p: f"{p[0]}-cores{p[1]}"
)
def rt(request) -> Runtime:
    """How the ops of a test run: each ISA this CPU runs, on 1 and 2 DSP cores."""
    isa, cores = request.param
    return Runtime(threads=cores, isa=isa)


# (B, H, W, C, K, R): odd sizes, C and K not multiples of 8, batch 1, batches not divisible by 2
CONV_SHAPES = [
    (1, 5, 7, 3, 5, 3),
    (3, 9, 9, 17, 10, 3),
    (5, 4, 6, 9, 13, 1),
    (2, 3, 3, 8, 16, 3),
    (3, 7, 5, 12, 2, 1),
    (3, 5, 5, 16, 1, 1),
    (4, 6, 5, 20, 33, 3),
    (3, 5, 6, 40, 24, 3),  # C > 32: more than two register tiles of output channels per pixel row
]


def _nchw(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 3, 1, 2)


@pytest.mark.parametrize("shape", CONV_SHAPES, ids=lambda s: "B{}H{}W{}C{}K{}R{}".format(*s))
def test_conv_forward_backward_matches_torch(rt, shape):
    B, H, W, C, K, R = shape
    g = torch.Generator().manual_seed(hash(shape) % 2**31)
    x = torch.randn(B, H, W, C, generator=g, requires_grad=True)
    w = torch.randn(K, C, R, R, generator=g, requires_grad=True)
    dy = torch.randn(B, H, W, K, generator=g)
    y = dsp.conv(x, w, rt)
    dx, dw = torch.autograd.grad(y, (x, w), dy)

    xr = x.detach().clone().requires_grad_(True)
    wr = w.detach().clone().requires_grad_(True)
    yr = F.conv2d(_nchw(xr), wr, padding=R // 2).permute(0, 2, 3, 1)
    dxr, dwr = torch.autograd.grad(yr, (xr, wr), dy)
    tol = 1e-4 * (R * R * max(C, K)) ** 0.5
    torch.testing.assert_close(y, yr, rtol=1e-4, atol=tol)
    torch.testing.assert_close(dx, dxr, rtol=1e-4, atol=tol)
    torch.testing.assert_close(dw, dwr, rtol=1e-4, atol=1e-4 * (B * H * W) ** 0.5)


def test_conv_input_grad_only_when_needed(rt):
    x = torch.randn(2, 5, 5, 4)
    w = torch.randn(6, 4, 3, 3, requires_grad=True)
    y = dsp.conv(x, w, rt)
    (dw,) = torch.autograd.grad(y.sum(), (w,))
    ref = torch.autograd.grad(F.conv2d(_nchw(x), w, padding=1).sum(), (w,))[0]
    torch.testing.assert_close(dw, ref, rtol=1e-4, atol=1e-3)


def _bn(C: int, g: torch.Generator, dtype=torch.float32) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(C, eps=1e-5, momentum=0.05).to(dtype)
    with torch.no_grad():
        bn.weight.copy_(torch.rand(C, generator=g, dtype=dtype) + 0.5)
        bn.bias.copy_(torch.randn(C, generator=g, dtype=dtype) * 0.2)
        bn.running_mean.copy_(torch.randn(C, generator=g, dtype=dtype) * 0.1)
        bn.running_var.copy_(torch.rand(C, generator=g, dtype=dtype) + 0.5)
    return bn


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("with_residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("shape", [(1, 5, 7, 3), (3, 9, 9, 13), (5, 4, 4, 32)], ids=str)
def test_bn_relu_matches_torch(rt, training, with_residual, shape):
    B, H, W, C = shape
    g = torch.Generator().manual_seed(7 + C)
    bn, bn_ref = _bn(C, g), None
    bn_ref = nn.BatchNorm2d(C, eps=1e-5, momentum=0.05)
    bn_ref.load_state_dict(bn.state_dict())
    x = (torch.randn(B, H, W, C, generator=g) * 2 + 0.3).requires_grad_(True)
    res = torch.randn(B, H, W, C, generator=g).requires_grad_(True) if with_residual else None
    dy = torch.randn(B, H, W, C, generator=g)

    y = dsp.bn_relu(x, bn, training, res, rt)
    inputs = [x, bn.weight, bn.bias] + ([res] if with_residual else [])
    grads = torch.autograd.grad(y, inputs, dy)

    xr = x.detach().clone().requires_grad_(True)
    rr = res.detach().clone().requires_grad_(True) if with_residual else None
    bn_ref.train(training)
    yr = bn_ref(_nchw(xr))
    if with_residual:
        yr = yr + _nchw(rr)
    yr = F.relu(yr).permute(0, 2, 3, 1)
    inputs_ref = [xr, bn_ref.weight, bn_ref.bias] + ([rr] if with_residual else [])
    grads_ref = torch.autograd.grad(yr, inputs_ref, dy)

    torch.testing.assert_close(y, yr, rtol=1e-4, atol=1e-4)
    for got, want in zip(grads, grads_ref, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(bn.running_mean, bn_ref.running_mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(bn.running_var, bn_ref.running_var, rtol=1e-5, atol=1e-6)
    assert int(bn.num_batches_tracked) == int(bn_ref.num_batches_tracked)


@pytest.mark.parametrize("R", [3, 1])
def test_conv_gradcheck_float64(R):
    g = torch.Generator().manual_seed(R)
    x = torch.randn(3, 4, 5, 3, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(5, 3, R, R, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(dsp.conv, (x, w))


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_bn_relu_gradcheck_float64(training):
    g = torch.Generator().manual_seed(3)
    C = 5
    bn = _bn(C, g, torch.float64)
    # keep |x| away from the ReLU kink so finite differences are valid
    x = torch.randn(3, 4, 3, C, dtype=torch.float64, generator=g, requires_grad=True)
    res = torch.randn(3, 4, 3, C, dtype=torch.float64, generator=g, requires_grad=True)
    gamma = bn.weight.detach().clone().requires_grad_(True)
    beta = bn.bias.detach().clone().requires_grad_(True)

    def f(x, gamma, beta, res):
        state = dsp.BnState(bn.running_mean, bn.running_var, training, 0.05, 1e-5)
        return dsp.BnReluFunction.apply(x, gamma, beta, res, state, run)

    run = dsp.kernel_run(Runtime())

    assert torch.autograd.gradcheck(f, (x, gamma, beta, res), atol=1e-5)


def test_peak_measurement_is_positive():
    assert dsp.measure_peak_gflops(0.05) > 0.1


def test_the_cores_and_isa_of_a_call_are_checked():
    with pytest.raises(RuntimeSettingError, match="must be 1..1024"):
        Runtime(threads=0)
    with pytest.raises(RuntimeSettingError, match="unknown instruction set"):
        Runtime(isa="sse9")
    x, w = torch.randn(1, 3, 3, 4), torch.randn(2, 4, 1, 1)
    with pytest.raises(RuntimeError, match="must be 1 .. 1024, got 0"):
        _C.conv_forward((0, 0, 1), x, w)  # what Python's checks would have refused
    with pytest.raises(RuntimeError, match="Winograd mode"):
        _C.conv_forward((1, 0, 7), x, w)


def test_calls_on_different_cores_share_no_state():
    """A call on 3 cores between two on 1 core (and the other way round) changes neither: each call runs on
    the cores it is given, the pool growing to the most asked for, and no setting outlives a call."""
    g = torch.Generator().manual_seed(11)
    x, w = torch.randn(5, 7, 7, 16, generator=g), torch.randn(16, 16, 3, 3, generator=g) * 0.1
    one, three = Runtime(threads=1), Runtime(threads=3)
    first = dsp.conv(x, w, one)
    on_three = dsp.conv(x, w, three)
    torch.testing.assert_close(dsp.conv(x, w, one), first, rtol=0, atol=0)
    torch.testing.assert_close(dsp.conv(x, w, three), on_three, rtol=0, atol=0)
    torch.testing.assert_close(on_three, first, rtol=0, atol=0)  # forward: each image on one core
    direct = dsp.conv(x, w, one.replace(winograd_training=0))
    assert not torch.equal(direct, first)  # the direct kernel rounds otherwise than Winograd...
    torch.testing.assert_close(dsp.conv(x, w, one), first, rtol=0, atol=0)  # ...and did not stay on


def _conv_in_child(queue, x, w) -> None:
    # the dsp kernels only: torch's own ops may not survive a fork
    queue.put(dsp.conv(x, w, Runtime(threads=2)).tolist())


def test_pool_works_in_forked_child():
    """A forked process (multiprocessing, DataLoader workers) gets a fresh pool instead of hanging on the
    parent's worker threads, which do not exist in the child. The reference is computed in the parent: torch's
    own conv in a forked child can hang on the parent's OpenMP threads (GNU OpenMP is not fork-safe once a
    parallel region has run), which is torch's limitation, not the pool's."""
    import multiprocessing as mp
    from queue import Empty

    dsp.conv(torch.randn(2, 3, 3, 8), torch.randn(8, 8, 3, 3), Runtime(threads=2))  # the parent's pool runs
    x, w = torch.randn(3, 5, 5, 8), torch.randn(4, 8, 3, 3)
    ref = F.conv2d(_nchw(x), w, padding=1).permute(0, 2, 3, 1)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_conv_in_child, args=(queue, x, w))
    child.start()
    try:
        got = queue.get(timeout=60)  # before join: the child exits once its result is flushed
    except Empty:
        got = None
    child.join(timeout=10)
    if child.is_alive():
        child.kill()
    assert got is not None, f"conv in a forked child hung or failed (exit code {child.exitcode})"
    torch.testing.assert_close(torch.tensor(got), ref, rtol=1e-4, atol=1e-4)


def test_torch_bn_relu_path_matches_fused():
    """The alternative BN+ReLU path (PyTorch ops on the NHWC tensors) gives the fused kernel's results."""
    g = torch.Generator().manual_seed(5)
    bn_a, x = _bn(6, g), torch.randn(3, 4, 5, 6, generator=g)
    bn_b = nn.BatchNorm2d(6, momentum=0.05)
    bn_b.load_state_dict(bn_a.state_dict())
    res = torch.randn(3, 4, 5, 6, generator=g)
    torch.testing.assert_close(
        dsp.torch_bn_relu(x, bn_a, True, res), dsp.bn_relu(x, bn_b, True, res), rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(bn_a.running_var, bn_b.running_var)
