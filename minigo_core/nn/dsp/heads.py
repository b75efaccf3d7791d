"""The dsp backend's head inputs as one autograd Function (`heads`): the policy and value heads' 1x1 conv ->
BN -> ReLU and the ownership head's 1x1 conv, from the NHWC trunk output.

The three 1x1 convs read the same trunk output, so they run as one conv to 2 + C output channels (C the value
head's: 1, or filters/2 with the pooled value head; one more with the ownership head), and the two BNs as one
BN over those channels (the ownership channel's statistics are computed and dropped). Each output channel's
sums run over the input channels (conv) or the pixels (BN) as they do in the per-op path, so the forward
floats of the policy and value features, the BN statistics and the weight gradients are those of separate
ops; the trunk output's gradient is one sum over the channels instead of three tensors added by autograd
(different rounding, the same mathematics). One autograd node instead of 4-5, one pass over the trunk output
instead of three, forward and backward.
"""

from __future__ import annotations

import torch

from minigo_core.nn.dsp import _C, ops
from minigo_core.nn.dsp.trunk import bn_params
from minigo_core.nn.dsp_device import require_cpu
from minigo_core.nn.gpool import pooled_value_features


class HeadsFunction(torch.autograd.Function):
    """(policy features (B, 2*N*N) in NCHW order, the value head's map (B, N, N, C) after BN+ReLU, ownership
    logits (B, N*N) or an empty tensor) of NHWC h (B, N, N, F); params: policy conv weight, BN gamma, beta,
    the same for the value head, then the ownership conv's weight and bias (or nothing); `run`: how the
    kernels run (a KernelRun)."""

    @staticmethod
    def forward(ctx, h, bns, training, run, *params):
        own = len(params) == 8
        one, zero = ([h.new_ones(1)], [h.new_zeros(1)]) if own else ([], [])  # the ownership channel's BN
        w = torch.cat([params[0], params[3], *params[6:7]])  # (K, F, 1, 1), K = 2 + C (+ 1)
        c = params[3].shape[0]
        gamma, beta = torch.cat([params[1], params[4], *one]), torch.cat([params[2], params[5], *zero])
        rmean = torch.cat([bns[0].running_mean, bns[1].running_mean, *zero])
        rvar = torch.cat([bns[0].running_var, bns[1].running_var, *one])
        bn = bns[0]
        if (bns[1].momentum, bns[1].eps) != (bn.momentum, bn.eps):
            raise ValueError("the policy and value heads' BNs must share one momentum and eps")
        h = h.contiguous()
        y = _C.conv_forward(run, h, w)
        z, mean, invstd = _C.bn_relu_forward(
            run, y, gamma, beta, rmean, rvar, None, training, bn.momentum, bn.eps
        )
        if training:  # the running statistics back into the modules (policy: channels 0-1, value: 2 .. 1 + C)
            with torch.no_grad():
                for b, (c0, c1) in zip(bns, ((0, 2), (2, 2 + c)), strict=True):
                    b.running_mean.copy_(rmean[c0:c1])
                    b.running_var.copy_(rvar[c0:c1])
        ctx.training, ctx.own, ctx.run, ctx.c = training, own, run, c
        ctx.save_for_backward(h, w, y, z, gamma, mean, invstd)
        p = z[..., :2].permute(0, 3, 1, 2).flatten(1)  # NCHW flatten order
        v = z[..., 2 : 2 + c]
        o = (y[..., 2 + c] + params[7]).flatten(1) if own else y.new_empty(0)
        return p, v, o

    @staticmethod
    def backward(ctx, dp, dv, do):
        h, w, y, z, gamma, mean, invstd = ctx.saved_tensors
        b, n, c = h.shape[0], h.shape[1], ctx.c
        dz = y.new_empty(y.shape)
        dz[..., :2] = dp.reshape(b, 2, n, n).permute(0, 2, 3, 1)
        dz[..., 2 : 2 + c] = dv
        if ctx.own:
            dz[..., 2 + c] = 0
        dy, dg, db, _ = _C.bn_relu_backward(ctx.run, dz, z, y, gamma, mean, invstd, ctx.training, False)
        if ctx.own:  # the ownership channel: no BN, its gradient straight into the conv's
            dy[..., 2 + c] = do.reshape(b, n, n)
        dh, dw = _C.conv_backward(ctx.run, dy, h, w, ctx.needs_input_grad[0], True)
        grads = [dw[:2], dg[:2], db[:2], dw[2 : 2 + c], dg[2 : 2 + c], db[2 : 2 + c]]
        if ctx.own:
            grads += [dw[2 + c : 3 + c], do.sum().reshape(1)]
        return (dh if ctx.needs_input_grad[0] else None), None, None, None, *grads


def heads(net, h: torch.Tensor, training: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(policy features, value features, ownership logits or None) of DualNet `net` from its NHWC trunk output
    `h`, the kernels run as `net.runtime` says; updates the BN running stats when training, as `ops.bn_relu`
    does."""
    require_cpu("the dsp heads", h, *net.parameters())  # before bn_params counts a batch
    run = ops.kernel_run(net.runtime)
    bns, params = bn_params([net.conv1_policy, net.conv1_value], training)
    if net.cfg.aux_heads:
        params += [net.ownership_conv.weight, net.ownership_conv.bias]
    p, v, o = HeadsFunction.apply(h, bns, training, run, *params)
    return p, value_features(net, v), (o if net.cfg.aux_heads else None)


def value_features(net, v: torch.Tensor) -> torch.Tensor:
    """The value head's dense layer's input from its NHWC map `v` (B, N, N, C): the map flattened (AlphaGo
    Zero's head, C = 1) or, with `net.cfg.value_pool`, its channels pooled (`gpool.pooled_value_features`)."""
    if net.cfg.value_pool:
        return pooled_value_features(v, net.cfg.board_size, 3)
    return v.flatten(1)
