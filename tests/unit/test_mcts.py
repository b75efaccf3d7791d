"""PUCT search: tactics with a uniform prior, visit accounting, virtual loss, noise, softpick, tree reuse."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from minigo_core.base.config import RunConfig, SearchSettings, SelfplaySettings, search_settings
from minigo_core.game import coords, go
from minigo_core.search.mcts import MCTSNode, MCTSPlayer


class StoneCountNet:
    """Uniform prior; value = tanh((mover's stones - opponent's stones) / 2), read from the agz planes.

    Invariant under the 8 symmetries, so it is exact whichever symmetry the search applies.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.batch_sizes: list[int] = []

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        self.batch_sizes.append(planes.shape[0])
        b, _, n, _ = planes.shape
        probs = np.full((b, n * n + 1), 1.0 / (n * n + 1), dtype=np.float32)
        diff = planes[:, 0].reshape(b, -1).sum(1).astype(np.float64) - planes[:, 1].reshape(b, -1).sum(1)
        return probs, np.tanh(diff / 2.0).astype(np.float32)


def settings(**kw) -> SearchSettings:
    base = dict(readouts=64, fast_readouts=16, parallel_readouts=8, dirichlet_weight=0.0, softpick_moves=0)
    base.setdefault("search", "puct")  # these are tests of PUCT; Gumbel: tests/unit/test_gumbel.py
    base.update(kw)
    return SearchSettings(**base)


def player(net=None, board_size: int = 5, seed: int = 0, **kw) -> MCTSPlayer:
    return MCTSPlayer(
        net or StoneCountNet(),
        settings(**kw),
        board_size,
        0.5,
        np.random.default_rng(seed),
        feature_set="agz",
    )


def board(rows: list[str]) -> np.ndarray:
    return np.array([[{"X": 1, "O": -1, ".": 0}[c] for c in row.split()] for row in rows], dtype=np.int8)


def tree_nodes(root: MCTSNode):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


CAPTURE = board(
    [
        "O X . . .",
        "O X . . .",
        ". . . . .",
        ". . . . .",
        ". . . . .",
    ]
)
SAVE = board(
    [
        "X O . . .",
        "X O . . .",
        ". O . . .",
        "X X X . .",
        ". . . . .",
    ]
)


def capturing_moves(position: go.Position) -> list[int]:
    legal = np.flatnonzero(position.all_legal_moves()[:-1])
    mover = 0 if position.to_play == go.BLACK else 1
    return [
        int(m) for m in legal if position.play_move(coords.from_flat(m, 5)).caps[mover] > position.caps[mover]
    ]


def saving_moves(position: go.Position, group: list[tuple[int, int]]) -> list[int]:
    """Black moves after which no White reply captures any stone of `group`."""
    saving = []
    for m in np.flatnonzero(position.all_legal_moves()):
        after = position.play_move(coords.from_flat(int(m), 5))
        replies = np.flatnonzero(after.all_legal_moves()[:-1])
        if all(
            all(after.play_move(coords.from_flat(int(r), 5)).board[p] == go.BLACK for p in group)
            for r in replies
        ):
            saving.append(int(m))
    return saving


@pytest.mark.parametrize("init_unvisited", ["parent", "loss"])
def test_finds_the_only_capturing_move(init_unvisited):
    position = go.Position.from_board(CAPTURE, to_play=go.BLACK, komi=0.5)
    expected = capturing_moves(position)
    assert expected == [coords.to_flat((2, 0), 5)]
    result = player(readouts=400, init_unvisited=init_unvisited).search(position)
    assert result.fmove == expected[0]
    assert result.visits.argmax() == expected[0]


@pytest.mark.parametrize("init_unvisited", ["parent", "loss"])
def test_finds_the_only_saving_move(init_unvisited):
    position = go.Position.from_board(SAVE, to_play=go.BLACK, komi=0.5)
    expected = saving_moves(position, [(0, 0), (1, 0)])
    assert expected == [coords.to_flat((2, 0), 5)]
    result = player(readouts=1600, init_unvisited=init_unvisited).search(position)
    assert result.fmove == expected[0]


@pytest.mark.parametrize("readouts,parallel", [(64, 8), (37, 8), (10, 1), (5, 16)])
def test_visits_sum_to_readouts(readouts, parallel):
    net = StoneCountNet()
    p = player(net, readouts=max(readouts, parallel), parallel_readouts=parallel)
    p.settings = dataclasses.replace(p.settings, readouts=readouts)
    result = p.search(go.Position(5, 0.5))
    assert result.readouts == readouts
    assert result.visits.sum() == readouts
    assert p.root.N == readouts + 1  # + the root's own evaluation
    assert max(net.batch_sizes) <= parallel


def test_virtual_loss_fully_undone_and_statistics_consistent():
    net = StoneCountNet()
    p = player(net, readouts=200, parallel_readouts=16)
    position = go.Position(5, 0.5).play_move((2, 2)).play_move((1, 2))
    p.search(position)
    expanded = 0
    for node in tree_nodes(p.root):
        assert node.losses_applied == 0
        if not node.is_expanded:
            continue
        if node.child_N is None:  # evaluated once, never walked through: its vectors were never needed
            assert not node.children and node.N >= 1
            continue
        expanded += 1
        assert not node.child_virtual.any()
        # Every visit of an expanded node expanded it once or went on to a child.
        assert node.N == 1 + node.child_N.sum()
        visited = node.child_N > 0
        # The cached score terms equal a fresh computation once no virtual loss is in flight.
        q = np.where(visited, node.child_W * node.to_play / np.maximum(node.child_N, 1), node.q_init)
        np.testing.assert_allclose(node.child_Q_mover[~node.illegal], q[~node.illegal], rtol=0, atol=1e-12)
        np.testing.assert_allclose(node.child_prior_over_N, node.child_prior / (1 + node.child_N), atol=1e-15)
        for fmove, child in node.children.items():
            assert child.parent is node and child.index == fmove
    assert expanded > 10


def test_illegal_moves_are_never_visited():
    # White to play: (0, 0) is suicide for White... and occupied points are illegal.
    b = board(
        [
            ". X . . .",
            "X . . . .",
            ". . . . .",
            ". . . O .",
            ". . . . .",
        ]
    )
    position = go.Position.from_board(b, to_play=go.WHITE, komi=0.5)
    p = player(readouts=300)
    result = p.search(position)
    illegal = ~position.all_legal_moves()
    assert illegal[0] and illegal[1] and illegal[5]
    assert result.visits[illegal].sum() == 0
    assert p.root.child_prior[illegal].sum() == 0


def test_noise_off_when_configured_off_and_on_only_for_full_searches():
    position = go.Position(5, 0.5)
    p = player(dirichlet_weight=0.0)
    p.search(position, full_search=True)
    assert p.root.child_prior is p.root.original_prior

    p = player(dirichlet_weight=0.25)
    result = p.search(position, full_search=True)
    assert result.noise
    prior = p.root.child_prior
    assert not np.allclose(prior, p.root.original_prior)
    assert prior.sum() == pytest.approx(1.0)
    assert (prior[p.root.illegal] == 0).all()
    fast = p.search(position, full_search=False)  # same root, fast search: the network's priors again
    assert not fast.noise
    assert p.root.child_prior is p.root.original_prior


def test_dirichlet_alpha_scales_with_board_size():
    assert player(board_size=19).dirichlet_alpha == pytest.approx(0.03)
    assert player(board_size=9).dirichlet_alpha == pytest.approx(0.03 * 361 / 81)


def test_softpick_off_picks_most_visited_and_on_samples():
    position = go.Position(5, 0.5)
    for seed in range(5):
        r = player(seed=seed, softpick_moves=0, readouts=48).search(position)
        assert r.fmove == int(np.argmax(r.visits))
    picks = {player(seed=seed, softpick_moves=10, readouts=48).search(position).fmove for seed in range(12)}
    assert len(picks) > 1
    # Softpick stops at the cutoff: at move n >= softpick_moves the most visited move is played.
    later = position.play_move((0, 0)).play_move((4, 4))
    for seed in range(5):
        r = player(seed=seed, softpick_moves=2, readouts=48).search(later)
        assert r.fmove == int(np.argmax(r.visits))


def test_softpick_follows_default_rule():
    def searched(n: int) -> int:
        cfg = RunConfig(board_size=n, selfplay=SelfplaySettings(softpick_moves=-1))
        return player(board_size=n, softpick_moves=search_settings(cfg).softpick_moves).softpick_moves

    assert (searched(9), searched(19)) == (6, 30)


def test_fast_and_full_search_readouts():
    p = player(readouts=64, fast_readouts=16)
    position = go.Position(5, 0.5)
    assert p.search(position, full_search=False).readouts == 16
    p = player(readouts=64, fast_readouts=16)
    assert p.search(position, full_search=True).visits.sum() == 64


def test_subtree_is_reused_after_a_move():
    p = player(readouts=200)
    position = go.Position(5, 0.5)
    result = p.search(position)
    child = p.root.children[result.fmove]
    visits_before = child.N
    assert visits_before > 1
    following = position.play_move(result.move)
    result2 = p.search(following)
    assert p.root is child
    assert result2.visits.sum() == visits_before - 1 + 200
    # An unrelated position starts a fresh tree.
    other = go.Position(5, 0.5).play_move((4, 4))
    p.search(other)
    assert p.root.N == 201


def test_search_is_deterministic_for_a_seed():
    position = go.Position(5, 0.5)
    a = player(seed=3, dirichlet_weight=0.25, softpick_moves=10).search(position)
    b = player(seed=3, dirichlet_weight=0.25, softpick_moves=10).search(position)
    assert a.fmove == b.fmove and np.array_equal(a.visits, b.visits)


class MoverStonePolicyNet:
    """Policy proportional to 1 + (stones of the side to move) per point: equivariant, not invariant."""

    def predict(self, planes):
        b, _, n, _ = planes.shape
        logits = np.concatenate([planes[:, 0].reshape(b, -1) * 3.0, np.zeros((b, 1))], axis=1)
        probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        return probs.astype(np.float32), np.zeros(b, dtype=np.float32)


def test_random_symmetries_are_undone_on_the_policy():
    position = go.Position(5, 0.5).play_move((0, 1)).play_move((3, 3)).play_move((1, 4))
    plain = player(MoverStonePolicyNet(), board_size=5)
    plain.random_symmetry = False
    expected, _ = plain.evaluate([position] * 16)
    rotated = player(MoverStonePolicyNet(), board_size=5, seed=7)
    got, _ = rotated.evaluate([position] * 16)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_finished_game_cannot_be_searched():
    position = go.Position(5, 0.5).play_move(None).play_move(None)
    with pytest.raises(ValueError, match="finished"):
        player().search(position)


def test_terminal_leaves_are_scored_not_evaluated():
    # After one pass, a second pass ends the game: the search scores that leaf with the real result.
    b = board(
        [
            "X X X X X",
            "X . X . X",
            "X X X X X",
            ". . . . .",
            "O O O O O",
        ]
    )
    position = go.Position.from_board(b, to_play=go.WHITE, komi=0.5).play_move(None)
    p = player(readouts=64)
    p.search(position)
    pass_move = 25
    assert p.root.child_N[pass_move] > 0
    assert pass_move not in p.root.children or not p.root.children[pass_move].is_expanded


def test_tree_reuse_over_two_moves_when_enabled(monkeypatch):
    from minigo_core.search import mcts

    monkeypatch.setattr(mcts, "MAX_REUSE", 2)
    p = player(readouts=200)
    position = go.Position(5, 0.5)
    p.search(position)
    reply = max(p.root.children.values(), key=lambda node: node.N)
    grandchild = max(reply.children.values(), key=lambda node: node.N)
    later = position.play_move(coords.from_flat(reply.fmove, 5)).play_move(
        coords.from_flat(grandchild.fmove, 5)
    )
    visits_before = grandchild.N
    p.search(later)
    assert p.root is grandchild and p.root.N == visits_before + 200
    monkeypatch.setattr(mcts, "MAX_REUSE", 1)
    p.search(later.play_move(None).play_move((0, 0)))
    assert p.root.N == 201


def test_root_noise_is_dirichlet_with_the_configured_alpha():
    """Weight 1 leaves pure noise: small alpha (0.03, 19x19) is sparse, a large alpha is nearly flat."""
    position = go.Position(19, 7.5)

    def largest_share(alpha: float) -> float:
        p = MCTSPlayer(
            StoneCountNet(),
            settings(dirichlet_weight=1.0, dirichlet_alpha=alpha),
            19,
            7.5,
            np.random.default_rng(1),
            feature_set="agz",
        )
        shares = []
        for _ in range(20):
            root = p.set_root(position)
            p.expand_root(root)
            p.add_root_noise(root)
            assert (
                root.child_prior.sum() == pytest.approx(1.0) and (root.child_prior[root.illegal] == 0).all()
            )
            shares.append(root.child_prior.max())
        return float(np.mean(shares))

    assert player(board_size=19).dirichlet_alpha == pytest.approx(0.03)
    assert largest_share(0.03) > 0.1
    assert largest_share(10.0) < 0.01
