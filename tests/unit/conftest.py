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
