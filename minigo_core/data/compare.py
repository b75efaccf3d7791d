"""Are two runs the same run? The one answer, used by `tools/compare_runs.py` and the chaos run.

Every file under a run's root is an artifact, except the files that are not (`SKIPPED`: logs, summaries that
hold nothing but wall-clock facts, TensorBoard's events files, a copy of other artifacts' facts) and temporary
files (`storage.is_temporary`: a write in progress, or one a killed process left behind). An artifact that
records wall-clock time next to deterministic content (`WALL_CLOCK`) is compared as data -- JSON, JSON lines
or CSV -- with those fields removed at any depth; every other artifact byte for byte: game files, shards,
model files, the effective config, the games-complete markers, the plots. A match file that says
`"reproducible": false` (a match at a time budget per move: its games depend on the machine's speed and load)
is compared by what was asked of it alone (`match_request`: the players, the settings, the games planned), not
by the games it played. A generation's pack (`data/pack.py`) is compared member by member under the same rules
(its logs skipped, its job records without their wall-clock fields). Both runs must have the same root path:
the root is part of the config and so of every game file's seed record.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minigo_core.data import layout, pack, storage


def _pattern(path: str) -> str:
    """A `layout` path built on the root "" with `*` wildcards, as a pattern relative to the run root."""
    return path.lstrip("/")


def _summary(name: str) -> str:
    return _pattern(layout.summary_path("", name))


# Files of a run that are not artifacts, or hold nothing but wall-clock facts: never compared.
SKIPPED = (
    _pattern(layout.logs_dir("", "*")),
    _summary(layout.STATUS_FILE),  # `minigo status`: elapsed times, "as of" clock time
    _summary(layout.TIME_TO_TARGET_FILE),  # wall time to the target by definition
    _summary(layout.WINRATE_PLOT),  # win rate against wall-clock hours
    _summary(layout.LEARNING_CURVE_PLOT),  # fixed-scale Elo against wall time (and self-play positions)
    _summary(layout.REPORT_FILE),  # Snakemake's report: job runtimes, and the two plots above
    layout.RUN_LOCK,  # who runs the root now (host, pid), while `minigo run` runs
    _pattern(layout.tensorboard_dir("")) + "/*",  # TensorBoard's copy of the facts above, with wall times
)
# Artifacts that record wall-clock time next to deterministic content: compared with these keys (JSON, at
# any depth) or columns (CSV) removed.
WALL_CLOCK = {
    # a self-play job's record: this attempt's host, clocks, kept games
    _pattern(layout.selfplay_job_path("", "*", "*")): {"attempt"},
    _pattern(layout.window_manifest_path("", "*")): {"timings", "peak_rss_mb"},
    _pattern(layout.parts_manifest_path("", "*")): {"timings"},  # a generation's window parts
    _pattern(layout.train_metrics_path("", "*")): {
        "load_s",
        "examples_per_s",
        "step_ms",
        "data_wait_ms",
        "wall_s",
        "data_wait_s_per_rank",
        "first_batch_wait_s_per_rank",
        "data_wait_fraction",
        "resumed_from_step",
        "start_step",
        "steps_run",  # this attempt's steps: fewer in a job resumed from a checkpoint
        "nodes",  # where the ranks ran: a retry after a lost node runs elsewhere
    },  # fmt: skip
    _pattern(layout.eval_path("", "*", "*")): {
        "started_unix",
        "finished_unix",
        "started_at",
        "finished_at",
        "wall_seconds",
        "cpu_seconds",
        "startup_cpu_seconds",
        "seconds",
        "wall_time_s",
        "move_times",  # each game's genmove wall times per colour
        "time_per_move",  # the match's per side: wall times and CPU seconds
    },  # fmt: skip
    _pattern(layout.ladder_rating_path("", "*")): {
        "date",
        "wall_seconds",
        "cpu_seconds",
        "startup_cpu_seconds",
    },  # `minigo ladder rate --out`
    _pattern(layout.ladder_first_rating_path("", "*")): {
        "date",
        "wall_seconds",
        "cpu_seconds",
        "startup_cpu_seconds",
    },  # the first rating: the same command with fewer games
    _summary(layout.RATINGS_FILE): {"model_time_s", "evaluated_time_s"},
    _summary(layout.RATINGS_CSV): {"model_time_s", "evaluated_time_s"},
}


@dataclass(frozen=True)
class Difference:
    """One way two runs differ: an artifact only in the first run (`missing`), only in the second
    (`extra`), with other bytes (`bytes`), or with other data once its wall-clock fields are left out
    (`data`)."""

    rel: str  # the artifact's path relative to the run root
    kind: str  # missing, extra, bytes, data


def artifacts(root: Path) -> dict[str, Path]:
    """Every artifact of the run at `root` (relative path -> path), sorted: no skipped or temporary file."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            if not storage.is_temporary(rel) and not any(fnmatch.fnmatch(rel, p) for p in SKIPPED):
                out[rel] = path
    return out


MATCHES = _pattern(layout.eval_path("", "*", "*"))
REQUEST = ("format", "format_version", "generation", "board_size", "komi", "readouts", "softpick_moves",
           "resign_threshold", "max_moves", "max_readouts", "seed", "early_stop", "reproducible")  # fmt: skip


def match_request(data: Any) -> Any:
    """What a match file that is not reproducible (`"reproducible": false`) was asked to play: the players
    (name, spec, kind), the settings of `REQUEST`, the games planned and, unless it was measured on the
    machine (`equal_time`), the time budget per move; `data` itself for any other file."""
    if not isinstance(data, dict) or data.get("reproducible", True) is not False:
        return data
    out = {k: data.get(k) for k in REQUEST}
    for side in ("player", "opponent"):
        out[side] = {k: (data.get(side) or {}).get(k) for k in ("name", "spec", "kind")}
    out["games_planned"] = (data.get("totals") or {}).get("games_planned")
    out["equal_time"] = "equal_time" in data
    if "equal_time" not in data:
        out["move_time_ms"] = data.get("move_time_ms")
    return out


def wall_clock_fields(rel: str) -> frozenset[str] | None:
    """The fields left out when comparing the artifact `rel`; None: it is compared byte for byte."""
    keys = next((k for pattern, k in WALL_CLOCK.items() if fnmatch.fnmatch(rel, pattern)), None)
    return None if keys is None else frozenset(keys)


def strip(value: Any, keys: frozenset[str] | set[str]) -> Any:
    """`value` without the fields `keys`, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [strip(v, keys) for v in value]
    return value


def load_structured(path: Path, data: bytes | None = None) -> Any:
    """A JSON, JSON-lines or CSV artifact (or its bytes `data`) as plain data (JSON lines: a list; CSV: a
    list of row dicts)."""
    text = path.read_text() if data is None else data.decode()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(text, newline="")))
    return json.loads(text)


PACKS = _pattern(layout.pack_path("", "*"))


def same_bytes(rel: str, a: bytes, b: bytes) -> bool:
    """Whether two versions of the artifact `rel`, given as bytes, are the same (see `same_artifact`)."""
    keys = wall_clock_fields(rel)
    if keys is None:
        return a == b
    da, db = load_structured(Path(rel), a), load_structured(Path(rel), b)
    if fnmatch.fnmatch(rel, MATCHES):
        da, db = match_request(da), match_request(db)
    return strip(da, keys) == strip(db, keys)


def pack_differences(a: Path, b: Path) -> list[str]:
    """The members of two versions of a generation's pack that differ (`path: kind`); logs left out."""
    pa, pb = pack.Pack(str(a)), pack.Pack(str(b))
    out = [f"{rel}: missing" for rel in pa.paths if rel not in pb and not _skipped(rel)]
    out += [f"{rel}: extra" for rel in pb.paths if rel not in pa and not _skipped(rel)]
    for rel in pa.paths:
        if rel in pb and not _skipped(rel) and not same_bytes(rel, pa.read(rel), pb.read(rel)):
            out.append(f"{rel}: {'bytes' if wall_clock_fields(rel) is None else 'data'}")
    return out


def _skipped(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, p) for p in SKIPPED)


def same_artifact(rel: str, a: Path, b: Path) -> bool:
    """Whether two versions of the artifact `rel` are the same: byte for byte, or as data without their
    wall-clock fields; a pack member by member."""
    if fnmatch.fnmatch(rel, PACKS):
        return not pack_differences(a, b)
    return same_bytes(rel, a.read_bytes(), b.read_bytes())


def differences(a: Path, b: Path) -> list[Difference]:
    """Every way the run at `b` differs from the run at `a` (empty: the same run): the artifacts of `a` in
    order (missing from `b`, or different), then those only in `b`."""
    ra, rb = artifacts(a), artifacts(b)
    out = []
    for rel, path in ra.items():
        if rel not in rb:
            out.append(Difference(rel, "missing"))
        elif not same_artifact(rel, path, rb[rel]):
            out.append(Difference(rel, "bytes" if wall_clock_fields(rel) is None else "data"))
    return out + [Difference(rel, "extra") for rel in rb if rel not in ra]
