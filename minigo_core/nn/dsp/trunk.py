"""The residual trunk of the dsp backend as one autograd Function (`trunk`): conv3x3 -> BN -> ReLU, then the
residual blocks, NHWC throughout.

One Function for the whole trunk instead of one per conv and per BN+ReLU: forward and backward call the same
compiled kernels (`_C.conv_forward`, `_C.bn_relu_forward`, ...) in the same order with the same inputs, so
the floats are those of the per-op path, but the autograd engine sees one node (not ~20, each with its
Python `apply`, saved-tensor unpacking and gradient accumulation), and the skip connection's two gradients
are added in place by the backward itself.

With `fuse_bn_sums` (the default; a field of the DualNet's `DspOptions`), where a layer's conv runs Winograd,
its BN's batch statistics (sum and sum of squares per channel) come from the conv's output transform
(`_C.conv_forward_sums`) instead of a pass of their own over the stored conv output: the same element-wise
expressions summed in another order (per tile and chunk of tiles), so the BN statistics, and through them
every later float, differ from the per-op path's (`reference.forward_per_op`) in the last bits (reruns on one
machine still give the same bytes); with False, the floats are the per-op path's.

Every kernel call runs as the net's `runtime` says (its DSP cores, ISA and training Winograd mode), given to
the Function as a `KernelRun`.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from minigo_core.nn.dsp import _C, ops
from minigo_core.nn.dsp_device import require_cpu
from minigo_core.nn.gpool import global_pool_bias


def _layers(net) -> list:
    """The trunk's ConvBN layers in forward order: the initial conv, then conv1, conv2 of each block."""
    out = [net.conv3_initial]
    for block in net.blocks:
        out += [block.conv1, block.conv2]
    return out


class TrunkPass(NamedTuple):
    """How a TrunkFunction runs. `training`: batch statistics (and the running ones updated) or the running
    ones. `fuse_bn_sums`: take the BN sums in the Winograd convs' output transforms (see the module's
    docstring); False: the BN kernels' own passes, the per-op path's floats. `release`: free each layer's
    saved activations as soon as its backward is done (the per-op path's memory pattern: freeing them all at
    the end makes malloc hand the memory back and take it again); False keeps them for a second backward
    (retain_graph, gradcheck). `stem`: the first layer is the initial conv (no skip), then pairs of layers
    are blocks; False: every pair is a block (a run of blocks after a global pooling block). `run`: how the
    kernels run (`ops.KernelRun`)."""

    training: bool
    fuse_bn_sums: bool
    release: bool
    stem: bool
    run: ops.KernelRun


class TrunkFunction(torch.autograd.Function):
    """h (B,H,W,F) = the trunk of NHWC x; params: (conv weight, BN gamma, BN beta) per layer; `how`: a
    TrunkPass."""

    @staticmethod
    def forward(ctx, x, bns, how: TrunkPass, *params):
        training, fuse_bn_sums, release, stem, run = how
        h = x.contiguous()
        ws, gs, bs = params[0::3], params[1::3], params[2::3]
        ctx.training, ctx.release, ctx.run = training, release, run
        ctx.first = int(stem)  # the first block's conv1
        ctx.acts, ctx.pre, ctx.stats = ([h] if stem else []), [], []  # conv inputs, BN inputs, (mean, invstd)

        def conv_bn_relu(i: int, a: torch.Tensor, res: torch.Tensor | None) -> torch.Tensor:
            bn = bns[i]
            if training and fuse_bn_sums:  # the BN batch sums from the conv's output transform (if Winograd)
                y, sums = _C.conv_forward_sums(run, a, ws[i].contiguous())
            else:
                y, sums = _C.conv_forward(run, a, ws[i].contiguous()), None
            z, mean, invstd = _C.bn_relu_forward(
                run, y, gs[i].contiguous(), bs[i].contiguous(), bn.running_mean, bn.running_var, res,
                training, bn.momentum, bn.eps, sums,
            )  # fmt: skip
            ctx.pre.append(y)
            ctx.stats.append((mean, invstd))
            return z

        if stem:
            h = conv_bn_relu(0, h, None)
        for i in range(ctx.first, len(ws), 2):
            ctx.acts.append(h)
            r = conv_bn_relu(i, h, None)
            ctx.acts.append(r)
            h = conv_bn_relu(i + 1, r, h)
        ctx.save_for_backward(h, *params)
        return h

    @staticmethod
    def backward(ctx, dh):
        h, *params = ctx.saved_tensors
        ws, gs, bs = params[0::3], params[1::3], params[2::3]
        acts, pre, stats = ctx.acts, ctx.pre, ctx.stats
        grads: list = [None] * len(params)
        outs = [*acts[1:], h]  # layer i reads acts[i] and writes outs[i] (= acts[i + 1])
        dh, pending = dh.contiguous(), None  # pending: the skip's gradient, added at its block's input
        need_x = ctx.needs_input_grad[0]
        for i in range(len(ws) - 1, -1, -1):
            residual = i >= ctx.first and (i - ctx.first) % 2 == 1  # conv2 of a block: BN + skip + ReLU
            mean, invstd = stats[i]
            # without a residual the ReLU's mask comes from the BN input and the forward's scale and shift
            # (the same floats; one tensor less to read)
            dy, dg, db, dres = _C.bn_relu_backward(
                ctx.run, dh, outs[i] if residual else None, pre[i], gs[i].contiguous(), mean, invstd,
                ctx.training, residual, bs[i].contiguous(),
            )  # fmt: skip
            # conv1 of a block (pending: the skip's gradient): its input is also the skip, whose gradient
            # the input-gradient pass adds to each output (the bytes of da + pending, one pass less)
            need_da = i > 0 or need_x
            da, dw = _C.conv_backward(ctx.run, dy, acts[i], ws[i].contiguous(), need_da, True, pending)
            grads[3 * i : 3 * i + 3] = [dw, dg, db]
            dh, pending = da, dres
            if ctx.release:  # as the per-op path frees each layer's tensors after its backward
                pre[i] = outs[i] = None
                acts[i + 1 : i + 2] = [None] * len(acts[i + 1 : i + 2])
        return (dh if need_x else None), None, None, *grads


def trunk(
    net, x: torch.Tensor, training: bool, fuse_bn_sums: bool = True, release: bool = True
) -> torch.Tensor:
    """The trunk of DualNet `net` on NHWC `x` (a differentiable NHWC result); updates BN running stats when
    training, as `ops.bn_relu` does. `fuse_bn_sums`, `release`: see `TrunkPass`. The kernels run as
    `net.runtime` says.

    A block with a global pooling bias (`net.cfg.global_pooling`) runs op by op: `ops.conv` and `ops.bn_relu`
    for its convs, the pooling and its dense layer (`model.global_pool_bias`) in torch ops between them; the
    runs of plain blocks around it stay one TrunkFunction each."""
    require_cpu("the dsp trunk", x, *net.parameters())  # before bn_params counts a batch
    run = ops.kernel_run(net.runtime)
    gpool = net.cfg.gpool_blocks()
    start, stem, h = 0, True, x
    for end in [*gpool, len(net.blocks)]:
        layers = ([net.conv3_initial] if stem else []) + [
            m for b in net.blocks[start:end] for m in (b.conv1, b.conv2)
        ]
        if layers:
            bns, params = bn_params(layers, training)
            h = TrunkFunction.apply(h, bns, TrunkPass(training, fuse_bn_sums, release, stem, run), *params)
        if end < len(net.blocks):
            h = gpool_block(net, net.blocks[end], h, training)
        start, stem = end + 1, False
    return h


def gpool_block(net, block, h: torch.Tensor, training: bool) -> torch.Tensor:
    """A residual block with a global pooling bias on NHWC `h`, op by op (autograd through `ops.conv`,
    `ops.bn_relu` and the torch ops of `model.global_pool_bias`), run as `net.runtime` says."""
    rt = net.runtime
    r = ops.bn_relu(ops.conv(h, block.conv1.conv.weight, rt), block.conv1.bn, training, runtime=rt)
    r = global_pool_bias(block.gpool_fc, r, net.cfg.board_size, 3).contiguous()
    return ops.bn_relu(ops.conv(r, block.conv2.conv.weight, rt), block.conv2.bn, training, h, rt)


def bn_params(layers: list, training: bool) -> tuple[list, list[torch.Tensor]]:
    """(the BNs, each layer's conv weight, BN gamma and beta in order) of ConvBN layers; counts a batch in
    each BN when training, as `ops.bn_relu` does."""
    bns = [m.bn for m in layers]
    if training:
        for bn in bns:
            if bn.num_batches_tracked is not None:
                bn.num_batches_tracked.add_(1)
    return bns, [t for m in layers for t in (m.conv.weight, m.bn.weight, m.bn.bias)]
