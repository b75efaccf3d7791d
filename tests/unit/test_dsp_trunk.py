"""The dsp backend's one-node training trunk (`minigo_core.nn.dsp.trunk`): with the BN sums taken by the BN
kernels (`DspOptions(fuse_bn_sums=False)`), the same bytes as the per-op reference (`dsp.reference`: one
autograd Function per conv and per BN+ReLU) in outputs, every parameter's gradient and the BN running
statistics, on Winograd and direct convs, 1 and 2 DSP cores; with the sums taken in the Winograd convs' output
transforms (the default), the per-op path's values to float rounding and the same bytes on a rerun; gradients
by finite differences in float64."""

from __future__ import annotations

import pytest
import torch

from minigo_core.base.runtime import Runtime
from minigo_core.nn.dsp import heads, ops, reference, trunk
from minigo_core.nn.model import DspOptions, DualNet, ModelConfig, random_model


def _run(
    cfg: ModelConfig, one_node: bool, training: bool, x: torch.Tensor, rt: Runtime, fuse_bn_sums: bool = True
):
    """Outputs, gradients and buffers of the production path (`one_node`) or the reference's per-op trunk
    (with the production heads), the kernels run as `rt` says."""
    options = DspOptions(fuse_bn_sums=fuse_bn_sums)
    net = DualNet(cfg, backend="dsp", dsp_options=options, runtime=rt)
    net.load_state_dict(random_model(cfg, 3).state_dict())
    net.train(training)
    if one_node:
        logits, value, own, score = net.forward_all(x)
    else:
        logits, value, own, score = reference.forward_per_op(net, x, heads=heads.heads)
    (logits.square().mean() + value.sum() + own.mean() + score.sum()).backward()
    return [logits, value, *(p.grad for p in net.parameters()), *net.buffers()]


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("training", [True, False])
def test_one_node_trunk_gives_the_per_op_bytes(cores, mode, training):
    rt = Runtime(threads=cores, winograd_training=mode)
    cfg = ModelConfig(7, 2, 16, 16, "agz", aux_heads=True)
    x = torch.randint(0, 2, (5, cfg.planes, 7, 7), generator=torch.Generator().manual_seed(1)).float()
    one_node, per_op = _run(cfg, True, training, x, rt, fuse_bn_sums=False), _run(cfg, False, training, x, rt)
    for a, b in zip(one_node, per_op, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("n", [5, 9, 19])
def test_fused_bn_sums_track_the_per_op_path_and_rerun_byte_identical(cores, n):
    """The BN statistics summed in the Winograd output transforms: another order of the same sums, so the
    per-op path's values to float rounding (BN's backward cancels, so gradients carry ~1e-5 of it), and the
    same bytes when run again."""
    assert DspOptions().fuse_bn_sums
    rt = Runtime(threads=cores)
    cfg = ModelConfig(n, 2, 32, 16, "agz", aux_heads=True)
    assert ops.winograd_training_tile(n, n, 32, 32, rt.winograd_training) in (2, 3)
    x = torch.randint(0, 2, (6, cfg.planes, n, n), generator=torch.Generator().manual_seed(2)).float()
    fused, again, per_op = ([t.detach() for t in _run(cfg, one, True, x, rt)] for one in (True, True, False))
    for a, b, ref in zip(fused, again, per_op, strict=True):
        assert torch.equal(a, b)
        if ref.is_floating_point():
            assert float((a - ref).abs().max()) <= 1e-4 * max(float(ref.abs().max()), 1e-3)


def test_one_node_trunk_gradients_by_finite_differences():
    cfg = ModelConfig(5, 1, 4, 4, "agz")
    net = DualNet(cfg, backend="dsp").double().train()
    run = ops.kernel_run(net.runtime)
    x = torch.randn(2, 5, 5, cfg.planes, dtype=torch.float64, requires_grad=True)
    bns = [m.bn for m in trunk._layers(net)]
    params = [t for m in trunk._layers(net) for t in (m.conv.weight, m.bn.weight, m.bn.bias)]

    def f(xx, *ps):  # release=False: gradcheck runs several backwards of one graph
        return trunk.TrunkFunction.apply(xx, bns, trunk.TrunkPass(True, True, False, True, run), *ps)

    assert torch.autograd.gradcheck(f, (x, *params), eps=1e-6, atol=1e-5)
