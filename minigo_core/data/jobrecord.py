"""The self-play job record (`games/genGGGG/jobJJJJJ.json`): what one `minigo selfplay` job wrote.

One JSON object, written after the job's last game: `format` / `format_version`, the generation, the job's
first game and game count, the model (url, SHA-256), the engine, one entry per game file (`files`: game index,
file name, size, SHA-256, moves, positions, result) and `attempt` (this attempt's host, clocks and the games
it kept from an earlier attempt: wall-clock facts, the only part that differs between two runs). The
games-complete step checks every game file against the SHA-256 its job's record gives.

A game file's provenance (`provenance`) says which job would write it: the same model, seed, settings and
software write the same bytes, so a rerun job keeps such a file instead of playing its game again.
"""

from __future__ import annotations

import json

from minigo_core.data import storage

RECORD_FORMAT = "minigo-selfplay-job"
RECORD_VERSION = 1
# The metadata that makes a game file this job's game: the same file would be written again.
PROVENANCE_KEYS = ("format_version", "software_version", "board_size", "komi", "features", "seed")


def provenance(metadata: dict) -> dict:
    """The part of a game file's metadata that decides its bytes: `PROVENANCE_KEYS`, the model (SHA-256 and
    generation) and the search settings."""
    model = metadata.get("model") or {}
    search = dict(metadata.get("search") or {})
    search.pop("random_symmetry", None)  # the reference's depends on the evaluator, not on the config
    return {
        **{k: metadata.get(k) for k in PROVENANCE_KEYS},
        "model": (model.get("sha256"), model.get("generation")),
        "search": search,
    }


def file_entry(out: str, game: int, size: int, sha256: str, metadata: dict) -> dict:
    """A game file's entry in `files`: its index, name, size, SHA-256, moves, positions and result."""
    return {
        "game": int(game),
        "file": out.rsplit("/", 1)[-1],
        "bytes": int(size),
        "sha256": sha256,
        "moves": int(metadata["num_moves"]),
        "positions": int(metadata["num_positions"]),
        "result": metadata["result"]["string"],
    }


def make_record(
    *,
    generation: int,
    first_game: int,
    games: int,
    model_url: str,
    model_sha256: str,
    engine: str,
    files: list[dict],
    attempt: dict,
) -> dict:
    """A job record: what the job wrote (deterministic), then `attempt` (this attempt's host and clocks)."""
    return {
        "format": RECORD_FORMAT,
        "format_version": RECORD_VERSION,
        "generation": int(generation),
        "first_game": int(first_game),
        "games": int(games),
        "model": {"url": str(model_url), "sha256": model_sha256},
        "engine": engine,
        "files": files,
        "attempt": attempt,
    }


def write_record(url: str, record: dict) -> None:
    storage.write_text(url, json.dumps(record, indent=1) + "\n")


def read_record(url: str) -> dict:
    """A job record (`games/genGGGG/jobJJJJJ.json`); ValueError naming the file if it is not one."""
    try:
        record = json.loads(storage.read_bytes(url))
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"self-play job record {url} is unreadable ({exc}); delete it to rerun its job"
        ) from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"{url} is not a self-play job record (format {RECORD_FORMAT!r})")
    return record
