"""A generation's games complete: every game file checked against its job's record, and the marker
(`games/genGGGG.complete.json`) that says so.

Every game file `games/genGGGG/gameIIIII.arrow` (I = 0 .. selfplay.games-1) is read and checked against the
SHA-256 its job's record (`games/genGGGG/jobJJJJJ.json`, `minigo_core.data.jobrecord`) gives. The
marker, which the window of the next W generations depends on (instead of depending on thousands of game
files), keeps game and position counts, results, game lengths and the resignation false-positive record of
the games played with resignation disabled. The job samples the windows' rows from the same bytes
(`check_game`, `data/parts.py`).
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

from minigo_core.base.config import RunConfig
from minigo_core.data import gamefile, jobrecord, layout, storage
from minigo_core.data.schedule import selfplay_job_count

log = logging.getLogger(__name__)


def game_summary(url: str, sha256: str | None = None) -> dict:
    """The few facts of one game the marker keeps; raises GameFileError for an unreadable file, or one whose
    SHA-256 is not `sha256` (the digest its job recorded).

    With `sha256`, a file whose bytes have that digest is the file its job wrote, whole: only its metadata
    is read (a third of the cost of decoding every game of a generation). Without it, the file is decoded
    and checked in full."""
    if sha256 is None:
        return _summary_of(gamefile.read_game_digest(url)[0].metadata)
    return checked_game(url, sha256)[0]


def checked_game(url: str, sha256: str) -> tuple[dict, bytes]:
    """`game_summary(url, sha256)` and the file's bytes, for a caller that decodes them next (the window
    parts, `data/parts.py`): the file is read once."""
    data = gamefile.read_game_bytes(url)
    if storage.sha256_bytes(data) != sha256:
        raise gamefile.GameFileError(f"game file {url} is not the file its job wrote (SHA-256 differs)")
    return _summary_of(gamefile.metadata_from_bytes(data, url)), data


def check_game(url: str, sha256: str | None) -> tuple[dict | str, bytes | None]:
    """`checked_game` of a game file, or (`path: reason`, None) for a bad one (`sha256` None: its job's
    record does not list it)."""
    if sha256 is None:
        return f"{url}: its job's record does not list it", None
    try:
        return checked_game(url, sha256)
    except (gamefile.GameFileError, OSError, KeyError, TypeError, ValueError) as exc:
        return f"{url}: {exc}", None


def _summary_of(meta: dict) -> dict:
    resign = meta.get("resign") or {}
    result = meta.get("result") or {}
    return {
        "moves": int(meta["num_moves"]),
        "positions": int(meta["num_positions"]),
        "winner": int(result.get("winner", 0)),
        "resigned": bool(result.get("resigned", False)),
        "resign_disabled": resign.get("enabled") is False,
        "would_resign": resign.get("would_resign_move") is not None,
        "false_positive": resign.get("false_positive") is True,
    }


def summarise(generation: int, games: list[dict], bad: list[str], expected: int) -> dict:
    """The marker's content: counts over the readable games of one generation."""
    lengths = [g["moves"] for g in games]
    disabled = [g for g in games if g["resign_disabled"]]
    would = [g for g in disabled if g["would_resign"]]
    false_positives = sum(g["false_positive"] for g in would)
    return {
        "generation": generation,
        "games": len(games),
        "games_expected": expected,
        "bad_files": bad,
        "positions": sum(g["positions"] for g in games),
        "black_wins": sum(g["winner"] == 1 for g in games),
        "white_wins": sum(g["winner"] == -1 for g in games),
        "draws": sum(g["winner"] == 0 for g in games),
        "resigned": sum(g["resigned"] for g in games),
        "mean_game_length": sum(lengths) / len(lengths) if lengths else None,
        "game_lengths": lengths,
        "resign_disabled_games": len(disabled),
        "resign_disabled_would_resign": len(would),
        "resign_false_positives": false_positives,
        # Of the resignation-disabled games in which a player fell below the threshold, the fraction that
        # player went on to win: how often resigning would have been wrong (MiniGo keeps this under ~5%).
        "resign_false_positive_rate": false_positives / len(would) if would else None,
    }


def recorded_digests(cfg: RunConfig, generation: int) -> tuple[dict[int, str], list[str]]:
    """game -> the SHA-256 its job's record gives; and `record: reason` for the unreadable records."""
    digests: dict[int, str] = {}
    problems = []
    for job in range(selfplay_job_count(cfg)):
        url = layout.selfplay_job_path(cfg.root, generation, job)
        try:
            record = jobrecord.read_record(url)
            digests.update({int(f["game"]): str(f["sha256"]) for f in record["files"]})
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(f"{url}: {exc}")
    return digests, problems


def expected_games(cfg: RunConfig, generation: int) -> list[tuple[int, str, str | None]]:
    """(game, path, the SHA-256 its job's record gives or None) of every game a generation should have."""
    digests, problems = recorded_digests(cfg, generation)
    for message in problems:
        log.warning("unreadable job record %s", message)
    return [(i, layout.game_path(cfg.root, generation, i), digests.get(i)) for i in range(cfg.selfplay.games)]


def read_games(cfg: RunConfig, generation: int, threads: int) -> tuple[list[dict], list[str]]:
    """The summaries of the good game files of a generation, and `path: reason` for the others."""
    games = expected_games(cfg, generation)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        results = list(pool.map(lambda game: check_game(game[1], game[2])[0], games))
    return [r for r in results if isinstance(r, dict)], [r for r in results if isinstance(r, str)]


def job_record_of(cfg: RunConfig, generation: int, game_url: str) -> str:
    """The record of the job that plays the game of `game_url` (`.../game00042.arrow`)."""
    game = int(game_url.rsplit("game", 1)[-1].split(".", 1)[0])
    return layout.selfplay_job_path(cfg.root, generation, game // cfg.selfplay.games_per_job)


def read_marker(root: str, generation: int) -> dict | None:
    """A generation's marker (None when the generation's games are not complete or the file is unreadable)."""
    try:
        with open(layout.complete_marker_path(root, generation), encoding="utf-8") as handle:
            marker = json.load(handle)
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def write_marker(url: str, marker: dict) -> None:
    storage.write_text(url, json.dumps(marker, indent=1) + "\n")
