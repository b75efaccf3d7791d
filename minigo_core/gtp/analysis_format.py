"""The text of GUI analysis: Leela Zero's and KataGo's `info` lines, their arguments, GoGui's `gfx` output.

Formats (KataGo's docs/GTP_Extensions.md, which documents Leela Zero's `lz-analyze` too):

- `lz-analyze [colour] [interval] [interval CS] [minmoves N] [maxmoves N]`: one line per interval,
  `info move D4 visits 12 winrate 5234 prior 1043 lcb 4890 order 0 pv D4 E5 ...` for each move, one after
  another on the line; winrate, prior and lcb are 10000 times the value, rounded to an integer.
- `kata-analyze`, the same arguments and `ownership true`: `info move D4 visits 12 utility 0.0468
  winrate 0.5234 scoreMean 1.5 scoreStdev 0 scoreLead 1.5 scoreSelfplay 1.5 prior 0.1043 lcb 0.489
  utilityLcb -0.022 order 0 pv D4 E5 ...` (floats), then, with ownership, `ownership` and N*N floats in
  [-1, 1], row by row from the top left (A9 on 9x9) to the bottom right, from the mover's view.
- GoGui `gfx` (GoGui's analyze commands): `INFLUENCE v x ...` (x in [-1, 1], Black positive), `COLOR #rrggbb
  v ...`, `LABEL v text ...`, `TEXT text`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minigo_core.game import coords, go
from minigo_core.gtp.analysis import MoveStats

_ONE_VALUE = ("interval", "minmoves", "maxmoves", "ownership", "ownershipstdev", "pvvisits", "pvedgevisits",
              "movesownership", "rootinfo")  # fmt: skip
_COLOURS = {"b": go.BLACK, "black": go.BLACK, "w": go.WHITE, "white": go.WHITE}
# The policy heat map's colours, coolest to hottest (shares of the largest prior).
HEAT = ("#3050c0", "#30a0c0", "#40c060", "#e0c020", "#e03020")


class AnalyzeArgsError(ValueError):
    """Arguments of an analysis command that do not parse."""


@dataclass(frozen=True)
class AnalyzeRequest:
    colour: int | None  # None: the side to move
    interval: float  # seconds between lines (0: none)
    minmoves: int = 0
    maxmoves: int = 0
    ownership: bool = False


def parse_analyze_args(args: list[str]) -> AnalyzeRequest:
    """`[colour] [interval] KEY VALUE ...` (centiseconds); `allow`/`avoid` (3 values) are accepted and
    ignored."""
    rest = list(args)
    colour = _COLOURS.get(rest[0].lower()) if rest else None
    if colour is not None:
        rest = rest[1:]
    values: dict[str, str] = {}
    if rest and _is_number(rest[0]):
        values["interval"] = rest.pop(0)
    while rest:
        key = rest.pop(0).lower()
        width = 3 if key in ("allow", "avoid") else 1 if key in _ONE_VALUE else 0
        if width == 0 or len(rest) < width:
            raise AnalyzeArgsError(f"unknown or incomplete analysis argument {key!r}")
        values[key] = rest[0]
        del rest[:width]
    try:
        interval = float(values.get("interval", "0")) / 100.0
        minmoves, maxmoves = int(values.get("minmoves", "0")), int(values.get("maxmoves", "0"))
    except ValueError:
        raise AnalyzeArgsError("interval, minmoves and maxmoves take numbers") from None
    if interval < 0 or minmoves < 0 or maxmoves < 0:
        raise AnalyzeArgsError("interval, minmoves and maxmoves take numbers >= 0")
    own = values.get("ownership", "false").lower() == "true"
    return AnalyzeRequest(colour, interval, minmoves, maxmoves, own)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _pv(move: MoveStats, board_size: int) -> str:
    return " ".join(coords.to_gtp(coords.from_flat(m, board_size), board_size) for m in move.pv)


def lz_line(moves: list[MoveStats], board_size: int) -> str:
    """Leela Zero's line: every move's `info ...`, one after another."""
    parts = []
    for order, m in enumerate(moves):
        vertex = coords.to_gtp(coords.from_flat(m.move, board_size), board_size)
        parts.append(
            f"info move {vertex} visits {m.visits} winrate {round(m.winrate * 10000)} "
            f"prior {round(m.prior * 10000)} lcb {round(m.lcb * 10000)} order {order} pv {_pv(m, board_size)}"
        )
    return " ".join(parts)


def kata_line(moves: list[MoveStats], board_size: int, ownership: np.ndarray | None = None) -> str:
    """KataGo's line; `ownership` (mover's view, N*N row-major from the top left) appended when given."""
    parts = []
    for order, m in enumerate(moves):
        vertex = coords.to_gtp(coords.from_flat(m.move, board_size), board_size)
        utility, utility_lcb = 2 * m.winrate - 1, 2 * m.lcb - 1
        parts.append(
            f"info move {vertex} visits {m.visits} utility {utility:.6f} winrate {m.winrate:.6f} "
            f"scoreMean {m.score:.2f} scoreStdev 0 scoreLead {m.score:.2f} scoreSelfplay {m.score:.2f} "
            f"prior {m.prior:.6f} lcb {m.lcb:.6f} utilityLcb {utility_lcb:.6f} order {order} "
            f"pv {_pv(m, board_size)}"
        )
    if ownership is not None:
        parts.append("ownership " + " ".join(f"{x:.4f}" for x in ownership))
    return " ".join(parts)


def _vertex(flat: int, board_size: int) -> str:
    return coords.to_gtp(coords.from_flat(flat, board_size), board_size)


def gfx_influence(ownership: np.ndarray, board_size: int) -> str:
    """GoGui's `INFLUENCE` of an ownership map (Black's view), one point after another."""
    points = " ".join(f"{_vertex(i, board_size)} {x:.2f}" for i, x in enumerate(ownership))
    return f"INFLUENCE {points}"


def gfx_heat_map(prior: np.ndarray, board_size: int) -> str:
    """GoGui's `COLOR` groups by share of the largest prior, `LABEL` the percentages of 1% and more, and the
    pass's share as `TEXT`."""
    points = prior[:-1]
    top = float(points.max()) if points.size else 0.0
    lines = []
    if top > 0:
        bucket = np.minimum((points / top * len(HEAT)).astype(int), len(HEAT) - 1)
        for k, colour in enumerate(HEAT):
            where = [i for i in np.flatnonzero(bucket == k) if points[i] > 0]
            if where:
                lines.append(f"COLOR {colour} " + " ".join(_vertex(i, board_size) for i in where))
        labels = [
            f"{_vertex(i, board_size)} {round(100 * points[i])}" for i in np.flatnonzero(points >= 0.01)
        ]
        if labels:
            lines.append("LABEL " + " ".join(labels))
    lines.append(f"TEXT pass {100 * float(prior[-1]):.1f}%")
    return "\n".join(lines)
