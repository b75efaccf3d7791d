"""A run's scalars for TensorBoard (`{root}/tensorboard/`), converted from the files the run writes anyway.

`tensorboard --logdir {root}/tensorboard` shows them while the run goes: the job that writes a fact adds its
events file right after (`minigo_core/jobs/`), one file per kind and generation (`layout.tensorboard_path`).
Each kind is a folder of its own (a TensorBoard "run") that one kind of job writes, generation after
generation, the order in which TensorBoard reads the files of a folder:

    train/          `minigo train` (rank 0, after the model), one point per `step` record of `metrics.jsonl`
                    at its global step: train/loss_policy, train/loss_value, train/loss_ownership and
                    train/loss_score (a model with the auxiliary heads), train/loss_l2, train/loss_total,
                    train/policy_accuracy, train/learning_rate, train/examples_per_second
    selfplay/       `minigo games-complete`, step = generation: generation/games, generation/positions (the
                    marker), generation/selfplay_positions_per_second (the job records' clocks)
    eval/vs_SLUG/   `minigo evaluate` (a match file of the run): generation/winrate_SLUG
    ladder/         `minigo ladder rate` (`ladder.json`): generation/elo_fixed, generation/elo_fixed_low,
                    generation/elo_fixed_high (the 95% interval)
    ladder_first/   its first rating (`ladder_first.json`): generation/elo_fixed_first, ..._first_low,
                    ..._first_high

A file is written whole under a temporary name (without `tfevents`, so TensorBoard never reads one half
written) and renamed into place: a rerun job replaces its own file, nothing is appended. `rebuild` writes
every file again from the run's files (`minigo tensorboard`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from collections.abc import Callable
from typing import Any

from minigo_core.base.config import RunConfig
from minigo_core.data import layout, pack, storage
from minigo_core.data.games_complete import read_marker
from minigo_core.data.jobrecord import RECORD_FORMAT
from minigo_core.data.matchfile import find_matches, read_match
from minigo_core.data.schedule import selfplay_generations, selfplay_job_count
from minigo_core.report.tfevents import Point, events_bytes

log = logging.getLogger(__name__)

TRAIN_TAGS = {  # a `step` record's key in metrics.jsonl -> its tag
    "policy_loss": "train/loss_policy",
    "value_loss": "train/loss_value",
    "ownership_loss": "train/loss_ownership",
    "score_loss": "train/loss_score",
    "reply_loss": "train/loss_reply",
    "l2_loss": "train/loss_l2",
    "loss": "train/loss_total",
    "policy_accuracy": "train/policy_accuracy",
    "lr": "train/learning_rate",
    "examples_per_s": "train/examples_per_second",
}
AUX_KEYS = ("ownership_loss", "score_loss")  # 0 for a model without the auxiliary heads: no tag
REPLY_KEYS = ("reply_loss",)  # 0 for a model without the opponent-reply head: no tag
RATINGS = {"ladder": "generation/elo_fixed", "ladder_first": "generation/elo_fixed_first"}  # kind -> tag
_GEN = re.compile(r"^gen(\d{4,})$")


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _same_file(a: str, b: str) -> bool:
    """Whether two paths or URLs name the same file (`run/x/../y.json` and `/abs/run/y.json` do)."""
    (fa, pa), (fb, pb) = storage.fs_and_path(a), storage.fs_and_path(b)
    return fa.protocol == fb.protocol and os.path.normpath(pa) == os.path.normpath(pb)


def _generation_of(url: str) -> int | None:
    """G of a file in a folder `genGGGG` (`eval/gen0007/ladder.json`), else None."""
    m = _GEN.match(os.path.basename(os.path.dirname(storage.fs_and_path(url)[1])))
    return int(m.group(1)) if m else None


def write_events(root: str, kind: str, generation: int, points: list[Point]) -> str | None:
    """Write `points` as the events file of `kind` and `generation` (replacing it); its path, or None (and
    nothing written) without points."""
    if not points:
        return None
    url = layout.tensorboard_path(root, kind, generation)
    hidden = os.path.basename(url).replace(layout.TFEVENTS, "events")  # the temporary name's base
    storage.remove_stale_temporaries([storage.join(os.path.dirname(url), hidden)])  # a killed writer's
    storage.write_bytes(url, events_bytes(points), temporary_of=hidden)
    return url


# ---- training ----------------------------------------------------------------------------------------------
def train_points(
    records: list[dict], end_time: float, aux_heads: bool = True, reply_head: bool = False
) -> list[Point]:
    """One point per `step` record of a metrics.jsonl, at its global step (the last record of a step kept);
    wall times count back from `end_time` (the file's last write) by each interval's steps x `step_ms`."""
    steps = {
        r["global_step"]: r for r in records if r.get("event") == "step" and type(r.get("global_step")) is int
    }
    keys = [k for k in TRAIN_TAGS if (aux_heads or k not in AUX_KEYS) and (reply_head or k not in REPLY_KEYS)]
    points, wall, later = [], end_time, None
    for step in sorted(steps, reverse=True):
        record = steps[step]
        if later is not None:
            wall -= (later[0] - step) * (_number(later[1].get("step_ms")) or 0.0) / 1000.0
        values = {TRAIN_TAGS[k]: v for k in keys if (v := _number(record.get(k))) is not None}
        points.append(Point(step, wall, values))
        later = (step, record)
    return points[::-1]


def write_train(cfg: RunConfig, generation: int, metrics: str | None = None) -> str | None:
    """`train/`'s file of `generation` from its metrics.jsonl (`metrics`: the job's, None for the run's);
    None when `metrics` is not the run's file or holds no step."""
    run_metrics = layout.train_metrics_path(cfg.root, generation)
    if metrics is not None and not _same_file(metrics, run_metrics):
        return None
    records = storage.read_json_lines(run_metrics)
    end = storage.mtime(run_metrics) if records else None
    points = train_points(records, end or time.time(), cfg.model.aux_heads, cfg.model.reply_head)
    return write_events(cfg.root, "train", generation, points)


# ---- self-play ---------------------------------------------------------------------------------------------
def selfplay_speed(records: list[dict]) -> tuple[float | None, float | None]:
    """(positions per second, end) of a generation's self-play: the positions its jobs' last attempts played
    (not those kept from an earlier attempt) over the wall time from the first job's first game to the last
    job's end (epoch seconds); (None, None) without every job's clocks."""
    starts, ends, positions = [], [], 0
    for record in records:
        attempt = record.get("attempt") or {}
        clocks = [_number(attempt.get(k)) for k in ("process_start_epoch", "startup_s", "games_wall_s")]
        if None in clocks:
            return None, None
        started = clocks[0] + clocks[1]
        starts.append(started)
        ends.append(started + clocks[2])
        kept = set(attempt.get("kept_from_earlier_attempt") or [])
        positions += sum(
            int(f.get("positions", 0)) for f in record.get("files", []) if f.get("game") not in kept
        )
    if not records or max(ends) <= min(starts):
        return None, None
    return positions / (max(ends) - min(starts)), max(ends)


def _job_records(cfg: RunConfig, generation: int) -> list[dict]:
    """The job records of a generation, loose or packed; [] unless every one reads."""
    records = []
    for job in range(selfplay_job_count(cfg)):
        url = layout.selfplay_job_path(cfg.root, generation, job)
        try:
            record = json.loads(pack.read_member(url))
        except (OSError, ValueError):
            return []
        if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
            return []
        records.append(record)
    return records


def write_selfplay(
    cfg: RunConfig, generation: int, marker: dict | None = None, url: str | None = None
) -> str | None:
    """`selfplay/`'s file of `generation`: games and positions of its games-complete `marker` (written to
    `url`; None: the run's), positions per second of its job records; None without a marker, or when `url`
    is not the run's marker."""
    if url is not None and not _same_file(url, layout.complete_marker_path(cfg.root, generation)):
        return None
    marker = marker if marker is not None else read_marker(cfg.root, generation)
    if marker is None:
        return None
    speed, end = selfplay_speed(_job_records(cfg, generation))
    wall = end or storage.mtime(layout.complete_marker_path(cfg.root, generation)) or time.time()
    values = {
        "generation/games": _number(marker.get("games")),
        "generation/positions": _number(marker.get("positions")),
        "generation/selfplay_positions_per_second": speed,
    }
    values = {k: v for k, v in values.items() if v is not None}
    return write_events(cfg.root, "selfplay", generation, [Point(generation, wall, values)] if values else [])


# ---- evaluation --------------------------------------------------------------------------------------------
def write_match(root: str, url: str) -> str | None:
    """`eval/vs_SLUG/`'s file of G for a match file of the run (`eval/genGGGG/vs_SLUG.json`): its win rate
    as generation/winrate_SLUG at step G; None for a file elsewhere or a match of no game. ValueError names
    a file that is not a match file."""
    generation, name = _generation_of(url), os.path.basename(url)
    if generation is None or not (name.startswith("vs_") and name.endswith(".json")):
        return None
    slug = name[len("vs_") : -len(".json")]
    if not _same_file(url, layout.eval_path(root, generation, slug)):
        return None
    match = read_match(url)
    if not match.games:
        return None
    wall = match.finished_unix or storage.mtime(url) or time.time()
    point = Point(generation, wall, {f"generation/winrate_{slug}": match.win_rate})
    return write_events(root, layout.tensorboard_eval_kind(slug), generation, [point])


def write_rating(root: str, url: str) -> str | None:
    """`ladder/`'s (or `ladder_first/`'s) file of G for the run's `eval/genGGGG/ladder.json` (or
    `ladder_first.json`): the fixed-scale Elo and its 95% interval at step G; None for a file elsewhere or
    one without a finite rating."""
    generation = _generation_of(url)
    if generation is None:
        return None
    paths = {"ladder": layout.ladder_rating_path, "ladder_first": layout.ladder_first_rating_path}
    kind = next((k for k, path in paths.items() if _same_file(url, path(root, generation))), None)
    if kind is None:
        return None
    try:
        data = json.loads(storage.read_bytes(url))
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"ladder rating {url} is unreadable ({exc}); rerun `minigo ladder rate` for it"
        ) from None
    ci = data.get("ci95") if isinstance(data, dict) else None
    numbers = [_number(x) for x in [data.get("elo"), *ci]] if isinstance(ci, list) and len(ci) == 2 else []
    if len(numbers) != 3 or None in numbers:
        return None
    tag = RATINGS[kind]
    values = {tag: numbers[0], f"{tag}_low": numbers[1], f"{tag}_high": numbers[2]}
    point = Point(generation, storage.mtime(url) or time.time(), values)
    return write_events(root, kind, generation, [point])


# ---- for the jobs, and for a whole run ---------------------------------------------------------------------
def update(root: str, write: Callable[..., str | None], *args: Any) -> str | None:
    """`write(*args)` for a job of the run at `root` whose own outputs are written: a failure to read or write
    (a full disk, an unreadable input) is a warning saying what to do, not the job's failure."""
    try:
        return write(*args)
    except (OSError, ValueError) as exc:
        log.warning(
            "TensorBoard events not written (%s); the job's own outputs stand. `minigo tensorboard --root "
            "%s` writes them again from the run's files",
            exc,
            root,
        )
        return None


def rebuild(cfg: RunConfig) -> list[str]:
    """Every events file of the run again, from the files it has now; the paths written."""
    root, written = cfg.root, []
    for generation in range(cfg.generations + 1):
        if generation in selfplay_generations(cfg):
            written.append(write_selfplay(cfg, generation))
        if generation >= 1:
            written.append(write_train(cfg, generation))
        for path in (layout.ladder_first_rating_path, layout.ladder_rating_path):
            if storage.exists(path(root, generation)):
                written.append(write_rating(root, path(root, generation)))
    written += [write_match(root, url) for url in find_matches(root)]
    return [url for url in written if url is not None]
