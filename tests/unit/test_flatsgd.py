"""`FlatSGD` gives torch.optim.SGD's bytes (weights, momentum buffers) on both backends, across a
set_to_none zero_grad and a state_dict round trip into the other optimiser."""

from __future__ import annotations

import pytest
import torch

from minigo_core.nn import training
from minigo_core.nn.flatsgd import FlatSGD
from minigo_core.nn.model import DualNet, ModelConfig, random_model


def _train(backend: str, flat: bool, steps: int = 4) -> tuple[list[torch.Tensor], dict]:
    cfg = ModelConfig(5, 1, 16, 16, "agz", aux_heads=True)
    net = DualNet(cfg, backend=backend)
    net.load_state_dict(random_model(cfg, 5).state_dict())
    net.train()
    cls = FlatSGD if flat else torch.optim.SGD
    opt = cls(training.param_groups(net, 1e-2), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(0)
    for s in range(steps):
        if s == 2:  # replaced gradients: FlatSGD packs its buffers again
            opt.zero_grad(set_to_none=True)
        mb = training.MicroBatch(
            torch.randint(0, 2, (6, cfg.planes, 5, 5), generator=g).float(),
            torch.softmax(torch.randn(6, 26, generator=g), 1),
            torch.sign(torch.randn(6, generator=g)),
            torch.sign(torch.randn(6, 25, generator=g)),
            torch.randn(6, generator=g),
        )
        training.sgd_step(net, opt, [mb], 0.05 / (s + 1), (1.0, 1.0, 1.0), 1, torch.device("cpu"))
    return [p.detach().clone() for p in net.parameters()], opt.state_dict()


@pytest.mark.parametrize("backend", ["torch", "dsp"])
def test_flat_sgd_gives_torch_sgd_bytes(backend):
    ref, ref_state = _train(backend, False)
    got, state = _train(backend, True)
    for a, b in zip(ref, got, strict=True):
        assert torch.equal(a, b)
    for k, v in ref_state["state"].items():
        assert torch.equal(v["momentum_buffer"], state["state"][k]["momentum_buffer"])


def test_flat_sgd_state_dict_round_trip():
    net = torch.nn.Linear(3, 2)
    opt = FlatSGD(net.parameters(), lr=0.1, momentum=0.9)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    other = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    other.load_state_dict(opt.state_dict())
    back = FlatSGD(net.parameters(), lr=0.1, momentum=0.9)
    back.load_state_dict(other.state_dict())
    opt.zero_grad(set_to_none=False)
    net(torch.ones(1, 3)).sum().backward()
    want = [p - 0.1 * (0.9 * other.state[p]["momentum_buffer"] + p.grad) for p in net.parameters()]
    back.step()
    for p, w in zip(net.parameters(), want, strict=True):
        assert torch.allclose(p, w)


@pytest.mark.parametrize("options", [{"nesterov": True}, {"dampening": 0.1}, {"maximize": True}])
def test_options_the_flat_update_lacks_give_torch_sgd_bytes_one_parameter_at_a_time(options):
    def run(cls) -> tuple[list[torch.Tensor], dict]:
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 1))
        opt = cls(net.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01, **options)
        for s in range(3):
            opt.zero_grad(set_to_none=s == 1)
            net(torch.arange(8.0).reshape(2, 4)).square().sum().backward()
            opt.step()
        return [p.detach().clone() for p in net.parameters()], opt.state_dict()

    (ref, ref_state), (got, state) = run(torch.optim.SGD), run(FlatSGD)
    assert all(torch.equal(a, b) for a, b in zip(ref, got, strict=True))
    assert state["param_groups"][0] | {"params": None} == ref_state["param_groups"][0] | {"params": None}
    for k, v in ref_state["state"].items():
        assert torch.equal(v["momentum_buffer"], state["state"][k]["momentum_buffer"])


def test_a_state_dict_of_other_groups_is_refused():
    net = torch.nn.Linear(3, 2)
    opt = FlatSGD(net.parameters(), lr=0.1, momentum=0.9)
    other = FlatSGD([net.weight], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="parameter groups do not match"):
        other.load_state_dict(opt.state_dict())
    with pytest.raises(TypeError, match="unknown options"):
        FlatSGD(net.parameters(), lr=0.1, betas=(0.9, 0.99))
