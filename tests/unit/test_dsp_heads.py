"""The dsp backend's one-node heads (`minigo_core.nn.dsp.heads`: the policy, value and ownership 1x1 convs as
one conv, the two BN+ReLUs as one): against the per-op reference (`dsp.reference`: one Function per conv and
per BN+ReLU, the ownership conv on torch's linear), the same bytes in the policy and value outputs, the BN
running statistics and the gradients of the policy and value heads' parameters (each output channel's sums run
as in separate ops); the trunk output's gradient is one sum over the channels instead of three tensors added
by autograd, so the trunk's gradients and the ownership head agree to rounding. 1 and 2 DSP cores, Winograd
and direct convs; gradients by finite differences in float64."""

from __future__ import annotations

import pytest
import torch

from minigo_core.base.runtime import Runtime
from minigo_core.nn.dsp import heads, ops, reference, trunk
from minigo_core.nn.model import DualNet, ModelConfig, random_model


def _run(cfg: ModelConfig, one_node: bool, training: bool, x: torch.Tensor, rt: Runtime):
    """The production path (`one_node`) or the reference's per-op heads (with the production trunk), the
    kernels run as `rt` says."""
    net = DualNet(cfg, backend="dsp", runtime=rt)
    net.load_state_dict(random_model(cfg, 3).state_dict())
    net.train(training)
    if one_node:
        logits, value, own, score = net.forward_all(x)
    else:
        logits, value, own, score = reference.forward_per_op(net, x, trunk=trunk.trunk)
    loss = logits.square().mean() + value.sum()
    if own is not None:
        loss = loss + own.square().mean() + score.sum()
    loss.backward()
    grads = {n: p.grad for n, p in net.named_parameters()}
    return [logits, value], own, grads, dict(net.named_buffers())


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("aux", [True, False])
def test_one_node_heads_against_the_per_op_path(cores, mode, training, aux):
    rt = Runtime(threads=cores, winograd_training=mode)
    cfg = ModelConfig(7, 2, 16, 16, "agz", aux_heads=aux)
    x = torch.randint(0, 2, (5, cfg.planes, 7, 7), generator=torch.Generator().manual_seed(1)).float()
    outs, own, grads, bufs = _run(cfg, True, training, x, rt)
    outs_ref, own_ref, grads_ref, bufs_ref = _run(cfg, False, training, x, rt)
    for a, b in zip(outs, outs_ref, strict=True):
        assert torch.equal(a, b)
    for k in bufs:
        assert torch.equal(bufs[k], bufs_ref[k]), k
    if aux:
        torch.testing.assert_close(own, own_ref, rtol=1e-5, atol=1e-6)
    else:
        assert own is None and own_ref is None
    for k in grads:
        if k.startswith(("conv1_policy.", "conv1_value.", "policy_fc.", "value_fc", "score_fc.")):
            assert torch.equal(grads[k], grads_ref[k]), k
        else:  # the trunk and the ownership head: the trunk output's gradient summed in another order
            scale = float(grads_ref[k].abs().max())  # errors relative to the tensor's scale
            torch.testing.assert_close(grads[k], grads_ref[k], rtol=1e-4, atol=1e-5 * scale, msg=k)


@pytest.mark.parametrize("aux", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_one_node_heads_gradients_by_finite_differences(aux, training):
    cfg = ModelConfig(5, 1, 4, 4, "agz", aux_heads=aux)
    net = DualNet(cfg, backend="dsp").double().train(training)
    run = ops.kernel_run(net.runtime)
    h = torch.randn(2, 5, 5, cfg.filters, dtype=torch.float64, requires_grad=True)
    bns = [net.conv1_policy.bn, net.conv1_value.bn]
    params = [t for m in (net.conv1_policy, net.conv1_value) for t in (m.conv.weight, m.bn.weight, m.bn.bias)]
    if aux:
        params += [net.ownership_conv.weight, net.ownership_conv.bias]
    with torch.no_grad():
        for bn in bns:  # eval mode: non-trivial running statistics
            bn.running_mean.normal_(0, 0.2)
            bn.running_var.uniform_(0.5, 1.5)

    def f(hh, *ps):  # training: batch statistics (the running ones are updated, never read)
        p, v, o = heads.HeadsFunction.apply(hh, bns, training, run, *ps)
        return (p, v, o) if aux else (p, v)

    assert torch.autograd.gradcheck(f, (h, *params), eps=1e-6, atol=1e-5)
