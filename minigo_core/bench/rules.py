"""Rules and features throughput: `python -m minigo_core.bench rules [--seconds S] [--sizes 9 19]`.

Prints, per board size:
- random playouts (MiniGo style: a random legal move that does not fill a one-point eye of the mover,
  until two passes or 2*N*N moves): moves/s including `all_legal_moves`, and `play_move` alone replaying
  the same moves;
- `all_legal_moves` calls/s, against the baseline of asking `is_move_legal` point by point (ratio printed);
- feature extraction positions/s for each feature set, one at a time and in batches of 8;
- the compiled rules of the self-play engine (`minigo_core/game/csrc/board.cpp`), when the library is built:
  the same random playouts played entirely in C++ and `play()` alone replaying them, moves/s, with the ratio
  to the Python figures above.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from minigo_core.base import native
from minigo_core.game import features, go, native_board


def random_playout(board_size: int, rng: random.Random) -> list[go.Position]:
    """One random game; every position, the final one included."""
    position = go.Position(board_size)
    positions = [position]
    n2 = board_size * board_size
    while not position.is_game_over() and position.n < 2 * n2:
        candidates = np.flatnonzero(
            position.all_legal_moves()[:-1] & ~position.eyeish(position.to_play).reshape(-1)
        )
        move = (
            None
            if len(candidates) == 0
            else divmod(int(candidates[rng.randrange(len(candidates))]), board_size)
        )
        position = position.play_move(move)
        positions.append(position)
    return positions


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f}/s"


def bench_size(board_size: int, seconds: float, rng: random.Random) -> tuple[float, float]:
    """Prints the Python figures; returns (playout moves/s, play_move moves/s) for the compiled comparison."""
    games: list[list[go.Position]] = []
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not games:
        games.append(random_playout(board_size, rng))
        moves += len(games[-1]) - 1
    playout_time = time.perf_counter() - start
    print(
        f"{board_size}x{board_size}: {len(games)} random playouts, {moves} moves, "
        f"{moves / len(games):.0f} moves/game"
    )
    print(f"  playout (all_legal_moves + choice + play_move) {_rate(moves, playout_time)} moves")

    start = time.perf_counter()
    for game in games:
        position = go.Position(board_size)
        for nxt in game[1:]:
            position = position.play_move(nxt.recent[-1])
    play_time = time.perf_counter() - start
    print(f"  play_move alone                              {_rate(moves, play_time)} moves")

    sample = [p for game in games for p in game][:: max(1, moves // 2000)]
    start = time.perf_counter()
    for p in sample:
        p.all_legal_moves()
    vectorised = time.perf_counter() - start
    baseline_sample = sample[:: max(1, len(sample) // 100)]
    n = board_size
    start = time.perf_counter()
    for p in baseline_sample:
        [p.is_move_legal((r, c)) for r in range(n) for c in range(n)]
    baseline = (time.perf_counter() - start) / len(baseline_sample)
    print(
        f"  all_legal_moves                              {_rate(len(sample), vectorised)} calls "
        f"({baseline / (vectorised / len(sample)):.1f}x the point-by-point is_move_legal baseline)"
    )

    for feature_set in features.FEATURE_SETS:
        start = time.perf_counter()
        for p in sample:
            features.extract(p, feature_set)
        single = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(0, len(sample) - 7, 8):
            features.extract_batch(sample[i : i + 8], feature_set)
        batched = time.perf_counter() - start
        print(
            f"  features {feature_set:<9} extract {_rate(len(sample), single)} positions, "
            f"extract_batch(8) {_rate(len(sample) // 8 * 8, batched)} positions"
        )
    return moves / playout_time, moves / play_time


def bench_compiled(board_size: int, seconds: float, seed: int, python_rates: tuple[float, float]) -> None:
    """The compiled rules: random playouts and play() alone in C++, against the Python rates."""
    try:
        native_board.lib()
    except (native.NativeUnavailable, OSError) as e:
        print(f"  compiled rules: not measured ({e})")
        return
    games, moves, playout_s, replay_s = 10, 0, 0.0, 0.0
    while True:  # grow the batch until it fills the time
        moves, playout_s, replay_s = native_board.random_playouts(board_size, games, seed)
        if playout_s >= seconds or games >= 1 << 24:
            break
        games = max(games * 2, int(games * seconds / max(playout_s, 1e-6) * 1.1))
    playout_rate, play_rate = moves / playout_s, moves / replay_s
    print(
        f"  {'compiled playout (C++, same rules)':<45}{_rate(moves, playout_s)} moves "
        f"({playout_rate / python_rates[0]:.0f}x Python; {games} games, {moves / games:.0f} moves/game)"
    )
    print(
        f"  {'compiled play() alone':<45}{_rate(moves, replay_s)} moves "
        f"({play_rate / python_rates[1]:.0f}x Python play_move)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench rules",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="playout time per board size (default 3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19], help="board sizes (default 9 19)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    for board_size in args.sizes:
        python_rates = bench_size(board_size, args.seconds, rng)
        bench_compiled(board_size, args.seconds, args.seed, python_rates)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
