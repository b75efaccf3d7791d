"""The dsp backend's per-op reference: a DualNet's training forward with one autograd Function per conv
(`ops.conv`) and per BN+ReLU (`ops.bn_relu`), run as the net's `runtime` says, the ownership conv on torch's
linear.

Production code never takes this path: `DualNet.forward_all` runs the trunk and the heads' inputs as one
Function each (`trunk.trunk`, `heads.heads`). The tests call `forward_per_op` to hold those to the same
kernels in the same order (tests/unit/test_dsp_trunk.py, test_dsp_heads.py).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from minigo_core.nn.dsp import ops
from minigo_core.nn.dsp.heads import value_features
from minigo_core.nn.gpool import global_pool_bias
from minigo_core.nn.model import dsp_input

Features = tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]


def _conv_bn_relu(
    net, m, h: torch.Tensor, training: bool, residual: torch.Tensor | None = None
) -> torch.Tensor:
    return ops.bn_relu(ops.conv(h, m.conv.weight, net.runtime), m.bn, training, residual, net.runtime)


def trunk_per_op(net, h: torch.Tensor, training: bool) -> torch.Tensor:
    """The trunk of DualNet `net` on NHWC `h`, one Function per op: `trunk.trunk` with `fuse_bn_sums`
    False gives these bytes."""
    h = _conv_bn_relu(net, net.conv3_initial, h, training)
    for block in net.blocks:
        r = _conv_bn_relu(net, block.conv1, h, training)
        if block.gpool_fc is not None:  # the global pooling bias, in torch ops
            r = global_pool_bias(block.gpool_fc, r, net.cfg.board_size, 3).contiguous()
        h = _conv_bn_relu(net, block.conv2, r, training, residual=h)
    return h


def heads_per_op(net, h: torch.Tensor, training: bool) -> Features:
    """(policy features, value features, ownership logits or None) from the NHWC trunk output `h`, one
    Function per op: what `heads.heads` computes."""
    p = _conv_bn_relu(net, net.conv1_policy, h, training).permute(0, 3, 1, 2).flatten(1)  # NCHW flatten order
    v = value_features(net, _conv_bn_relu(net, net.conv1_value, h, training))
    own = None
    if net.cfg.aux_heads:  # NHWC trunk: the 1x1 conv to one channel is a dot product per point
        w, b = net.ownership_conv.weight, net.ownership_conv.bias
        own = F.linear(h, w.reshape(1, -1), b).flatten(1)
    return p, v, own


def forward_per_op(
    net,
    x: torch.Tensor,
    trunk: Callable[..., torch.Tensor] = trunk_per_op,
    heads: Callable[..., Features] = heads_per_op,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """`net.forward_all(x)` of a dsp-backend DualNet on the per-op path. `trunk` and `heads` (each called as
    `f(net, h, training)`) replace one part by another, e.g. `heads=heads.heads` to test the trunk alone."""
    h = trunk(net, dsp_input(x), net.training)
    p, v, own = heads(net, h, net.training)
    return net.head_outputs(p, v, own)
