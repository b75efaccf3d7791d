"""Does the table predict? `minigo ladder check A B --seed S`: a match between two rungs, seeded anew (a seed
the calibration did not use), set against what the table predicts: the expected score at the tabled ratings
and its 95% binomial band (and the band widened by the two rungs' own uncertainty). The games are kept like
a calibration pair's (`calibration.play_pair`, resumable), under `config/ladder/checks/{N}x{N}/` by default.
"""

from __future__ import annotations

import math

from minigo_core.base.elo import expected_score
from minigo_core.base.machine import cpu_model
from minigo_core.rating.calibration import DEFAULT_SEED, CalibrationDesign, play_pair, read_pair
from minigo_core.rating.ladder import Ladder, LadderError


def binomial_band(games: int, p: float, coverage: float = 0.95) -> tuple[int, int]:
    """The central `coverage` band of Binomial(games, p): the smallest lo and hi with P(X < lo) and
    P(X > hi) each at most (1 - coverage) / 2."""
    tail = (1.0 - coverage) / 2.0
    pmf = [math.comb(games, k) * p**k * (1.0 - p) ** (games - k) for k in range(games + 1)]
    below, lo = 0.0, 0
    while lo < games and below + pmf[lo] <= tail:
        below += pmf[lo]
        lo += 1
    above, hi = 0.0, games
    while hi > 0 and above + pmf[hi] <= tail:
        above += pmf[hi]
        hi -= 1
    return lo, hi


def predict(ladder: Ladder, player: str, opponent: str, games: int) -> dict:
    """What the table predicts for `games` games of `player` against `opponent` (both rungs): the expected
    score, its 95% binomial band at the tabled ratings, and the band widened by the two rungs' own
    uncertainty (their held intervals added in quadrature, the gap moved to either end)."""
    a, b = ladder.rung(player), ladder.rung(opponent)
    p = expected_score(a.elo, b.elo)
    half = math.hypot((a.ci95[1] - a.ci95[0]) / 2, (b.ci95[1] - b.ci95[0]) / 2)
    lo_p, hi_p = expected_score(a.elo - half, b.elo), expected_score(a.elo + half, b.elo)
    return {
        "player": player,
        "opponent": opponent,
        "games": games,
        "elo_gap": a.elo - b.elo,
        "expected_score": p,
        "expected_points": games * p,
        "band95": list(binomial_band(games, p)),
        "band95_with_table_uncertainty": [binomial_band(games, lo_p)[0], binomial_band(games, hi_p)[1]],
    }


def check(
    ladder: Ladder, player: str, opponent: str, games: int, seed: int, out_dir: str, gnugo: str | None = None
) -> dict:
    """Play `games` games of `player` against `opponent` with the calibration's game seeding and `seed`
    (one the calibration did not use), kept like a calibration pair in `out_dir` (resumable), and set the
    score against `predict`."""
    if seed == ladder.provenance.get("seed", DEFAULT_SEED):
        raise LadderError(
            f"seed {seed} is the calibration's own: a check needs games the table was not fitted on; "
            "give another --seed"
        )
    komi = float(ladder.provenance.get("komi", 7.5))
    design = CalibrationDesign(
        ladder.board_size, komi, (player, opponent), games, seed, reach=1, ladder_dir=out_dir, gnugo=gnugo
    )
    play_pair(design, player, opponent)
    data = read_pair(design.pair_file(player, opponent))
    assert data is not None
    scores = [float(g["score"]) for g in data["games"]][:games]
    result = predict(ladder, player, opponent, len(scores))
    points = sum(scores)
    lo, hi = result["band95"]
    result |= {
        "seed": seed,
        "points": points,
        "inside_band95": lo <= points <= hi,
        "cpu_seconds": round(sum(float(g.get("cpu_seconds", 0.0)) for g in data["games"]), 1),
        "pair_file": design.pair_file(player, opponent),
        "ladder_cpu": ladder.provenance.get("cpu"),
        "cpu": cpu_model(),
    }
    return result


def check_line(result: dict) -> str:
    lo, hi = result["band95"]
    wlo, whi = result["band95_with_table_uncertainty"]
    verdict = "inside" if result["inside_band95"] else "OUTSIDE"
    return (
        f"{result['player']} vs {result['opponent']}: {result['points']:g}/{result['games']} "
        f"(seed {result['seed']}); the table predicts {result['expected_points']:.1f} "
        f"(Elo gap {result['elo_gap']:+.0f}), 95% band [{lo}, {hi}] ({verdict}); "
        f"with the rungs' own uncertainty [{wlo}, {whi}]; {result['cpu_seconds']:.0f} CPU-s"
    )
