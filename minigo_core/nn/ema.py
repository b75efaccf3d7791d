"""`WeightEMA`: the exponential moving average of a network's weights, which `train.ema_decay` exports.

After every optimiser step, ema = decay * ema + (1 - decay) * raw for every floating-point parameter and for
the batch-norm running statistics (running_mean, running_var: running averages already, so averaging them
again is harmless, and the averaged weights keep statistics of their own kind); `num_batches_tracked`, an
integer counter unused with a fixed BN momentum, is the raw network's. Training never reads the average: the
steps go on from the raw weights, and a model file holds both (`modelfile.RAW_PREFIX`), so the next
generation trains on from the raw weights while its average goes on from this one's.

Every rank keeps the same average (the ranks' raw parameters are the same after every step; the BN statistics
are rank 0's, as is what rank 0 writes). The parameters' average lives in one flat buffer laid out as
`FlatSGD`'s (the same parameters in the same order, at the same offsets, with the same strides), so a step's
update is one `lerp_` over the whole buffer, and the statistics' one `_foreach_lerp_`.
"""

from __future__ import annotations

import torch

from minigo_core.nn.flatsgd import FlatSGD


class WeightEMA:
    """The moving average of `net`'s weights, trained by `opt`, starting from the state dict `start`."""

    def __init__(self, net: torch.nn.Module, opt: FlatSGD, decay: float, start: dict[str, torch.Tensor]):
        self.net, self.opt, self.weight = net, opt, 1.0 - decay  # lerp_ moves by the weight towards raw
        names = {id(p): n for n, p in net.named_parameters()}
        self.params = [p for g in opt.param_groups for p in g["params"]]  # FlatSGD's order
        self.flat = self.params[0].detach().new_empty(sum(p.numel() for p in self.params))
        self.views: dict[str, torch.Tensor] = {}  # parameter name -> its average, a view into `flat`
        offset = 0
        for p in self.params:
            self.views[names[id(p)]] = self.flat.as_strided(p.size(), p.stride(), offset)
            offset += p.numel()
        self.stats = {n: b.detach().clone() for n, b in net.named_buffers() if b.is_floating_point()}
        self.load(start)

    @torch.no_grad()
    def load(self, state: dict[str, torch.Tensor]) -> None:
        """Set the average to `state` (a state dict: the parent's weights, or a checkpoint's average)."""
        for name, avg in (*self.views.items(), *self.stats.items()):
            avg.copy_(state[name])

    @torch.no_grad()
    def update(self) -> None:
        """One step of the average towards the net's current (raw) weights: after every optimiser step."""
        flat = self.opt.flat_params()
        if flat is not None and flat.shape == self.flat.shape:
            self.flat.lerp_(flat, self.weight)
        else:  # the optimiser ran torch's own step: the same update, parameter by parameter
            torch._foreach_lerp_(list(self.views.values()), [p.detach() for p in self.params], self.weight)
        raw = dict(self.net.named_buffers())
        torch._foreach_lerp_(list(self.stats.values()), [raw[n] for n in self.stats], self.weight)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The averaged network as a state dict on the CPU (the net's names; integer buffers the net's)."""
        out = {}
        for name, raw in self.net.state_dict().items():
            avg = self.views.get(name, self.stats.get(name, raw))
            out[name] = avg.detach().to("cpu").clone(memory_format=torch.contiguous_format)
        return out
