"""`FlatSGD`: torch.optim.SGD (momentum, weight decay per group) over one flat buffer of all parameters.

torch's SGD on a CPU runs a Python loop over the parameters, several small ops each: for a small net's many
small parameters that costs as much as a few convolutions a step. Here the parameters, their
gradients and the momentum buffers are views into three flat buffers (each view keeps its parameter's strides,
channels_last included), so zero_grad is one fill and the update is a handful of ops on whole segments (one
segment per parameter group): the same formulas as torch's SGD (d = g + wd * p; buf = m * buf + d, or
buf = d on the first step; p -= lr * buf), element by element, hence the same floats. The optimiser state
(`state_dict`, `load_state_dict`) is SGD's, so checkpoints move between the two.

Anything that replaces a parameter, gradient or momentum tensor (`zero_grad(set_to_none=True)`,
`load_state_dict`, `net.to(...)` onto another device) is noticed at the next step, which packs the buffers
again from the current tensors; options the flat update does not cover (dampening, nesterov, maximize,
mixed dtypes or devices) run torch's own `SGD.step`.
"""

from __future__ import annotations

import torch


class FlatSGD(torch.optim.SGD):
    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
        self._layout: list[tuple[int, int]] = []  # each group's [start, end) in the flat buffers
        self._ptrs: list[int] = []
        self._grads: list[torch.Tensor] = []
        self._P = self._G = self._B = None
        self._flat_last = False  # whether the last step updated the flat buffer (not torch's own step)

    def _params(self) -> list[torch.Tensor]:
        return [p for g in self.param_groups for p in g["params"]]

    def _current(self) -> bool:
        """Whether the parameters and gradients are still the views `_pack` made."""
        ps = self._params()
        return [p.data_ptr() for p in ps] == self._ptrs and all(
            p.grad is g for p, g in zip(ps, self._grads, strict=True)
        )

    def _flat_ok(self) -> bool:
        groups = self.param_groups
        if any(g["dampening"] or g["nesterov"] or g["maximize"] for g in groups):
            return False
        return len({g["momentum"] for g in groups}) == 1  # the momentum buffers: all or none

    @torch.no_grad()
    def _pack(self) -> None:
        """Move every parameter, gradient and momentum buffer into the flat buffers (views, same strides)."""
        ps = self._params()
        if not ps or any(p.dtype != ps[0].dtype or p.device != ps[0].device or p.is_sparse for p in ps):
            self._P = None
            return
        n = sum(p.numel() for p in ps)
        P = ps[0].new_empty(n)
        G = ps[0].new_zeros(n)
        bufs = [self.state.get(p, {}).get("momentum_buffer") for p in ps]
        B = ps[0].new_zeros(n) if all(b is not None for b in bufs) else None
        self._layout, o = [], 0
        for group in self.param_groups:
            start = o
            for p in group["params"]:
                k = p.numel()

                def view(flat: torch.Tensor, p=p, o=o) -> torch.Tensor:
                    return flat.as_strided(p.size(), p.stride(), o)

                view(P).copy_(p)
                p.data = view(P)
                if p.grad is not None:
                    view(G).copy_(p.grad)
                p.grad = view(G)
                if B is not None:
                    view(B).copy_(self.state[p]["momentum_buffer"])
                    self.state[p]["momentum_buffer"] = view(B)
                o += k
            self._layout.append((start, o))
        self._P, self._G, self._B = P, G, B
        self._ptrs = [p.data_ptr() for p in ps]
        self._grads = [p.grad for p in ps]

    def _ready(self) -> bool:
        if not self._flat_ok():
            return False
        if self._P is None or not self._current():
            self._pack()
        return self._P is not None

    def flat_params(self) -> torch.Tensor | None:
        """The flat buffer every parameter is a view into, as the last step left it (the parameter groups'
        parameters in order, each at the next offset with its own strides), or None when that step was
        torch's own: for whole-buffer work after a step (the weights' moving average, `nn.ema`)."""
        return self._P if self._flat_last else None

    def zero_grad(self, set_to_none: bool = True) -> None:
        if not set_to_none and self._ready():
            self._G.zero_()
        else:
            super().zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def step(self, closure=None):
        self._flat_last = closure is None and self._ready()
        if not self._flat_last:
            return super().step(closure)
        first = self._B is None
        if first:
            self._B = torch.empty_like(self._G)
        for group, (a, b) in zip(self.param_groups, self._layout, strict=True):
            g, p, buf = self._G[a:b], self._P[a:b], self._B[a:b]
            wd, m = group["weight_decay"], group["momentum"]
            d = g.add(p, alpha=wd) if wd != 0 else g
            if m == 0:
                buf = d
            elif first:
                buf.copy_(d)
            else:
                buf.mul_(m).add_(d)
            p.add_(buf, alpha=-float(group["lr"]))
        if first:
            for group, (a, _) in zip(self.param_groups, self._layout, strict=True):
                o = a
                for q in group["params"]:
                    if group["momentum"] != 0:
                        self.state[q]["momentum_buffer"] = self._B.as_strided(q.size(), q.stride(), o)
                    o += q.numel()
        return None

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        self._P = None  # new momentum buffers: pack again at the next step
