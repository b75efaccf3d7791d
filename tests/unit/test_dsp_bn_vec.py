"""The float BN+ReLU loops for rows of whole vectors (csrc/bn_vec_impl.h) give the generic loops' bytes:
the same channels with one extra channel appended (a row that is no whole number of vectors: the generic
loops) must come out the same, forward (with and without the residual) and backward, on every build."""

from __future__ import annotations

import pytest
import torch

from minigo_core.base.runtime import Runtime
from minigo_core.nn.dsp import ops as dsp

_C = dsp._C


def _bn(x, res, dy, training, params, run):
    c = x.shape[-1]
    gamma, beta, rm, rv = (p[:c].clone() for p in params)
    y, mean, invstd = _C.bn_relu_forward(run, x, gamma, beta, rm, rv, res, training, 0.05, 1e-5)
    dx, dg, db, dres = _C.bn_relu_backward(run, dy, y, x, gamma, mean, invstd, training, res is not None)
    return [y, dx, dres] if res is not None else [y, dx], [mean, invstd, dg, db, rm, rv]


def _assert_first_channels_match(x, res, dy, params, c, residual, training, isa):
    """The BN+ReLU forward and backward of the first c channels give the bytes of those of all channels, on
    the kernels of `isa`."""
    run = dsp.kernel_run(Runtime(isa=isa))
    cut = [t[..., :c].contiguous() for t in (x, res, dy)]
    acts_full, vecs_full = _bn(x, res if residual else None, dy, training, params, run)
    acts_cut, vecs_cut = _bn(cut[0], cut[1] if residual else None, cut[2], training, params, run)
    for a, b in zip(acts_full, acts_cut, strict=True):
        assert torch.equal(a[..., :c], b)
    for a, b in zip(vecs_full, vecs_cut, strict=True):
        assert torch.equal(a[:c], b)


@pytest.mark.parametrize("isa", dsp.supported_isas())
@pytest.mark.parametrize("c", [8, 16, 32, 48, 64])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_vector_rows_give_the_generic_bytes(isa, c, residual, training):
    g = torch.Generator().manual_seed(7)
    x, res, dy = (torch.randn(3, 9, 9, c + 1, generator=g) for _ in range(3))
    params = (torch.rand(c + 1, generator=g) + 0.5, torch.randn(c + 1, generator=g),
              torch.randn(c + 1, generator=g), torch.rand(c + 1, generator=g) + 0.5)  # fmt: skip
    _assert_first_channels_match(x, res, dy, params, c, residual, training, isa)


@pytest.mark.parametrize("isa", dsp.supported_isas())
@pytest.mark.parametrize("c", [1, 2, 3, 4])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_few_channel_rows_give_the_generic_bytes(isa, c, residual, training):
    """Rows of 1-4 channels (the heads' BN) run the generic loops compiled for that channel count: the same
    bytes as the first c channels of 7-channel rows (the generic loops with the count at run time)."""
    g = torch.Generator().manual_seed(11)
    x, res, dy = (torch.randn(5, 9, 9, 7, generator=g) for _ in range(3))
    params = (torch.rand(7, generator=g) + 0.5, torch.randn(7, generator=g),
              torch.randn(7, generator=g), torch.rand(7, generator=g) + 0.5)  # fmt: skip
    _assert_first_channels_match(x, res, dy, params, c, residual, training, isa)
