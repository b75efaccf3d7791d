"""A game's result as text (`B+3.5`, `W+R`, `B+F`, `B+T`, `0`): the one spelling the game files, the match
files, SGF and GTP's `final_score` share, and its reading back.

The score is Black's points minus White's (Tromp-Taylor area, komi to White); a jigo is `0`.
"""

from __future__ import annotations

import math

REASONS = ("", "resign", "forfeit", "time")  # how a game without a counted winner ended: R, F, T
_LETTER = {"resign": "R", "forfeit": "F", "time": "T"}


def result_string(score: float | None = None, *, winner: int | None = None, reason: str = "") -> str:
    """`B+3.5`, `W+12`, `0` (a jigo), `B+R` (resignation), `W+F` (forfeit), `B+T` (the other side's clock ran
    out), or `B+` (margin unknown).

    The winner (1 Black, -1 White, 0 a draw) is the sign of `score` unless given; a given winner is said
    with the size of `score` as the margin, or `reason` (`resign`, `forfeit`, `time`) in its place.
    """
    if reason not in REASONS:
        raise ValueError(f"result reason {reason!r} is not one of {REASONS}")
    if winner is None:
        if score is None:
            raise ValueError("a result needs a score or a winner")
        winner = 1 if score > 0 else -1 if score < 0 else 0
    if winner == 0:
        return "0"
    side = "B+" if winner > 0 else "W+"
    if reason:
        return side + _LETTER[reason]
    return side + (f"{abs(score):g}" if score is not None else "")


def parse_score(text: str) -> float | None:
    """A GTP/SGF result (`B+3.5`, `W+12`, `0`, `B+R`) -> Black minus White (+-inf for resign), or None."""
    t = text.strip().upper()
    if t in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(t) < 3 or t[0] not in "BW" or t[1] != "+":
        return None
    sign = 1.0 if t[0] == "B" else -1.0
    rest = t[2:]
    if rest in ("R", "RESIGN", "T", "TIME", "F", "FORFEIT"):
        return sign * math.inf
    try:
        return sign * float(rest)
    except ValueError:
        return None
