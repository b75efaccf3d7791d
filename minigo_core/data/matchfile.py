"""The match results file (`{root}/eval/genGGGG/vs_<opponent>.json`): what `minigo evaluate` writes and the
ratings, status and progress read.

One JSON object: `format` / `format_version`, the two players (`name`, ...), the settings, one record per game
(`winner` from the evaluated player's side: "player", "opponent" or "draw"; `ended_by`, one of `ENDINGS`) and
the totals. Readers need only the players' names and each game's winner.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from minigo_core.data import storage

MATCH_FORMAT = "minigo-match"
MATCH_FORMAT_VERSION = 1
ENDINGS = ("score", "resign", "move_cap", "illegal_move")
POINTS = {"player": 1.0, "draw": 0.5, "opponent": 0.0}  # a game's score from the player's side


@dataclass
class MatchSummary:
    """One results file of `minigo evaluate`, reduced to what ratings need."""

    url: str
    player: str
    opponent: str
    scores: list[float]  # per game, from the player's side: 1 win, 0.5 draw, 0 loss
    finished_unix: float | None

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
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"evaluation results file {url} is not readable as `minigo evaluate` output: {exc!r}"
        ) from exc
    finished = data.get("finished_unix")
    return MatchSummary(url, player, opponent, scores, float(finished) if finished is not None else None)


def find_matches(root: str) -> list[str]:
    """All finished results files `{root}/eval/gen*/vs_*.json` of a run."""
    eval_root = storage.join(root, "eval")  # every generation's eval/genGGGG/ folder
    urls = []
    for gen_dir in storage.list_files(eval_root):
        if not re.match(r"^gen\d+$", os.path.basename(gen_dir)):
            continue
        urls += [u for u in storage.list_files(gen_dir, ".json") if os.path.basename(u).startswith("vs_")]
    return urls
