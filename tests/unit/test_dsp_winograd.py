"""Winograd 3x3 convolutions of the DSP-emulation training ops: forward, input gradient and weight gradient.

Each pass, F(2x2,3x3) and F(3x3,3x3), on every kernel build this CPU runs, with 1 and 2 DSP cores, on odd
boards (5, 7, 9, 13, 19), against a float64 reference (torch's conv in double) and the direct kernels; the
error bound per tile size is stated next to the error of torch's own float32 direct convolution on the same
inputs. Then: the same bits from every build, the gradients by finite differences, the per-shape choice.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from minigo_core.base.runtime import Runtime, RuntimeSettingError
from minigo_core.nn import training
from minigo_core.nn.dsp import ops as dsp
from minigo_core.nn.model import ModelConfig, random_model

_C = dsp._C
ISAS = dsp.supported_isas()
BOARDS = (5, 7, 9, 13, 19)
# max abs error / max abs reference, per tile size (seen on these shapes: F(2x2) <= 5e-7, F(3x3) <= 3e-6,
# torch's float32 direct conv <= 4e-7); float32 rounding of the transforms grows with the tile
REL_BOUND = {2: 3e-6, 3: 2e-5}


def _case(n: int, c: int, k: int, b: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed + 100 * n + c)
    x = torch.randn(b, n, n, c, generator=g, dtype=torch.float64)
    w = torch.randn(k, c, 3, 3, generator=g, dtype=torch.float64) / (3 * c**0.5)
    dy = torch.randn(b, n, n, k, generator=g, dtype=torch.float64)
    return x, w, dy


def _reference(x, w, dy):
    """(y, dx, dw) of torch's conv on (x, w) with output gradient dy, NHWC, in x's dtype."""
    xr = x.permute(0, 3, 1, 2).detach().requires_grad_(True)
    wr = w.detach().clone().requires_grad_(True)
    y = F.conv2d(xr, wr, padding=1)
    dx, dw = torch.autograd.grad(y, (xr, wr), dy.permute(0, 3, 1, 2).to(x.dtype))
    return y.detach().permute(0, 2, 3, 1), dx.permute(0, 2, 3, 1), dw


def _run(cores: int = 1, isa: str = "auto", mode: int = 1) -> dsp.KernelRun:
    """The `run` of the `_C` ops: `cores` DSP cores, `isa`, training Winograd `mode`."""
    return dsp.kernel_run(Runtime(threads=cores, isa=isa, winograd_training=mode))


def _passes(x, w, dy, run: dsp.KernelRun):
    """(y, dx, dw) of the dsp kernels on float32 copies, run as `run` says."""
    x, w, dy = x.float().contiguous(), w.float().contiguous(), dy.float().contiguous()
    dx, dw = _C.conv_backward(run, dy, x, w, True, True)
    return _C.conv_forward(run, x, w), dx, dw


def _rel(a: torch.Tensor, ref: torch.Tensor) -> float:
    return float((a.double() - ref).abs().max() / ref.abs().max())


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("tile", [2, 3])
def test_passes_match_float64_and_direct(isa, cores, tile):
    for n in BOARDS:
        c, k = (16, 24) if n % 2 else (24, 16)  # 24: an 8-wide last channel block (masked under 16 lanes)
        x, w, dy = _case(n, c, k, b=3 if n < 19 else 2)
        ref = _reference(x, w, dy)
        assert dsp.winograd_training_tile(n, n, c, k, tile) == tile
        wino = _passes(x, w, dy, _run(cores, isa, tile))
        direct = _passes(x, w, dy, _run(cores, isa, 0))
        for name, got, dref, want in zip(("y", "dx", "dw"), wino, direct, ref, strict=True):
            err = _rel(got, want)
            assert err < REL_BOUND[tile], f"{isa} {cores} cores F({tile}x{tile}) {n}x{n} {name}: {err:.2e}"
            assert _rel(got, dref.double()) < REL_BOUND[tile] + 1e-6, f"{name} vs the direct kernel"


@pytest.mark.parametrize("tile", [2, 3])
def test_error_next_to_torch_float32(tile):
    """The Winograd error against float64, per pass, next to torch's float32 direct conv on the same inputs:
    F(2x2) within 4x of torch's, F(3x3) within 25x (the transform points 2 and 1/6 cost precision)."""
    factor = {2: 4.0, 3: 25.0}[tile]
    for n, c in ((9, 32), (19, 64)):
        x, w, dy = _case(n, c, c, b=4)
        ref = _reference(x, w, dy)
        torch32 = _reference(x.float(), w.float(), dy.float())
        wino = _passes(x, w, dy, _run(mode=tile))
        for name, got, t32, want in zip(("y", "dx", "dw"), wino, torch32, ref, strict=True):
            e_wino, e_torch = _rel(got, want), _rel(t32, want)
            assert e_wino < factor * max(e_torch, 1e-7), (
                f"{n}x{n} {name}: {e_wino:.2e} vs torch {e_torch:.2e}"
            )


def test_same_bits_on_every_build_and_rerun():
    """Each output's sums run in one order whatever the vector width: every build gives the same floats, and
    a rerun the same bytes (1 and 2 cores: the weight gradient's tree is the same for a given core count)."""
    x, w, dy = _case(9, 24, 40, b=5)
    for cores in (1, 2):
        results = {}
        for isa in ISAS:
            results[isa] = _passes(x, w, dy, _run(cores, isa))
            for a, b in zip(results[isa], _passes(x, w, dy, _run(cores, isa)), strict=True):
                assert torch.equal(a, b), f"{isa}: a rerun differs"
        for isa in ISAS:
            for name, a, b in zip(("y", "dx", "dw"), results[isa], results[ISAS[0]], strict=True):
                assert torch.equal(a, b), f"{name}: {isa} differs from {ISAS[0]} ({cores} cores)"


@pytest.mark.parametrize("tile", [2, 3])
def test_gradients_by_finite_differences(tile):
    """<dL/dx, v> and <dL/dw, u> of L = <conv(x, w), g> against central differences of L along v and u (the
    conv is linear in each, so a step of 1 leaves only float32 rounding)."""
    rt = Runtime(winograd_training=tile)
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(2, 7, 7, 16, generator=gen).requires_grad_(True)
    w = (torch.randn(12, 16, 3, 3, generator=gen) * 0.1).requires_grad_(True)
    g, v, u = (
        torch.randn(2, 7, 7, 12, generator=gen),
        torch.randn(2, 7, 7, 16, generator=gen),
        torch.randn(12, 16, 3, 3, generator=gen),
    )
    dx, dw = torch.autograd.grad((dsp.conv(x, w, rt) * g).sum(), (x, w))

    def loss(xx, ww) -> float:
        return float((dsp.conv(xx.detach(), ww.detach(), rt).double() * g.double()).sum())

    for grad, direction, args in ((dx, v, lambda s: (x + s * v, w)), (dw, u, lambda s: (x, w + s * u))):
        fd = (loss(*args(1.0)) - loss(*args(-1.0))) / 2
        analytic = float((grad.double() * direction.double()).sum())
        assert abs(fd - analytic) <= 1e-4 * max(1.0, abs(analytic)), (fd, analytic)


def test_tile_choice_by_board_and_channels():
    for n in BOARDS:
        assert dsp.winograd_training_tile(n, n, 32, 32, 1) == 3  # F(3x3) needs the fewest multiplications
    assert dsp.winograd_training_tile(19, 19, 13, 64, 1) == 0  # fewer channels than a vector: direct
    assert dsp.winograd_training_tile(1, 1, 32, 32, 1) == 0  # one pixel: direct needs fewer
    assert dsp.winograd_training_tile(9, 9, 32, 32, 2) == 2
    assert dsp.winograd_training_tile(5, 5, 8, 8, 2) == 2  # forced: every shape
    assert dsp.winograd_training_tile(9, 9, 32, 32, 0) == 0
    assert Runtime(winograd_training=False).winograd_training == 0
    with pytest.raises(RuntimeSettingError, match="True, False, 0, 1, 2 or 3"):
        Runtime(winograd_training=5)


def test_float64_runs_the_direct_reference():
    """gradcheck's float64 path is the direct kernel whatever the mode: the same bits with Winograd on/off."""
    x, w, dy = _case(5, 8, 8, b=2)
    on, off = _run(mode=3), _run(mode=0)
    on = (_C.conv_forward(on, x, w), *_C.conv_backward(on, dy, x, w, True, True))
    off = (_C.conv_forward(off, x, w), *_C.conv_backward(off, dy, x, w, True, True))
    for a, b in zip(on, off, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("mode", [0, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_input_grad_adds_the_residual(isa, cores, mode, dtype):
    """conv_backward's dx_residual (the trunk's skip gradient) gives the bytes of dx + residual, on every
    build, Winograd tile and the direct kernel (float64: direct)."""
    run = _run(cores, isa, mode)
    x, w, dy = (t.to(dtype) for t in _case(7, 16, 24, b=3))
    res = torch.randn(x.shape, generator=torch.Generator().manual_seed(4), dtype=dtype)
    dx, dw = _C.conv_backward(run, dy, x, w, True, True)
    dx_res, dw_res = _C.conv_backward(run, dy, x, w, True, True, res)
    assert torch.equal(dx_res, dx + res)
    assert torch.equal(dw_res, dw)


def _train_steps(mode: int, cores: int, steps: int = 3) -> dict[str, torch.Tensor]:
    """The state dict after `steps` SGD steps of a 9x9 1x16 dsp net (3x3 convs: Winograd unless mode 0)."""
    cfg = ModelConfig(9, 1, 16, 8, "agz", aux_heads=True)
    net = random_model(cfg, 3, backend="dsp", runtime=Runtime(threads=cores, winograd_training=mode))
    net.train()
    opt = torch.optim.SGD(training.param_groups(net, 1e-4), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(4)
    for _ in range(steps):
        mb = training.MicroBatch(
            torch.randint(0, 2, (5, cfg.planes, 9, 9), generator=g).float(),
            torch.softmax(torch.randn(5, 82, generator=g), 1),
            torch.sign(torch.randn(5, generator=g)),
            torch.sign(torch.randn(5, 81, generator=g)),
            torch.randn(5, generator=g),
        )
        training.sgd_step(net, opt, [mb], 0.05, (1.0, 1.0, 1.0), 1, torch.device("cpu"))
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


@pytest.mark.parametrize("cores", [1, 2])
def test_training_with_winograd_reruns_byte_identical_and_tracks_direct(cores):
    assert dsp.winograd_training_tile(9, 9, 16, 16) == 3
    first, again, direct = _train_steps(1, cores), _train_steps(1, cores), _train_steps(0, cores)
    for k in first:
        assert torch.equal(first[k], again[k]), f"{k}: a rerun differs"
        torch.testing.assert_close(first[k], direct[k], rtol=1e-3, atol=1e-4, msg=f"{k} vs direct")
