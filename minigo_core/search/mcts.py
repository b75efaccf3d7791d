"""PUCT Monte Carlo tree search as MiniGo does it, with the AlphaGo Zero paper's names; with
`selfplay.search: gumbel`, Gumbel AlphaZero's search on the same tree (`minigo_core.search.gumbel`).

Each expanded node keeps its children's statistics as numpy vectors indexed by flat move (pass last):
`child_N` (visit counts), `child_W` (total value, from Black's view as in MiniGo), `child_prior` (P(s, a),
after root noise) and `original_prior` (the network's policy). A child is scored

    Q(s, a) * to_play + U(s, a),
    U(s, a) = 2 (ln((1 + N + c_base) / c_base) + c_init) sqrt(max(1, N - 1)) P(s, a) / (1 + N(s, a))

with illegal moves masked. Q of a visited child is W / N; an unvisited child starts at the parent's network
value (`init_unvisited: parent`, Python MiniGo) or at a loss for the player to move (`loss`, C++ MiniGo).

With KataGo's score utility on (`selfplay.score_utility` w > 0) a leaf backs up, besides its win/loss value v
to W, its utility v + w (2/pi) atan(score / score_utility_scale) to `child_U` (`leaf_utility`; the score
head's margin in points, a finished game's exact score), and the search reads U where it read W: Q, the
unvisited children's start (a loss is then -1 - w) and Gumbel's completed Q. W, and so the root value that is
recorded, that resignation compares and that analysis reports, stays the value head's. Off, `child_U` is
`child_W`.

Leaves are collected `parallel_readouts` at a time with virtual loss and evaluated in one network batch under
a random one of the 8 symmetries (the paper draws one per position; one per batch costs one transform).
Virtual losses are counted in a separate integer vector `child_virtual`, so undoing them is exact. After a
move the chosen child's subtree becomes the new root.

The evaluator is any object with `predict(planes_uint8 (B, P, N, N)) -> (probs (B, N*N+1), values (B,))`,
values from the view of the player to move (the model's `DualNet`); with the score utility on, `predict_all`
(`fused.Heads`, the score in points: `FusedModel`, `DualNet`) instead.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from minigo_core.base.config import RunConfig, SearchSettings
from minigo_core.game import coords, features, go, symmetries
from minigo_core.search import gumbel

MAX_REUSE = 1  # moves between searches over which the tree is kept (self-play: 1, the move just played)
SOFTPICK_EXPONENT = 0.98  # MiniGo squashes visit counts by this power when it picks in proportion to them
TWO_OVER_PI = 2.0 / 3.141592653589793  # search.h's kTwoOverPi


def leaf_utility(settings: SearchSettings, value: float, points: float) -> float:
    """The value a position backs up, from the view of `value`'s player: the value head's win/loss `value`,
    plus with the score utility on `score_utility` * (2/pi) atan(`points` / `score_utility_scale`) (KataGo's
    static score utility, centred at 0; `points` the final margin from the same view). Off, `value` itself.
    The compiled engine's `leaf_utility` (search.h) is the same arithmetic."""
    w = settings.score_utility
    if not w > 0:
        return value
    return value + w * (TWO_OVER_PI * math.atan(points / settings.score_utility_scale))


def _check_score_head(net: Any, settings: SearchSettings) -> None:
    """ValueError naming the key when the score utility is on and `net` has no score head to read."""
    if settings.score_utility > 0 and (
        not callable(getattr(net, "predict_all", None)) or getattr(net, "has_aux", True) is False
    ):
        raise ValueError(
            f"selfplay.score_utility is {settings.score_utility}, which reads the score head, and this "
            "network has none (model.aux_heads: false): set selfplay.score_utility: 0 or use a model with "
            "the auxiliary heads"
        )


class Evaluator(Protocol):
    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class _RootStats:
    """Holds the root's own N and W (a node's statistics live in its parent's vectors; the root has none)."""

    __slots__ = ("child_N", "child_W", "child_virtual")

    def __init__(self, N: float = 0.0, W: float = 0.0) -> None:
        self.child_N = np.array([N])
        self.child_W = np.array([W])
        self.child_virtual = np.zeros(1)


class MCTSNode:
    """A position in the search tree. Children are created on first visit; statistics are vectors."""

    __slots__ = (
        "position",
        "fmove",
        "parent",
        "index",
        "to_play",
        "children",
        "is_expanded",
        "losses_applied",
        "child_N",
        "child_W",
        "child_virtual",
        "child_prior",
        "original_prior",
        "illegal",
        "q_init",
        "child_Q_mover",
        "child_prior_over_N",
        "terminal_value",
        "terminal_utility",
        "value",
        "utility",
        "with_utility",
        "child_U",
    )

    def __init__(self, position: Any, fmove: int | None = None, parent: MCTSNode | None = None) -> None:
        self.position = position
        self.fmove = fmove  # flat index of the move that led here (None at the start of a game)
        if parent is None:
            self.parent: MCTSNode | _RootStats = _RootStats()
            self.index = 0
        else:
            self.parent = parent
            self.index = fmove
        self.to_play = position.to_play
        self.children: dict[int, MCTSNode] = {}
        self.is_expanded = False  # the network has evaluated this node (its vectors may still be unbuilt)
        self.child_N: np.ndarray | None = None
        self.losses_applied = 0
        self.terminal_value: float | None = None  # game result (Black's view) once found to be terminal
        self.terminal_utility = 0.0  # its leaf_utility (Black's view)

    # ---- this node's own statistics (kept in the parent's vectors) ----
    @property
    def N(self) -> float:
        return float(self.parent.child_N[self.index])

    @property
    def W(self) -> float:
        return float(self.parent.child_W[self.index])

    @property
    def Q(self) -> float:
        """Mean value from Black's view (0 before the first visit)."""
        n = self.N
        return self.W / n if n else 0.0

    @property
    def Q_perspective(self) -> float:
        """Mean value from the view of the player to move here."""
        return self.Q * self.to_play

    def expand(
        self,
        probs: np.ndarray,
        value_black: float,
        init_unvisited: str,
        utility_black: float | None = None,
        score_utility: float = 0.0,
    ) -> None:
        """Take the network's output for this node; the child vectors are built on the first walk through it.
        With the score utility on (`utility_black` given, `score_utility` its weight) the children sum their
        utilities in `child_U` too, and the search reads those.

        Most leaves of a search are never walked through again (their siblings' subtrees are dropped after the
        move), so the legality mask and the vectors are made only for the nodes that need them.
        """
        self.with_utility = utility_black is not None
        utility = value_black if utility_black is None else utility_black
        # Q of unvisited children, from the mover's view: the value (utility) just computed here, or a loss.
        self.q_init = utility * self.to_play if init_unvisited == "parent" else -1.0 - score_utility
        self.value = value_black * self.to_play  # the network's value, mover's view (what analysis reports)
        self.utility = utility * self.to_play  # the search's value of the node, mover's view (Gumbel's v_mix)
        self.original_prior = probs
        self.is_expanded = True

    def _build_vectors(self) -> None:
        """Priors with illegal moves zeroed and renormalised (MiniGo), and the vectors of child statistics."""
        probs = self.original_prior
        size = probs.shape[0]
        legal = search_moves(self.position)
        self.illegal = ~legal
        prior = probs * legal  # float64: probs come as float64 from MCTSPlayer.evaluate
        total = prior.sum()
        if total > 0:
            prior /= total
        else:
            prior = legal / legal.sum()
        self.original_prior = prior
        self.child_prior = prior
        self.child_N = np.zeros(size)
        self.child_W = np.zeros(size)
        self.child_U = np.zeros(size) if self.with_utility else self.child_W  # the search's sums
        self.child_virtual = np.zeros(size)  # virtual losses in flight (whole numbers)
        # Caches of the two per-child terms of the score, refreshed entry by entry as statistics change.
        self.child_Q_mover = np.where(legal, self.q_init, -np.inf)
        self.child_prior_over_N = prior.copy()

    def ensure_vectors(self) -> MCTSNode:
        """Build the child vectors of an expanded node if they are not built yet; returns the node."""
        if self.child_N is None:
            self._build_vectors()
        return self

    def set_prior(self, prior: np.ndarray) -> None:
        """Replace P(s, a) (root noise) and refresh the U term for every child."""
        self.child_prior = prior
        self.child_prior_over_N = prior / (1.0 + self.child_N + self.child_virtual)

    def refresh(self, i: int) -> None:
        """Recompute child i's cached Q (mover's view, virtual losses count as losses) and P / (1 + N)."""
        n_virtual = float(self.child_virtual[i])
        n = float(self.child_N[i]) + n_virtual
        if n:
            self.child_Q_mover[i] = (float(self.child_U[i]) * self.to_play - n_virtual) / n
        else:
            self.child_Q_mover[i] = self.q_init
        self.child_prior_over_N[i] = float(self.child_prior[i]) / (1.0 + n)

    def child_action_score(self, c_base: float, c_init: float) -> np.ndarray:
        """Q * to_play + U for every child (illegal moves -inf)."""
        if self.child_N is None:
            self._build_vectors()
        stats, i = self.parent, self.index
        N = float(stats.child_N[i]) + float(stats.child_virtual[i])
        scale = 2.0 * (math.log((1.0 + N + c_base) / c_base) + c_init) * math.sqrt(max(1.0, N - 1.0))
        return self.child_Q_mover + scale * self.child_prior_over_N

    def child(self, fmove: int) -> MCTSNode:
        node = self.children.get(fmove)
        if node is None:
            board_size = self.position.board_size
            node = MCTSNode(self.position.play_move(coords.from_flat(fmove, board_size)), fmove, self)
            self.children[fmove] = node
        return node

    def children_as_pi(self, squash: bool = False) -> np.ndarray:
        """Visit distribution over moves (MiniGo squashes by N^0.98 when picking in proportion)."""
        probs = self.child_N**SOFTPICK_EXPONENT if squash else self.child_N
        total = probs.sum()
        return probs / total if total else probs


def _add_virtual_loss(leaf: MCTSNode, root: MCTSNode) -> None:
    node = leaf
    while node is not root:
        parent = node.parent
        parent.child_virtual[node.index] += 1
        parent.refresh(node.index)
        node.losses_applied += 1
        node = parent


def _backup(
    leaf: MCTSNode,
    value_black: float,
    root: MCTSNode,
    undo_virtual_loss: bool = False,
    utility_black: float | None = None,
) -> None:
    """Add one visit with `value_black` to every node from the leaf up to and including the root, and with the
    score utility on its `utility_black` to the `child_U` of every node below the root (the search never reads
    the root's own).

    With `undo_virtual_loss`, also take back the virtual loss `_add_virtual_loss` put on the same path.
    """
    node = leaf
    while True:
        parent = node.parent
        i = node.index
        parent.child_N[i] += 1
        parent.child_W[i] += value_black
        if node is root:
            return
        if parent.child_U is not parent.child_W:
            parent.child_U[i] += utility_black
        if undo_virtual_loss:
            parent.child_virtual[i] -= 1
            node.losses_applied -= 1
        parent.refresh(i)
        node = parent


@dataclass
class SearchResult:
    """One move's search: the chosen move, the root visit counts, the root value (mover's view)."""

    move: coords.Move
    fmove: int
    visits: np.ndarray  # int64 (N*N+1,): root child_N after the search (includes reused visits)
    root_value: float  # root Q from the view of the player to move
    readouts: int  # readouts done in this search
    full_search: bool
    noise: bool  # root noise: Dirichlet in the prior (PUCT) or Gumbel noise in the move choice (Gumbel)
    policy: np.ndarray | None = None  # Gumbel: the root's improved policy (float32), the training target


@dataclass
class SearchTimes:
    """Where a player's time went (seconds), for the self-play benchmark."""

    clock: Callable[[], float] = time.perf_counter  # or time.process_time: CPU seconds, steadier when busy
    total_s: float = 0.0
    network_s: float = 0.0
    features_s: float = 0.0
    readouts: int = 0
    batches: int = 0
    searches: int = 0


def search_moves(position: go.Position) -> np.ndarray:
    """The legal moves the search considers (bool mask of N*N+1, pass last).

    Two rules of the kind Monte-Carlo Go programs use in playouts keep a small, early run from learning
    nonsense: a player does not fill its own one-point eyes (`Position.eyeish`), and it passes only when the
    opponent has just passed (the search then scores ending the game exactly) or when no other move is left.
    Without them a value head that is still noise finds that a pass, or filling its last eye, is the cheapest
    "good" move, and games collapse into a few moves that teach nothing. Games end when both sides have
    filled everything but their eyes, as MiniGo's playouts do.
    """
    legal = position.all_legal_moves()
    if position.recent and position.recent[-1] is None:
        return legal
    candidates = legal.copy()
    candidates[:-1] &= ~position.eyeish(position.to_play).ravel()
    if candidates[:-1].any():
        candidates[-1] = False
    else:
        candidates[-1] = True
    return candidates


class MCTSPlayer:
    """Plays moves by PUCT search; keeps the tree between moves and reuses the subtree of the move played.

    `settings` is the search's `SearchSettings` (readouts, fast_readouts, parallel_readouts, c_base, c_init,
    dirichlet_weight, init_unvisited, the root search, softpick moves, random symmetries); root noise's
    Dirichlet alpha is `settings.noise_alpha(board_size)`.
    """

    def __init__(
        self,
        net: Evaluator,
        settings: SearchSettings,
        board_size: int,
        komi: float,
        rng: np.random.Generator,
        *,
        feature_set: str | None = None,
    ) -> None:
        _check_score_head(net, settings)
        self.net = net
        self.settings = settings
        self.board_size = board_size
        self.komi = komi
        self.rng = rng
        if feature_set is None:
            feature_set = getattr(getattr(net, "cfg", None), "feature_set", None) or RunConfig.features
        self.feature_set = feature_set
        self.softpick_moves = settings.softpick_moves
        self.dirichlet_alpha = settings.noise_alpha(board_size)
        self.random_symmetry = settings.random_symmetry
        self.max_game_length = 2 * board_size * board_size
        self.root: MCTSNode | None = None
        self.times = SearchTimes()

        self._extract_batch = features.extract_batch
        self._symmetries = symmetries

    # ---- the tree ----
    def set_root(self, position: Any) -> MCTSNode:
        """Make `position` the root, reusing the tree when it is the current root or one of its children.

        (Reuse over more moves, e.g. across an opponent's reply in a match, is a matter of raising MAX_REUSE.)
        """
        root = self.root
        if root is not None:
            played = tuple(position.recent)
            depth = position.n - root.position.n
            if 0 <= depth <= min(MAX_REUSE, len(played)) and played[: len(played) - depth] == tuple(
                root.position.recent
            ):
                node: MCTSNode | None = root
                for move in played[len(played) - depth :]:
                    node = node.children.get(coords.to_flat(_move_of(move), self.board_size))
                    if node is None:
                        break
                if node is root and _same_position(root.position, position):
                    return root
                if node is not None and node is not root and _same_position(node.position, position):
                    node.parent = _RootStats(node.N, node.W)
                    node.index = 0
                    self.root = node  # the rest of the old tree is dropped with the old root
                    return node
        self.root = MCTSNode(position)
        return self.root

    def is_terminal(self, position: Any) -> bool:
        return position.is_game_over() or position.n >= self.max_game_length

    def select_leaf(self, root: MCTSNode) -> MCTSNode:
        """Walk down by the highest score to a node not yet expanded (terminal nodes are never expanded)."""
        c_base, c_init = self.settings.c_base, self.settings.c_init
        node = root
        while node.is_expanded:
            node = node.child(int(node.child_action_score(c_base, c_init).argmax()))
        return node

    def evaluate(self, positions: list) -> tuple[np.ndarray, np.ndarray]:
        """Network priors and values (mover's view) for positions, the batch under one random symmetry."""
        probs, values, _ = self.evaluate_utility(positions)
        return probs, values

    def evaluate_utility(self, positions: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`evaluate`, and each position's `leaf_utility` (mover's view): with the score utility on, from the
        score head (`predict_all`), else the value itself."""
        clock = self.times.clock
        t0 = clock()
        planes = self._extract_batch(positions, self.feature_set)
        sym = 0
        if self.random_symmetry:
            sym = int(self.rng.integers(0, self._symmetries.NUM_SYMMETRIES))
            planes = self._symmetries.apply_planes(sym, planes)
        t1 = clock()
        points = None
        if self.settings.score_utility > 0:
            probs, values, _, points = self.net.predict_all(planes)
            if points is None:
                _check_score_head(None, self.settings)
        else:
            probs, values = self.net.predict(planes)
        t2 = clock()
        probs = np.asarray(probs, dtype=np.float64)
        if sym:
            probs = self._symmetries.apply_policy(self._symmetries.invert(sym), probs, self.board_size)
        self.times.network_s += t2 - t1
        self.times.features_s += (t1 - t0) + (clock() - t2)
        self.times.batches += 1
        values = np.asarray(values, dtype=np.float64)
        if points is None:
            return probs, values, values
        utilities = [
            leaf_utility(self.settings, float(v), float(p)) for v, p in zip(values, points, strict=True)
        ]
        return probs, values, np.asarray(utilities, dtype=np.float64)

    def _expand(self, node: MCTSNode, probs: np.ndarray, value: float, utility: float) -> None:
        """Expand `node` with the network's output (`value`, `utility`: mover's view)."""
        s = self.settings
        utility_black = utility * node.to_play if s.score_utility > 0 else None
        node.expand(probs, value * node.to_play, s.init_unvisited, utility_black, s.score_utility)

    def _terminal(self, node: MCTSNode) -> bool:
        """Whether `node` is a finished game, its result (`terminal_value`, Black's view) and utility (of the
        exact score) set the first time it is found to be."""
        if node.terminal_value is None and self.is_terminal(node.position):
            score = node.position.score()
            node.terminal_value = 1.0 if score > 0 else -1.0  # Black's view
            node.terminal_utility = leaf_utility(self.settings, node.terminal_value, score)
        return node.terminal_value is not None

    def expand_root(self, root: MCTSNode) -> None:
        if not root.is_expanded and not self.is_terminal(root.position):
            probs, values, utilities = self.evaluate_utility([root.position])
            self._expand(root, probs[0], float(values[0]), float(utilities[0]))
            _backup(root, float(values[0]) * root.to_play, root)
        if root.is_expanded:
            root.ensure_vectors()

    def add_root_noise(self, root: MCTSNode) -> None:
        """Mix Dirichlet(alpha) noise over the legal moves into the root priors (weight from config)."""
        weight = self.settings.dirichlet_weight
        legal = ~root.illegal
        noise = np.zeros_like(root.original_prior)
        noise[legal] = self.rng.dirichlet(np.full(int(legal.sum()), self.dirichlet_alpha))
        root.set_prior((1.0 - weight) * root.original_prior + weight * noise)

    def tree_search(self, root: MCTSNode, batch: int) -> int:
        """Select `batch` leaves with virtual loss, evaluate them in one network call, back up all of them."""
        leaves: list[MCTSNode] = []
        for _ in range(batch):
            leaf = self.select_leaf(root)
            if self._terminal(leaf):
                _backup(leaf, leaf.terminal_value, root, utility_black=leaf.terminal_utility)
                continue
            _add_virtual_loss(leaf, root)
            leaves.append(leaf)
        if leaves:
            unique = list(dict.fromkeys(leaves))  # a leaf picked twice despite virtual loss: evaluated once
            probs, values, utilities = self.evaluate_utility([leaf.position for leaf in unique])
            row = {leaf: k for k, leaf in enumerate(unique)}
            for leaf in leaves:
                k = row[leaf]
                if not leaf.is_expanded:
                    self._expand(leaf, probs[k], float(values[k]), float(utilities[k]))
                utility_black = float(utilities[k]) * leaf.to_play
                _backup(leaf, float(values[k]) * leaf.to_play, root, True, utility_black)
        return batch

    def search(self, position: Any, *, full_search: bool = True, noise: bool | None = None) -> SearchResult:
        """Search `position` (readouts, or fast_readouts when not a full search) and pick a move.

        Noise defaults to on for full searches when `dirichlet_weight > 0` (KataGo: fast searches get none).
        PUCT: before move `softpick_moves` the move is drawn in proportion to visits^0.98, then the most
        visited. Gumbel (`settings.search`): the move of the sequential halving (`gumbel.GumbelRoot`).
        """
        t0 = self.times.clock()
        root = self.set_root(position)
        if self.is_terminal(position):
            raise ValueError(f"cannot search a finished game (move {position.n})")
        self.expand_root(root)
        if noise is None:
            noise = full_search and self.settings.dirichlet_weight > 0
        if noise and self.settings.search != "gumbel":
            self.add_root_noise(root)
        elif root.child_prior is not root.original_prior:
            root.set_prior(root.original_prior)
        readouts = self.settings.readouts if full_search else self.settings.fast_readouts
        policy = None
        if self.settings.search == "gumbel":
            fmove, done = self.gumbel_search(root, readouts, noise)
            s = self.settings
            policy = gumbel.node_improved_policy(root, s.gumbel_c_visit, s.gumbel_c_scale).astype(np.float32)
        else:
            done = 0
            while done < readouts:
                done += self.tree_search(root, min(self.settings.parallel_readouts, readouts - done))
            fmove = self.pick_move(root)
        self.times.readouts += done
        self.times.searches += 1
        self.times.total_s += self.times.clock() - t0
        return SearchResult(
            move=coords.from_flat(fmove, self.board_size),
            fmove=fmove,
            visits=root.child_N.astype(np.int64),
            root_value=root.Q_perspective,
            readouts=done,
            full_search=full_search,
            noise=noise,
            policy=policy,
        )

    def gumbel_search(self, root: MCTSNode, budget: int, noise: bool) -> tuple[int, int]:
        """`budget` simulations of Gumbel AlphaZero's search from the expanded root, one network call each
        (no virtual loss): (the move chosen, simulations done)."""
        s = self.settings
        groot = gumbel.GumbelRoot(
            root, self.rng if noise else None, budget, s.gumbel_considered, s.gumbel_c_visit, s.gumbel_c_scale
        )
        done = 0
        while done < budget:
            action = groot.next_action(root)
            if action < 0:  # no move left to simulate
                break
            node = root.child(action)
            while node.is_expanded:
                node = node.child(
                    gumbel.select_child(node.ensure_vectors(), s.gumbel_c_visit, s.gumbel_c_scale)
                )
            done += 1
            if self._terminal(node):
                _backup(node, node.terminal_value, root, utility_black=node.terminal_utility)
                continue
            probs, values, utilities = self.evaluate_utility([node.position])
            self._expand(node, probs[0], float(values[0]), float(utilities[0]))
            utility_black = float(utilities[0]) * node.to_play
            _backup(node, float(values[0]) * node.to_play, root, utility_black=utility_black)
        return groot.chosen(root), done

    def pick_move(self, root: MCTSNode) -> int:
        if root.position.n < self.softpick_moves:
            cdf = root.children_as_pi(squash=True).cumsum()
            cdf /= cdf[-1]
            return int(min(cdf.searchsorted(self.rng.random(), side="right"), len(cdf) - 1))
        return int(np.argmax(root.child_N))

    def suggest_move(self, position: Any, *, full_search: bool = True) -> coords.Move:
        """The move to play at `position` (see `search`); `last_result` keeps the search's details."""
        self.last_result = self.search(position, full_search=full_search)
        return self.last_result.move

    def root_visits(self) -> np.ndarray:
        """Visit counts of the current root's children (flat moves, pass last)."""
        if self.root is None or not self.root.is_expanded:
            return np.zeros(self.board_size * self.board_size + 1, dtype=np.int64)
        return self.root.child_N.astype(np.int64)


def _move_of(recent_item: Any) -> coords.Move:
    """Moves in `position.recent` may be plain moves or MiniGo-style PlayerMove(color, move) records."""
    return getattr(recent_item, "move", recent_item)


def _same_position(a: Any, b: Any) -> bool:
    return a is b or (
        a.n == b.n
        and a.to_play == b.to_play
        and np.array_equal(a.board, b.board)
        and tuple(a.recent) == tuple(b.recent)
    )


def count_nodes(root: MCTSNode) -> int:
    """The nodes of the tree under `root`, `root` included."""
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children.values())
    return count
