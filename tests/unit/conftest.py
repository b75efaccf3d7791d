"""Fixtures of the unit tests; those that need the dsp extension or torch import it lazily (the other unit
tests run without them)."""

from __future__ import annotations

import numpy as np
import pytest

from minigo_core.game import coords, go
from minigo_core.search import mcts


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    """A model file of a random 9x9 net (1 block of 8 filters, features agz) for the tests that run an engine
    on a real model; torch set to one thread."""
    import torch

    from minigo_core.nn.model import ModelConfig, random_model, save_model

    torch.set_num_threads(1)
    path = str(tmp_path_factory.mktemp("tiny_model") / "tiny.safetensors")
    save_model(path, random_model(ModelConfig(9, 1, 8, 16, "agz"), seed=5), {"generation": 0, "test": True})
    return path


@pytest.fixture(scope="module")
def ladders_model(tmp_path_factory) -> str:
    """A model file of a random 9x9 net with config.yaml's features (ladders: 1 block of 8 filters), for the
    tests that play config.yaml's Gumbel match search on a real model."""
    from minigo_core.nn.model import ModelConfig, random_model, save_model

    path = str(tmp_path_factory.mktemp("ladders_model") / "ladders.safetensors")
    save_model(
        path, random_model(ModelConfig(9, 1, 8, 16, "ladders"), seed=5), {"generation": 0, "test": True}
    )
    return path


def _net_pair(cfg, seed: int = 0):
    import torch

    from minigo_core.nn.model import DualNet, random_model

    net_t = random_model(cfg, seed, backend="torch")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net_t.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                c = m.num_features
                m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                m.bias.copy_(torch.randn(c, generator=g) * 0.2)
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.2)
                m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
    net_d = DualNet(cfg, backend="dsp")
    net_d.load_state_dict(net_t.state_dict())
    return net_t, net_d


@pytest.fixture(scope="session")
def net_pair():
    """`net_pair(cfg, seed) -> (torch net, dsp net)`: two DualNets of ModelConfig `cfg` with the same random
    weights and non-trivial BN statistics (weights, biases, running means and variances drawn too)."""
    return _net_pair


def _planes_batch(cfg, b: int, seed: int = 1):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, (b, cfg.planes, cfg.board_size, cfg.board_size), generator=g).float()


@pytest.fixture(scope="session")
def planes_batch():
    """`planes_batch(cfg, b, seed) -> (b, planes, N, N)` float 0/1 input planes for ModelConfig `cfg`."""
    return _planes_batch


def _torch_dsp_agree(cfg, training: bool) -> dict:
    import torch
    import torch.nn.functional as F

    net_t, net_d = _net_pair(cfg)
    x = _planes_batch(cfg, 5)
    g = torch.Generator().manual_seed(3)
    target_pi = torch.softmax(torch.randn(5, cfg.num_moves, generator=g), 1)
    target_z = torch.sign(torch.randn(5, generator=g))
    outs, grads = [], []
    for net in (net_t, net_d):
        net.train(training)
        net.zero_grad()
        logits, value, own, score = net.forward_all(x)
        loss = -(target_pi * F.log_softmax(logits, 1)).sum(1).mean() + F.mse_loss(value, target_z)
        (loss + own.square().mean() + score.square().mean()).backward()
        outs.append([t.detach() for t in (logits, value, own, score)])
        grads.append({n: p.grad.clone() for n, p in net.named_parameters()})
    for got, want in zip(outs[1], outs[0], strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    for name, g_t in grads[0].items():
        torch.testing.assert_close(grads[1][name], g_t, rtol=1e-3, atol=1e-4, msg=f"gradient of {name}")
    if training:  # the running statistics updated the same way
        for (name, b_t), b_d in zip(net_t.named_buffers(), net_d.buffers(), strict=True):
            torch.testing.assert_close(b_d, b_t, rtol=1e-4, atol=1e-5, msg=f"buffer {name}")
    return grads[0]


@pytest.fixture(scope="session")
def torch_dsp_agree():
    """`torch_dsp_agree(cfg, training) -> the torch net's gradients by name`: `net_pair(cfg)`'s two nets (with
    the auxiliary heads) run forward and backward on the same batch and loss, in train or eval mode; their
    four outputs, every parameter's gradient and (training) the BN running statistics must agree."""
    return _torch_dsp_agree


def _random_position(rng: np.random.Generator, moves: int) -> tuple[go.Position, list[int]]:
    position, played = go.Position(9, 7.5), []
    for _ in range(moves):
        m = int(rng.choice(np.flatnonzero(mcts.search_moves(position))))
        after = position.play_move(coords.from_flat(m, 9))
        if after.is_game_over():
            break
        position, played = after, played + [m]
    return position, played


@pytest.fixture(scope="session")
def random_position():
    """`random_position(rng, moves) -> (position, flat moves)`: a 9x9 game of up to `moves` random legal moves
    (the search's candidate moves), stopped before one that would end it."""
    return _random_position
