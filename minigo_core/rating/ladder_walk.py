"""Choosing the rungs a player being rated plays on a fixed Elo ladder, and when it stops (`next_rung`).

A rating stops once it is `bracket`ed, between a rung the player scores above 50% against and a higher rung
it scores under 50% against (enough games each), with its 95% interval within the target; or when it cannot
be bracketed on the table (`off_the_end`: it scores >= 50% against the top rung, or <= 50% against the bottom
one); or at its game budget. The ratings are `ladder.rate_with_fixed_rungs`'s. No games are played here:
`ladder_rate` plays them (`minigo ladder rate`).

Among the rungs near a rating the walk prefers cheap ones: `side_cost` is the rough CPU seconds of one side
of a game against a reference player, by kind and level, scaled by the board's area (measured on 9x9). The
adaptive calibration weighs its pairs with it too, before they have games of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

from minigo_core.base.elo import expected_score
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.rating.ladder import Ladder, LadderError, Rating, Rung, rate_with_fixed_rungs

# typical CPU seconds one side of a 9x9 game costs (uct:N: per playout), scaled by the board's area
_SIDE_COST = {"random": 0.001, "gnugo": 1.0, "gtp": 1.0}
UCT_SIDE_COST_PER_PLAYOUT = 0.00074
PACHI_SIDE_COST_PER_PLAYOUT = 0.01  # measured: ~5 s a 9x9 game side at pachi:500 (it rarely resigns)
RATED_SIDE_COST = 0.5  # a rated player's own side of a game (a model at evaluate.readouts), the same guess
MAX_CHOICE_GAP = 400.0  # Elo: rungs further from a player's rating are never chosen for their cheapness


def side_cost(name: str, board_size: int) -> float:
    """A rough CPU cost (seconds) of one side of a game for a reference player: uct:N scales with N, a
    mixture `SPEC+rP` pays for its base's moves only; a komi shift `SPEC+kP` costs what SPEC does."""
    scale = (board_size / 9.0) ** 2
    try:
        spec = PlayerSpec.parse(name)
    except PlayerSpecError:
        return _SIDE_COST["gtp"] * scale
    share = 1.0 - (spec.random_percent or 0.0) / 100.0
    if spec.kind == "uct":
        return UCT_SIDE_COST_PER_PLAYOUT * float(spec.playouts or 0) * scale * share
    if spec.kind == "gnugo":  # measured: 0.3-0.8 s (levels 1-3), ~1 (4-6), 2-3.5 (8-10)
        level = spec.level or 0
        return (0.3 if level <= 3 else 1.0 if level <= 6 else 2.5) * scale * share
    if spec.kind == "pachi":
        return PACHI_SIDE_COST_PER_PLAYOUT * float(spec.playouts or 0) * scale
    return _SIDE_COST.get(spec.kind, 1.0) * scale


def bracket(
    ladder: Ladder,
    played: Mapping[str, tuple[float, int]],
    min_games_per_rung: int = 10,
    low: float = 0.5,
    high: float = 0.5,
) -> tuple[str, str] | None:
    """(lower rung, upper rung) bracketing the player, or None: it scores more than `low` against the lower
    and less than `high` against the strictly higher upper one, with `min_games_per_rung` games each (the
    closest such pair). `played`: rung -> (the player's points, games).

    By default both are 50%: the rating then lies between a rung the player is shown to be stronger than and
    one it is shown to be weaker than. (A 20-80% rule counts a player that scores 75% against both rungs as
    bracketed, though it stands above both: its rating then rests on the model's extrapolation alone.) A
    rung it scores exactly 50% against brackets it on neither side: a neighbour must say which way it leans.
    """
    _check_levels(low, high)
    elo = ladder.ratings()
    decided = {name: s / n for name, (s, n) in played.items() if n >= max(min_games_per_rung, 1)}
    pairs = [
        (elo[u] - elo[lo_], lo_, u)
        for lo_, s_lo in decided.items()
        for u, s_u in decided.items()
        if elo[lo_] < elo[u] and s_lo > low and s_u < high
    ]
    return min(pairs)[1:] if pairs else None


ABOVE_TOP_RUNG = "above_top_rung"
BELOW_BOTTOM_RUNG = "below_bottom_rung"


def off_the_end(
    ladder: Ladder,
    played: Mapping[str, tuple[float, int]],
    min_games_per_rung: int = 10,
    low: float = 0.5,
    high: float = 0.5,
) -> str | None:
    """Why a player that `bracket` does not bracket cannot be bracketed on this table, or None when it is
    bracketed or the walk (`next_rung` rule 5) still has a rung to go to: `ABOVE_TOP_RUNG` when the walk
    would go up from the table's top rung (the player scores >= `high` against it, `min_games_per_rung`
    games there: no rung above can bound it), `BELOW_BOTTOM_RUNG` when it would go down from the bottom rung
    (<= `low` against it). Only rungs with enough games count, as in `bracket`."""
    _check_levels(low, high)
    decided = {name: (s, n) for name, (s, n) in played.items() if n >= max(min_games_per_rung, 1)}
    if not decided or bracket(ladder, decided, min_games_per_rung, low, high) is not None:
        return None
    top, bottom = _ends(ladder, decided)
    way = _direction(ladder, decided, low, high)
    at_top, at_bottom = top == ladder.rungs[-1].player, bottom == ladder.rungs[0].player
    if way == "either" and at_top and at_bottom:  # one rung in all, scored between low and high
        way = "up" if decided[top][0] / decided[top][1] >= 0.5 else "down"
    if way == "up" and at_top:
        return ABOVE_TOP_RUNG
    if way == "down" and at_bottom:
        return BELOW_BOTTOM_RUNG
    return None


def _check_levels(low: float, high: float) -> None:
    if not 0.0 <= low <= high <= 1.0:
        raise LadderError(f"bracket scores must be 0 <= low <= high <= 1, got low={low}, high={high}")


def middle_elo(ladder: Ladder) -> float:
    """Where a rating with no estimate starts: the Elo of the table's middle rung (rungs are in increasing
    order), so that its first batches jump up or down by half the table, not climb it from the bottom one
    rung at a time (a 16-game first rating from `random` reached only uct:91 on the 9x9 table)."""
    return ladder.rungs[len(ladder.rungs) // 2].elo


def _nearest(ladder: Ladder, elo: float, among: list[Rung] | None = None) -> str:
    return min(among if among is not None else ladder.rungs, key=lambda r: (abs(r.elo - elo), r.elo)).player


def _most_informative(ladder: Ladder, elo: float) -> str:
    """The rung whose games tell most about a player at `elo` per CPU-second: the largest Fisher information
    of a game, p (1 - p), over its cost (the rung's side and the player's), among rungs within
    MAX_CHOICE_GAP; ties to the nearest. A cheap GNU Go mixture at the player's level wins over a costly
    uct:8192 beside it; a rung far below never wins for its cheapness alone."""
    near = [r for r in ladder.rungs if abs(r.elo - elo) <= MAX_CHOICE_GAP] or ladder.rungs

    def value(r: Rung) -> tuple[float, float]:
        p = expected_score(elo, r.elo)
        cost = side_cost(r.player, ladder.board_size) + RATED_SIDE_COST
        return (p * (1.0 - p) / cost, -abs(r.elo - elo))

    return max(near, key=value).player


def next_rung(
    ladder: Ladder,
    estimate: Rating | None,
    played: Mapping[str, tuple[float, int]],
    min_games_per_rung: int = 10,
    target_half_width: float = 100.0,
    max_games: int = 400,
    low: float = 0.5,
    high: float = 0.5,
) -> str | None:
    """The rung a player being rated should play next, or None when it is rated well enough or cannot be.

    `played`: rung -> (the player's points, games) so far; `estimate`: where it is expected to stand (the
    previous generation's rating) or None. The caller plays a batch against the returned rung (up to
    `min_games_per_rung` games) and asks again. The rule, first match wins:

    1. nothing played: the rung nearest `estimate` (the lowest rung without one);
    2. `max_games` played in all: None (the budget is spent);
    3. a rung played fewer than `min_games_per_rung` times: that rung again (the one nearest the current
       rating when several);
    4. bracketed (`bracket`: a rung it scores > `low` against below a rung it scores < `high` against,
       `min_games_per_rung` games each): None once the 95% interval of `rate_with_fixed_rungs` is within
       +-`target_half_width`, else the rung whose games carry the most information per CPU-second at its
       current rating (`_most_informative`: near it, and cheap);
    5. not bracketed: if it scored >= `high` against the highest rung played, up, to the rung above that
       one nearest its current rating; else (it scored <= `low` against the lowest rung played: with
       low = high one of the two holds whenever it is not bracketed) down likewise. None when there is no
       rung that way: off the top or the bottom of the table (`off_the_end` names which). With low < high
       and one rung played between the two: its neighbour on the side it leans to (up at >= 50%).

    A player level with a rung (50%) thus goes on to the rung above and, if it scores under 50% there, below:
    it is rated between the two rungs around the one it draws with (level with the bottom rung: off the
    bottom, as level with the top rung is off the top).
    """
    _check_levels(low, high)
    unknown = [name for name in played if name not in ladder.names]
    if unknown:
        raise LadderError(
            f"not rungs of the {ladder.board_size}x{ladder.board_size} ladder: "
            f"{', '.join(unknown)}; rungs: {', '.join(ladder.names)}"
        )
    played = {name: (float(s), int(n)) for name, (s, n) in played.items() if n > 0}
    if not played:
        return _nearest(ladder, estimate.elo) if estimate is not None else ladder.rungs[0].player
    if sum(n for _, n in played.values()) >= max_games:
        return None
    current = rate_with_fixed_rungs(_as_games(played), ladder)
    short = [ladder.rung(name) for name, (_, n) in played.items() if n < min_games_per_rung]
    if short:
        return _nearest(ladder, current.elo, short)
    if bracket(ladder, played, min_games_per_rung, low, high) is not None:
        return None if current.half_width <= target_half_width else _most_informative(ladder, current.elo)
    return _walk(ladder, played, current, low, high)


def _ends(ladder: Ladder, played: Mapping[str, tuple[float, int]]) -> tuple[str, str]:
    """The highest and the lowest rung played."""
    elo = ladder.ratings()
    return max(played, key=lambda name: elo[name]), min(played, key=lambda name: elo[name])


def _direction(ladder: Ladder, played: Mapping[str, tuple[float, int]], low: float, high: float) -> str:
    """Which way a player not bracketed goes: "up" (it scored >= `high` against the highest rung played),
    "down" (<= `low` against the lowest), or "either" (low < high only: one rung played, scored between).
    One rung played and scored level with it (both hold: exactly 50% by default) goes up, unless that rung is
    the table's bottom one: then down, off the table, as it would stop at the top rung (no rung below could
    ever bracket it from below)."""
    top, bottom = _ends(ladder, played)
    up = played[top][0] / played[top][1] >= high
    down = played[bottom][0] / played[bottom][1] <= low
    if up and down and top == bottom == ladder.rungs[0].player and top != ladder.rungs[-1].player:
        return "down"
    if up:
        return "up"
    return "down" if down else "either"


def _walk(
    ladder: Ladder, played: dict[str, tuple[float, int]], current: Rating, low: float, high: float
) -> str | None:
    """Rule 5 of `next_rung`: the move of a player not yet bracketed."""
    elo = ladder.ratings()
    top, bottom = _ends(ladder, played)
    above = [r for r in ladder.rungs if r.elo > elo[top]]
    below = [r for r in ladder.rungs if r.elo < elo[bottom]]
    way = _direction(ladder, played, low, high)
    if way == "up":
        return _nearest(ladder, current.elo, above) if above else None
    if way == "down":
        return _nearest(ladder, current.elo, below) if below else None
    s, n = played[top]
    if above and (s / n >= 0.5 or not below):
        return above[0].player  # the neighbour above
    return below[-1].player if below else None


def _as_games(played: Mapping[str, tuple[float, int]]) -> list[tuple[str, float]]:
    """(points, games) per rung as games with the same totals: n games scoring points/n each."""
    return [(name, s / n) for name, (s, n) in played.items() for _ in range(n)]
