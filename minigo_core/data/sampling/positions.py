"""The positions a window samples from a game, their weights, and their value and opponent-reply targets.

A window takes `window.sample_fraction` of a game's recorded positions (`sample_count`: rounded at random so
the expected count is exact). Uniformly by default; with `window.policy_surprise_weight` s > 0 a position
is drawn with weight (1 - s) + s * KL_i / mean(KL), KL_i the game file's `surprise` column (KL of the
search's policy target from the network's prior at the position, written by the compiled engine): KataGo's
policy-surprise weighting, which spends more of the window on the positions where the search taught the
network most (KataGo: s = 0.5). The count stays the game's; positions are drawn without replacement (numpy's
successive weighted draws: inclusion rises with the weight, not exactly in proportion). A game without the
column (the reference engine's) or whose positions all have KL 0 is sampled uniformly.

`draw` gives the P parts of one game (`data/parts.py`): uniformly, successive slices of one permutation
(disjoint across the windows when the counts fit); weighted, each part its own weighted draw (a surprising
position may be seen by several windows, as KataGo repeats it).
"""

from __future__ import annotations

import numpy as np

from minigo_core.data import gamefile
from minigo_core.game import coords

MIN_WEIGHT = 1e-9  # a position's least weight: every position stays drawable (s = 1 and KL 0)


def sample_count(positions: int, fraction: float, rng: np.random.Generator) -> int:
    """fraction * positions, rounded up or down at random so that the expected count is exact."""
    exact = fraction * positions
    k = int(np.floor(exact))
    return min(positions, k + int(rng.random() < exact - k))


def surprise_weights(record: gamefile.GameRecord, recorded: np.ndarray, weight: float) -> np.ndarray | None:
    """The sampling weights (mean 1) of the recorded positions `recorded` (row indices) under
    `window.policy_surprise_weight` `weight`, or None for a uniform draw (weight 0, no surprise column, or
    no surprise in the game)."""
    if weight == 0 or record.surprise is None or recorded.size == 0:
        return None
    kl = record.surprise[recorded].astype(np.float64)
    mean = float(kl.mean())
    if not mean > 0:
        return None
    return np.maximum((1.0 - weight) + weight * kl / mean, MIN_WEIGHT)


def choose(
    n: int, fraction: float, rng: np.random.Generator, weights: np.ndarray | None = None
) -> np.ndarray:
    """One window's sample of a game's n recorded positions: sorted indices, uniform or by `weights`."""
    count = sample_count(n, fraction, rng)
    if weights is None:
        return np.sort(rng.choice(n, size=count, replace=False))
    return np.sort(rng.choice(n, size=count, replace=False, p=weights / weights.sum()))


def draw(
    n: int, parts: int, fraction: float, rng: np.random.Generator, weights: np.ndarray | None = None
) -> list[np.ndarray]:
    """Each part's sampled positions (sorted indices among n). Uniform: disjoint when their counts sum to at
    most n. Weighted: each part its own draw by `weights`."""
    counts = [sample_count(n, fraction, rng) for _ in range(parts)]
    if weights is not None:
        p = weights / weights.sum()
        return [np.sort(rng.choice(n, size=c, replace=False, p=p)) for c in counts]
    if sum(counts) <= n:
        order, ends = rng.permutation(n), np.cumsum(counts)
        return [np.sort(order[e - c : e]) for c, e in zip(counts, ends, strict=True)]
    return [np.sort(rng.choice(n, size=c, replace=False)) for c in counts]


def root_returns(record: gamefile.GameRecord, lam: float) -> np.ndarray:
    """Per recorded row, the lambda-return of the search's root values from there to the game's end (float64,
    the player to move's view): G_i = (1 - lambda) q_i + lambda G_(i+1), G_(i+1) in row i's view (its sign
    flipped when an odd number of moves lies between), and past the last row the game's result. lambda 0:
    q_i itself; near 1: mostly the result. Rows are taken in move order, one lambda per recorded position
    (every position with `selfplay.full_search_fraction` 1)."""
    moves = record.move_index.astype(np.int64)
    q = np.clip(record.root_value.astype(np.float64), -1.0, 1.0)
    out = np.empty(moves.size, dtype=np.float64)
    order = np.argsort(moves, kind="stable")
    after, next_move = (float(record.value_target[order[-1]]), None) if order.size else (0.0, None)
    for i in order[::-1]:  # `after`: G of the next row (the result past the last), in its own view
        if next_move is not None and (next_move - moves[i]) % 2:
            after = -after  # the other player to move there
        out[i] = after = (1.0 - lam) * q[i] + lam * after
        next_move = moves[i]
    return out


def value_targets(
    record: gamefile.GameRecord, rows: np.ndarray, root_mix: float, root_lambda: float = 0.0
) -> np.ndarray:
    """The value targets (float32, the player to move's view) of the given rows: the game's result z, or with
    `window.value_root_mix` w > 0, (1 - w) z + w q, q the search's root value at the position (a target
    with less noise than the result alone; (z + q) / 2 at w = 0.5), or with `window.value_root_lambda` > 0
    the root values' lambda-return from the position on (`root_returns`) in place of q."""
    z = record.value_target[rows].astype(np.float32)
    if root_mix == 0:
        return z
    if root_lambda > 0:
        q = root_returns(record, root_lambda)[rows].astype(np.float32)
    else:
        q = np.clip(record.root_value[rows].astype(np.float32), -1.0, 1.0)
    return ((1.0 - root_mix) * z + root_mix * q).astype(np.float32)


def reply_targets(record: gamefile.GameRecord, rows: np.ndarray) -> np.ndarray:
    """The opponent-reply targets (int16) of the given rows: the flat index (pass N*N) of the move played
    after the row's own move, `moves[move_index + 1]` (the opponent's answer), or -1 where the game has no
    such move (the row's move was the game's last)."""
    after = record.move_index[rows] + 1
    n = record.board_size
    return np.array([coords.to_flat(record.moves[i], n) if i < len(record.moves) else -1 for i in after],
                    dtype=np.int16)  # fmt: skip
