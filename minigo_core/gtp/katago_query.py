"""KataGo's analysis queries read: the fields of a query checked and turned into jobs (one a turn to analyse),
with the errors and warnings KataGo gives (its docs/Analysis_Engine.md); the server is `katago_analysis`."""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minigo_core.game import coords, go
from minigo_core.gtp.analysis import Analysis

AREA_RULES = {"tromp-taylor", "chinese", "chinese-ogs", "chinese-kgs", "aga", "bga", "new-zealand",
              "stone_scoring", "aga-button", "tt", "cn", "nz", "area"}  # fmt: skip
TERRITORY_RULES = {"japanese", "korean", "jp", "ko", "territory"}
KNOWN_FIELDS = {
    "id", "moves", "initialStones", "initialPlayer", "rules", "komi", "whiteHandicapBonus", "boardXSize",
    "boardYSize", "analyzeTurns", "maxVisits", "rootPolicyTemperature", "rootFpuReductionMax",
    "includeOwnership", "includeMovesOwnership", "includePolicy", "includePVVisits", "avoidMoves",
    "allowMoves", "overrideSettings", "reportDuringSearchEvery", "priority", "priorities", "action",
}  # fmt: skip
IGNORED_FIELDS = {"whiteHandicapBonus", "rootPolicyTemperature", "rootFpuReductionMax"}
ACTED_SETTINGS = {"reportAnalysisWinratesAs", "maxTime", "maxVisits"}
REPORT_AS = ("BLACK", "WHITE", "SIDETOMOVE")


class QueryError(ValueError):
    """A query that cannot be analysed: the message and the field at fault."""

    def __init__(self, message: str, field_name: str | None = None) -> None:
        super().__init__(message)
        self.field = field_name


@dataclass
class Job:
    """One turn of one query, waiting or being searched."""

    query_id: str
    turn: int
    position: go.Position
    moves: list[int] | None  # flat moves from the empty board for the compiled searcher; None: the reference
    max_visits: int
    max_time: float | None
    report_every: float | None
    report_as: str
    ownership: bool
    moves_ownership: bool
    policy: bool
    pv_visits: bool
    priority: int
    seq: int
    slot: int = -1
    started: float = 0.0
    next_report: float = math.inf
    searched: bool = False
    terminated: bool = False
    reference: Analysis | None = field(default=None, repr=False)
    avoid: np.ndarray | None = field(default=None, repr=False)  # root moves not to try (bool, N*N+1)

    def order(self) -> tuple[int, int]:
        return (-self.priority, self.seq)


def _player_of(text: Any, what: str) -> int:
    if not isinstance(text, str) or text.upper() not in ("B", "W", "BLACK", "WHITE"):
        raise QueryError(f'{what}: a player must be "B" or "W", not {text!r}', what)
    return go.BLACK if text.upper().startswith("B") else go.WHITE


def _vertex(text: Any, size: int, what: str) -> coords.Move:
    if not isinstance(text, str):
        raise QueryError(f'{what}: a location must be a string like "C4" or "pass", not {text!r}', what)
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        try:
            x, y = (int(v) for v in t[1:-1].split(","))
        except ValueError:
            raise QueryError(f"{what}: cannot read location {text!r}", what) from None
        if not (0 <= x < size and 0 <= y < size):
            raise QueryError(f"{what}: location {text!r} is off the {size}x{size} board", what)
        return (y, x)
    try:
        return coords.from_gtp(t, size)
    except ValueError:
        raise QueryError(f"{what}: {text!r} is not a location of the {size}x{size} board", what) from None


def _number(q: dict, name: str, kind: type, low: float, high: float) -> Any:
    value = q[name]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok or not (low <= value <= high):
        raise QueryError(
            f"{name} must be a{'n integer' if kind is int else ' number'} in [{low}, {high}]", name
        )
    return kind(value)


def _flag(q: dict, name: str) -> bool:
    value = q.get(name, False)
    if not isinstance(value, bool):
        raise QueryError(f"{name} must be true or false", name)
    return value


def check_rules(rules: Any) -> str | None:
    """None for rules this server scores as they say (area scoring), else the warning to give; QueryError for
    rules KataGo would not accept."""
    if isinstance(rules, dict):
        scoring = str(rules.get("scoringRule", "AREA")).upper()
        return (
            None
            if scoring == "AREA"
            else f"scoring rule {scoring} is analysed with area (Tromp-Taylor) scoring"
        )
    if not isinstance(rules, str):
        raise QueryError('rules must be a rules name such as "tromp-taylor" or a JSON object', "rules")
    name = rules.strip().lower()
    if name in AREA_RULES:
        return (
            None
            if name in ("tromp-taylor", "tt", "area", "chinese", "cn")
            else (f"rules {rules!r} are analysed as Tromp-Taylor (area scoring, this server's only rules)")
        )
    if name in TERRITORY_RULES:
        return f"rules {rules!r} score territory; this server scores area (Tromp-Taylor) and analyses with it"
    raise QueryError(f"unknown rules {rules!r}", "rules")


def state_hashes(position: go.Position) -> tuple[str, str]:
    """KataGo's `thisHash` (board, player to move, ko) and `symHash` (the same for all 8 symmetries)."""

    def digest(board: np.ndarray, ko: Any) -> str:
        h = hashlib.blake2b(
            board.astype(np.int8).tobytes() + bytes([position.to_play & 0xFF]), digest_size=16
        )
        h.update(repr(ko).encode())
        return h.hexdigest().upper()

    board = np.asarray(position.board)
    boards = [np.rot90(b, k) for b in (board, board.T) for k in range(4)]
    return digest(board, position.ko), min(digest(b, None) for b in boards)


@dataclass
class Limits:
    """What a query is read against: the model's board, the server's defaults and caps, and how a position
    becomes the compiled searcher's moves (None: the reference search)."""

    board_size: int
    default_visits: int
    visit_cap: int
    report_as: str
    moves_of: Callable[[go.Position], list[int] | None]
    seq: Iterator[int] = field(default_factory=itertools.count)


def parse(q: dict, qid: str, limits: Limits) -> tuple[list[Job], list[tuple[str, str]]]:
    """The jobs of an analysis query (`moves_of(position)`: its moves from the empty board for the
    compiled searcher, or None), and its warnings; QueryError for a bad field."""
    warnings = [(k, f"unknown field {k!r} is ignored") for k in q if k not in KNOWN_FIELDS]
    warnings += [(k, f"{k} is not supported by this server and is ignored") for k in q if k in IGNORED_FIELDS]
    n = limits.board_size
    for name in ("boardXSize", "boardYSize"):
        if name not in q:
            raise QueryError(f"{name} is required", name)
        if _number(q, name, int, 2, 19) != n:
            raise QueryError(f"this model plays {n}x{n}, not {q['boardXSize']}x{q['boardYSize']}", name)
    if "rules" not in q:
        raise QueryError('rules is required (for example "tromp-taylor")', "rules")
    rule_warning = check_rules(q["rules"])
    if rule_warning:
        warnings.append(("rules", rule_warning))
    komi = _number(q, "komi", float, -150, 150) if "komi" in q else 7.5
    if komi * 2 != int(komi * 2):
        raise QueryError("komi must be an integer or a half-integer", "komi")
    settings = q.get("overrideSettings") or {}
    if not isinstance(settings, dict):
        raise QueryError("overrideSettings must be a JSON object", "overrideSettings")
    warnings += [("overrideSettings", f"setting {k!r} is not supported by this server and is ignored")
                 for k in settings if k not in ACTED_SETTINGS]  # fmt: skip
    report_as = str(settings.get("reportAnalysisWinratesAs", limits.report_as)).upper()
    if report_as not in REPORT_AS:
        raise QueryError(
            f"reportAnalysisWinratesAs must be one of {', '.join(REPORT_AS)}", "overrideSettings"
        )
    visits = limits.default_visits
    if "maxVisits" in settings:
        visits = _number(settings, "maxVisits", int, 1, 1e12)
    if "maxVisits" in q:
        visits = _number(q, "maxVisits", int, 1, 1e12)
    max_time = _number(settings, "maxTime", float, 0, 1e9) if "maxTime" in settings else None
    every = (
        _number(q, "reportDuringSearchEvery", float, 0.001, 1e9) if "reportDuringSearchEvery" in q else None
    )
    positions = game_positions(q, komi, limits.board_size)
    turns = q.get("analyzeTurns", [len(positions) - 1])
    if not isinstance(turns, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns):
        raise QueryError("analyzeTurns must be a list of integers", "analyzeTurns")
    for t in turns:
        if not 0 <= t < len(positions):
            raise QueryError(f"analyzeTurns: turn {t} is not in 0..{len(positions) - 1}", "analyzeTurns")
    priorities = q.get("priorities")
    if priorities is not None and (not isinstance(priorities, list) or len(priorities) != len(turns)):
        raise QueryError("priorities must be a list as long as analyzeTurns", "priorities")
    priority = _number(q, "priority", int, -(2**31), 2**31) if "priority" in q else 0
    flags = {k: _flag(q, k) for k in ("includeOwnership", "includeMovesOwnership", "includePolicy",
                                       "includePVVisits")}  # fmt: skip
    if visits > limits.visit_cap:
        cap = f"maxVisits {visits} is over this server's cap, {limits.visit_cap} (its memory): it stops there"
        warnings.append(("maxVisits", cap))
        visits = limits.visit_cap
    rules = root_rules(q, limits.board_size, warnings)
    jobs = []
    for i, t in enumerate(turns):
        position = positions[t]
        moves = limits.moves_of(position)
        job = Job(
            qid, t, position, moves, visits, max_time, every, report_as, flags["includeOwnership"],
            flags["includeMovesOwnership"], flags["includePolicy"], flags["includePVVisits"],
            int(priorities[i]) if priorities is not None else priority, next(limits.seq),
        )  # fmt: skip
        job.avoid = root_avoid(rules, position, moves is not None, warnings)
        jobs.append(job)
    return jobs, warnings


def root_rules(q: dict, n: int, warnings: list) -> list[tuple[int, set[int], bool]]:
    """`avoidMoves` and `allowMoves` read: (player, flat moves, allow) each; QueryError for a bad entry. They
    act at the root (the first ply, `untilDepth` 1); a deeper `untilDepth` gets a warning."""
    out = []
    for name, allow in (("avoidMoves", False), ("allowMoves", True)):
        entries = q.get(name) or []
        if not isinstance(entries, list) or (allow and len(entries) > 1):
            raise QueryError(f"{name} must be a list of {{player, moves, untilDepth}}"
                             + (" (one entry)" if allow else ""), name)  # fmt: skip
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("moves"), list):
                raise QueryError(f"{name}: each entry needs player, moves and untilDepth", name)
            depth = entry.get("untilDepth", 1)
            if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
                raise QueryError(f"{name}: untilDepth must be a positive integer", name)
            if depth > 1:
                warnings.append((name, f"{name} acts at the root only here (untilDepth 1, not {depth})"))
            flat = set()
            for text in entry["moves"]:
                move = _vertex(text, n, name)
                flat.add(n * n if move is None else coords.to_flat(move, n))
            out.append((_player_of(entry.get("player"), name), flat, allow))
    return out


def root_avoid(
    rules: list[tuple[int, set[int], bool]], position: go.Position, compiled: bool, warnings: list
) -> np.ndarray | None:
    """The root moves of `position` its search must not try, from `root_rules`; None for none. A rule that
    would leave no legal move, or a position the reference search takes, is not applied (a warning)."""
    rules = [r for r in rules if r[0] == position.to_play]
    if not rules:
        return None
    legal = np.asarray(position.all_legal_moves(), dtype=bool)
    avoid = np.zeros(legal.shape, dtype=bool)
    for _, flat, allow in rules:
        mask = np.zeros(legal.shape, dtype=bool)
        mask[list(flat)] = True
        avoid |= ~mask if allow else mask
    if not compiled:
        warnings.append(("avoidMoves", "avoidMoves and allowMoves are not applied to a position with set-up "
                                       "stones (the reference search takes it)"))  # fmt: skip
        return None
    if not (legal & ~avoid).any():
        warnings.append(("avoidMoves", "avoidMoves and allowMoves would leave no legal move: not applied"))
        return None
    return avoid


def game_positions(q: dict, komi: float, n: int) -> list[go.Position]:
    """The game's positions on the n x n board, turn 0 (the initial position) to the last."""
    stones = q.get("initialStones") or []
    moves = q.get("moves")
    if moves is None:
        raise QueryError("moves is required (an empty list for a position with no history)", "moves")
    if not isinstance(stones, list) or not isinstance(moves, list):
        raise QueryError("moves and initialStones must be lists of [player, location] pairs", "moves")
    board = np.zeros((n, n), np.int8)
    for i, item in enumerate(stones):
        if not isinstance(item, list) or len(item) != 2:
            raise QueryError(f"initialStones[{i}] must be a [player, location] pair", "initialStones")
        move = _vertex(item[1], n, "initialStones")
        if move is None:
            raise QueryError(f"initialStones[{i}]: a stone cannot be a pass", "initialStones")
        board[move] = _player_of(item[0], "initialStones")
    first = q.get("initialPlayer")
    if first is not None:
        to_play = _player_of(first, "initialPlayer")
    elif moves and isinstance(moves[0], list) and len(moves[0]) == 2:
        to_play = _player_of(moves[0][0], "moves")
    else:
        to_play = go.BLACK
    try:  # White first, or set-up stones: a position without history (searched by the reference search)
        plain = not stones and to_play == go.BLACK
        position = go.Position(n, komi) if plain else go.Position.from_board(board, to_play, komi)
    except ValueError as exc:
        raise QueryError(f"initialStones: {exc}", "initialStones") from None
    out = [position]
    for i, item in enumerate(moves):
        if not isinstance(item, list) or len(item) != 2:
            raise QueryError(f"moves[{i}] must be a [player, location] pair", "moves")
        colour, move = _player_of(item[0], "moves"), _vertex(item[1], n, "moves")
        try:
            position = position.play_move(move, color=colour)
        except go.IllegalMove:
            raise QueryError(f"Illegal move {i}: {item[1]}", "moves") from None
        out.append(position)
    return out
