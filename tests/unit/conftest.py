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
