"""KataGo's global pooling bias (Wu 2019, "Accelerating Self-Play Learning in Go") in torch ops, shared by
the torch backend (`minigo_core.nn.model`) and the dsp backend's training path (`minigo_core.nn.dsp.trunk`,
`.reference`), which runs it between its compiled convs; kept apart from the model so that the dsp trunk
imports it without importing the model."""

from __future__ import annotations

import torch
from torch import nn


def global_pool_bias(fc: nn.Linear, r: torch.Tensor, board_size: int, channel_dim: int) -> torch.Tensor:
    """`r` (after BN+ReLU; NCHW with `channel_dim` 1 or NHWC with 3) with its first c = fc.in_features / 3
    channels pooled into (mean, mean * (N - 14) / 10, max) per channel, KataGo's board-size-aware statistics,
    and `fc` of those added as a bias to the other channels at every point (the first c are kept as they
    are). The dsp backend runs these torch ops between its compiled convs; the fused network has the same
    arithmetic in C++ (`gpool_bias` in csrc/fused_impl.h)."""
    c = fc.in_features // 3
    dims = (2, 3) if channel_dim == 1 else (1, 2)
    g = r.narrow(channel_dim, 0, c)
    mean = g.mean(dims)
    bias = fc(torch.cat([mean, mean * ((board_size - 14) / 10), g.amax(dims)], 1))  # (B, F - c)
    bias = bias[:, :, None, None] if channel_dim == 1 else bias[:, None, None, :]
    return torch.cat([g, r.narrow(channel_dim, c, r.shape[channel_dim] - c) + bias], channel_dim)


def pooled_value_features(v: torch.Tensor, board_size: int, channel_dim: int) -> torch.Tensor:
    """KataGo's pooled value head's features: the value head's map `v` (after BN+ReLU; NCHW with
    `channel_dim` 1 or NHWC with 3) pooled per channel into (mean, mean * (N - 14) / 10, max), as
    `global_pool_bias` pools, (B, 3C) in the order all means, all scaled means, all maxes. The fused network
    has the same arithmetic in C++ (`pool_channels` in csrc/fused_impl.h)."""
    dims = (2, 3) if channel_dim == 1 else (1, 2)
    mean = v.mean(dims)
    return torch.cat([mean, mean * ((board_size - 14) / 10), v.amax(dims)], 1)
