"""The match results file (`{root}/eval/genGGGG/vs_<opponent>.json`): what `minigo evaluate` writes and the
ratings, status and progress read.

One JSON object: `format` / `format_version`, the two players (`name`, ...), the settings, one record per game
(`winner` from the evaluated player's side: "player", "opponent" or "draw"; `ended_by`, one of `ENDINGS`) and
the totals. Readers need only the players' names and each game's winner.

Time per move (optional, so files written before these fields read the same): each game's `move_times`
({black, white}: `moves`, `mean_s`, `p95_s` of the genmove wall times) and the match's `time_per_move`
({player, opponent}: `name`, `moves`, `mean_s`, `p95_s`, `cpu_s`); `move_time_ms` (null: the models searched
by fixed readouts; else each model's budget per move), `equal_time` (how that budget was measured, see
`minigo_core.play.equal_time.measure_time_per_move`) and `reproducible` (false for time-budgeted games: their
moves depend on the machine's speed and load, so a rerun plays other games). `read_match` checks these
fields where they are present (`check_time_fields`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from minigo_core.data import storage

MATCH_FORMAT = "minigo-match"
MATCH_FORMAT_VERSION = 1
ENDINGS = ("score", "resign", "move_cap", "illegal_move", "time")
SIDES = ("player", "opponent")
POINTS = {"player": 1.0, "draw": 0.5, "opponent": 0.0}  # a game's score from the player's side


@dataclass
class MatchSummary:
    """One results file of `minigo evaluate`, reduced to what ratings need."""

    url: str
    player: str
    opponent: str
    scores: list[float]  # per game, from the player's side: 1 win, 0.5 draw, 0 loss
    finished_unix: float | None
    move_time_ms: float | None = None  # the models' time budget per move (None: fixed readouts)
    reproducible: bool = True  # False: time-budgeted games, which a rerun does not replay

    @property
    def timed(self) -> bool:
        """Whether the models searched by a time budget per move (not the config's fixed readouts)."""
        return self.move_time_ms is not None

    @property
    def games(self) -> int:
        return len(self.scores)

    @property
    def win_rate(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else float("nan")


def read_match(url: str) -> MatchSummary:
    """Read a results file; ValueError naming the file if it is not one."""
    try:
        data = json.loads(storage.read_bytes(url))
        player = data["player"]["name"]
        opponent = data["opponent"]["name"]
        scores = [POINTS[game["winner"]] for game in data["games"]]
        check_time_fields(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"evaluation results file {url} is not readable as `minigo evaluate` output: {exc!r}"
        ) from exc
    finished = data.get("finished_unix")
    move_time = data.get("move_time_ms")
    return MatchSummary(
        url,
        player,
        opponent,
        scores,
        float(finished) if finished is not None else None,
        None if move_time is None else float(move_time),
        data.get("reproducible", True),
    )


def _number(value: object, what: str, positive: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    if not ok or (positive and value == 0):
        raise ValueError(
            f"{what} must be a {'positive' if positive else 'non-negative'} number, got {value!r}"
        )


def _check_side(times: object, what: str, cpu: bool) -> None:
    if not isinstance(times, dict):
        raise ValueError(f"{what} must be an object, got {times!r}")
    moves = times.get("moves")
    if isinstance(moves, bool) or not isinstance(moves, int) or moves < 0:
        raise ValueError(f"{what}.moves must be a count of moves, got {moves!r}")
    for key in ("mean_s", "p95_s", *(("cpu_s",) if cpu else ())):
        if times.get(key) is not None or (key != "cpu_s" and moves):
            _number(times.get(key), f"{what}.{key}")


def check_time_fields(data: dict) -> None:
    """ValueError naming the field when a results file's optional time fields (`move_times` per game,
    `time_per_move`, `move_time_ms`, `equal_time`, `reproducible`) are present but malformed; files without
    them pass."""
    if not isinstance(data.get("reproducible", True), bool):
        raise ValueError(f"reproducible must be true or false, got {data['reproducible']!r}")
    if data.get("move_time_ms") is not None:
        _number(data["move_time_ms"], "move_time_ms", positive=True)
        if data.get("reproducible", False) is not False:
            raise ValueError("a time-budgeted match (move_time_ms set) must say reproducible: false")
    equal = data.get("equal_time")
    if equal is not None:
        if not isinstance(equal, dict) or data.get("move_time_ms") is None:
            raise ValueError("equal_time must be an object, beside the move_time_ms it measured")
        _number(equal.get("opponent_mean_s"), "equal_time.opponent_mean_s")
        _number(equal.get("measured_over_moves"), "equal_time.measured_over_moves", positive=True)
        if equal.get("clock", "wall") not in ("cpu", "wall"):  # files from before the clock: wall
            raise ValueError(f"equal_time.clock must be cpu or wall, got {equal['clock']!r}")
    per_side = data.get("time_per_move")
    if per_side is not None:
        if not isinstance(per_side, dict) or set(per_side) != set(SIDES):
            raise ValueError(f"time_per_move must hold {SIDES}, got {per_side!r}")
        for side in SIDES:
            _check_side(per_side[side], f"time_per_move.{side}", cpu=True)
    for game in data["games"]:
        colours = game.get("move_times")
        if colours is not None:
            if not isinstance(colours, dict) or set(colours) != {"black", "white"}:
                raise ValueError(f"game {game.get('index')}: move_times must hold black and white")
            for colour in ("black", "white"):
                _check_side(colours[colour], f"game {game.get('index')} move_times.{colour}", cpu=False)


def find_matches(root: str) -> list[str]:
    """All finished results files `{root}/eval/gen*/vs_*.json` of a run."""
    eval_root = storage.join(root, "eval")  # every generation's eval/genGGGG/ folder
    urls = []
    for gen_dir in storage.list_files(eval_root):
        if not re.match(r"^gen\d+$", os.path.basename(gen_dir)):
            continue
        urls += [u for u in storage.list_files(gen_dir, ".json") if os.path.basename(u).startswith("vs_")]
    return urls
