"""The BN passes the training trunk saves: the batch statistics' sums taken in a Winograd conv's output
transform (`_C.conv_forward_sums`, then `bn_relu_forward(..., sums)`), and the backward's ReLU mask recomputed
from the BN input (`bn_relu_backward` with y None) instead of read from the stored ReLU output.

The sums: the conv output's bytes unchanged, the float64 sums of that output to float rounding, the same bits
on every kernel build, the BN forward they feed within rounding of the BN's own pass; the direct kernels and
float64 give none. The mask: the bytes of the stored-output path on every build, channel count and dtype.
"""

from __future__ import annotations

import pytest
import torch

from minigo_core.base.runtime import Runtime
from minigo_core.nn.dsp import ops as dsp

_C = dsp._C
ISAS = dsp.supported_isas()


def _run(cores: int = 1, isa: str = "auto", mode: int = 1) -> dsp.KernelRun:
    """The `run` of the `_C` ops: `cores` DSP cores, `isa`, training Winograd `mode`."""
    return dsp.kernel_run(Runtime(threads=cores, isa=isa, winograd_training=mode))


def _conv_case(n: int, c: int, k: int, b: int = 3, seed: int = 0):
    g = torch.Generator().manual_seed(seed + 10 * n + c)
    x = torch.randn(b, n, n, c, generator=g).relu()  # a ReLU output, as a trunk conv's input
    w = torch.randn(k, c, 3, 3, generator=g) / (3 * c**0.5)
    return x, w


def _float64_sums(y: torch.Tensor) -> torch.Tensor:
    yd = y.double().reshape(-1, y.shape[-1])
    return torch.stack([yd.sum(0), (yd * yd).sum(0)])


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("mode", [2, 3])
def test_conv_sums_are_the_sums_of_its_output(isa, cores, mode):
    """y is conv_forward's, bit for bit; the sums are those of y in float64 to ~1e-7 of the channel's scale
    (sum of |y|, sum of y^2), on odd boards and channel counts that leave a tail past the last whole
    vector."""
    run = _run(cores, isa, mode)
    for n, c, k in ((5, 16, 16), (7, 17, 24), (9, 32, 32), (13, 16, 40), (19, 24, 20)):
        x, w = _conv_case(n, c, k)
        y, sums = _C.conv_forward_sums(run, x, w)
        assert torch.equal(y, _C.conv_forward(run, x, w))
        assert sums.dtype == torch.float64 and sums.shape == (2, k)
        ref = _float64_sums(y)
        scale = torch.stack([y.double().abs().reshape(-1, k).sum(0), ref[1]])
        assert float(((sums - ref).abs() / scale).max()) < 1e-6, (n, c, k)


def test_conv_sums_same_bits_on_every_build():
    """Each channel's sums run in one order whatever the vector width (lane or scalar tail alike)."""
    x, w = _conv_case(9, 17, 40, b=5)
    sums = []
    for isa in ISAS:
        sums.append(_C.conv_forward_sums(_run(isa=isa, mode=3), x, w)[1])
    for s in sums[1:]:
        assert torch.equal(s, sums[0])


def test_direct_kernels_and_float64_take_no_sums():
    x, w = _conv_case(9, 16, 16)
    direct = _run(mode=0)
    y, sums = _C.conv_forward_sums(direct, x, w)
    assert sums is None and torch.equal(y, _C.conv_forward(direct, x, w))
    y, sums = _C.conv_forward_sums(_run(mode=1), x.double(), w.double())
    assert sums is None and y.dtype == torch.float64


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("residual", [False, True])
def test_bn_forward_from_the_conv_sums(cores, residual):
    """BN+ReLU fed the conv's sums: the BN's own pass to float rounding (mean, invstd, output, running
    statistics), the same bytes on a rerun."""
    run = _run(cores, mode=3)
    x, w = _conv_case(9, 32, 32, b=16)
    y, sums = _C.conv_forward_sums(run, x, w)
    g = torch.Generator().manual_seed(5)
    gamma, beta = torch.rand(32, generator=g) + 0.5, torch.randn(32, generator=g)
    res = torch.randn(y.shape, generator=g) if residual else None

    def bn(s):
        rm, rv = torch.zeros(32), torch.ones(32)
        return [*_C.bn_relu_forward(run, y, gamma, beta, rm, rv, res, True, 0.1, 1e-5, s), rm, rv]

    own, fused, again = bn(None), bn(sums), bn(sums)
    for a, b, ref in zip(fused, again, own, strict=True):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, ref, rtol=2e-5, atol=2e-5)


def test_bn_forward_sums_errors():
    run = _run()
    y = torch.randn(2, 5, 5, 8)
    ps = [torch.ones(8), torch.zeros(8), torch.zeros(8), torch.ones(8)]
    with pytest.raises(RuntimeError, match="float64"):
        _C.bn_relu_forward(run, y, *ps, None, True, 0.1, 1e-5, torch.zeros(2, 8))
    with pytest.raises(RuntimeError, match=r"\(2, 8\)"):
        _C.bn_relu_forward(run, y, *ps, None, True, 0.1, 1e-5, torch.zeros(2, 7, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="training only"):
        _C.bn_relu_forward(run, y, *ps, None, False, 0.1, 1e-5, torch.zeros(2, 8, dtype=torch.float64))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("c", [3, 8, 16, 17, 32, 64])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("training", [True, False])
def test_backward_mask_from_the_bn_input(isa, c, dtype, training):
    """Without a residual, the ReLU's mask from x * scale + shift (y None) gives the bytes of the stored
    output's mask: vector rows, the few-channel loops and the generic ones, float32 and float64."""
    run = _run(isa=isa)
    g = torch.Generator().manual_seed(c)
    x, dy = (torch.randn(4, 7, 7, c, generator=g, dtype=dtype) for _ in range(2))
    gamma, beta = torch.rand(c, generator=g, dtype=dtype) + 0.5, torch.randn(c, generator=g, dtype=dtype)
    rm, rv = torch.randn(c, generator=g, dtype=dtype), torch.rand(c, generator=g, dtype=dtype) + 0.5
    z, mean, invstd = _C.bn_relu_forward(run, x, gamma, beta, rm, rv, None, training, 0.1, 1e-5)
    assert 0 < int((z > 0).sum()) < z.numel()
    stored = _C.bn_relu_backward(run, dy, z, x, gamma, mean, invstd, training, False)
    recomputed = _C.bn_relu_backward(run, dy, None, x, gamma, mean, invstd, training, False, beta)
    for a, b in zip(stored[:3], recomputed[:3], strict=True):
        assert torch.equal(a, b)


def test_backward_mask_needs_beta():
    x = torch.randn(2, 5, 5, 8)
    with pytest.raises(RuntimeError, match="beta"):
        _C.bn_relu_backward(_run(), x, None, x, torch.ones(8), torch.zeros(8), torch.ones(8), True, False)
