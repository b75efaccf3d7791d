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
mixed dtypes or devices) run the same formulas one parameter at a time (torch's `_single_tensor_sgd`).

It is no subclass of torch.optim.Optimizer: every method of that class goes through `torch._disable_dynamo`,
whose first call imports the compiler (torch._dynamo, about a second of every training job's start-up,
for a process that compiles nothing). The parameter groups, the per-parameter `state` and the
`state_dict` format are SGD's (group options lr, momentum, dampening, weight_decay, nesterov, maximize,
foreach, differentiable, fused; state {index: {"momentum_buffer": tensor}}).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterable

import torch

# SGD's options and their defaults, in the order torch's state_dict lists them
DEFAULTS = {"momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False, "maximize": False,
            "foreach": None, "differentiable": False, "fused": None}  # fmt: skip


class FlatSGD:
    def __init__(
        self, params: Iterable, lr: float, momentum: float = 0.0, weight_decay: float = 0.0, **options
    ) -> None:
        unknown = set(options) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"FlatSGD: unknown options {sorted(unknown)}; it takes SGD's {sorted(DEFAULTS)}")
        self.defaults = {"lr": lr, **DEFAULTS, "momentum": momentum, "weight_decay": weight_decay, **options}
        self.state: defaultdict[torch.Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict] = []
        given = list(params)
        for group in given if given and isinstance(given[0], dict) else [{"params": given}]:
            self.add_param_group(dict(group))
        self._layout: list[tuple[int, int]] = []  # each group's [start, end) in the flat buffers
        self._ptrs: list[int] = []
        self._grads: list[torch.Tensor] = []
        self._P = self._G = self._B = None
        self._flat_last = False  # whether the last step updated the flat buffer (not torch's own step)

    def add_param_group(self, group: dict) -> None:
        """A group of parameters with its options (the optimiser's defaults where it has none)."""
        params = group["params"]
        group["params"] = [params] if isinstance(params, torch.Tensor) else list(params)
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("FlatSGD: a parameter appears in more than one group")
        self.param_groups.append(group)
        self._P = None

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
            return
        for p in self._params():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_().requires_grad_(False).zero_()

    @torch.no_grad()
    def _step_each(self) -> None:
        """The update one parameter at a time (torch's `_single_tensor_sgd`): options the flat one lacks."""
        for group in self.param_groups:
            wd, m, damp = group["weight_decay"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                d = -p.grad if group["maximize"] else p.grad
                d = d.add(p, alpha=wd) if wd != 0 else d
                if m != 0:
                    buf = self.state[p].get("momentum_buffer")
                    if buf is None:
                        buf = self.state[p]["momentum_buffer"] = torch.clone(d).detach()
                    else:
                        buf.mul_(m).add_(d, alpha=1 - damp)
                    d = d.add(buf, alpha=m) if group["nesterov"] else buf
                p.add_(d, alpha=-float(group["lr"]))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._flat_last = self._ready()
        if not self._flat_last:
            self._step_each()
            return loss
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

    def state_dict(self) -> dict:
        """SGD's state_dict: the groups' options with their parameters as indices, and the state by index."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [index[id(p)] for p in group["params"]]})  # fmt: skip
        state = {index[id(p)]: dict(v) for p, v in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load SGD's (or this class's) state_dict: the groups' options and each parameter's momentum buffer
        (a copy, on the parameter's device and in its dtype); the groups must hold as many parameters."""
        saved = copy.deepcopy(state_dict)
        groups = saved["param_groups"]
        if len(groups) != len(self.param_groups) or any(
            len(g["params"]) != len(h["params"]) for g, h in zip(groups, self.param_groups, strict=True)
        ):
            raise ValueError(
                "FlatSGD.load_state_dict: the state_dict's parameter groups do not match this one's"
            )
        by_index = {}
        for g, h in zip(groups, self.param_groups, strict=True):
            by_index.update(zip(g["params"], h["params"], strict=True))
            h.update({k: v for k, v in g.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, values in saved["state"].items():
            p = by_index[int(i)]
            self.state[p] = {k: v.to(p.device, p.dtype) if torch.is_tensor(v) and k == "momentum_buffer"
                             else v for k, v in values.items()}  # fmt: skip
        self._P = None  # new momentum buffers: pack again at the next step
