"""The state of a run from its files alone: what each generation has produced, and what to run next.

`collect` reads one `GenerationStatus` per generation (games done/total, window size, training loss, model,
the fixed-scale Elo of `eval/genGGGG/ladder.json` (or, until it is written, of its first rating
`ladder_first.json`), evaluation win rates, wall times); `format_table` is the table `minigo status` prints
and `minigo plots` writes to `status.txt`, `fixed_scale_summary` the strength table `minigo run` ends with;
`describe_next` says which generations are not done yet (`data.schedule.frontier`).

Everything here reads small per-generation files with a few `stat`/`read` calls per generation; nothing
lists a directory of game files unless a generation has no `genGGGG.complete.json` marker yet.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minigo_core.base.config import ConfigError, RunConfig, load_config
from minigo_core.data import layout, storage
from minigo_core.data.games_complete import read_marker
from minigo_core.data.matchfile import read_match
from minigo_core.data.schedule import evaluation_file, frontier, opponent_specs, selfplay_generations
from minigo_core.report import fixed_scale


# ---------------------------------------------------------------------------------------------------------
# Reading a run back for people.
@dataclass
class GenerationStatus:
    generation: int
    games_done: int = 0
    games_total: int = 0
    games_complete: bool = False
    window_positions: int | None = None
    loss: float | None = None
    policy_loss: float | None = None
    value_loss: float | None = None
    train_steps: int | None = None
    model: str | None = None
    win_rates: dict[str, float] = field(default_factory=dict)
    elo: float | None = None  # run-relative Bradley-Terry (summary/elo.json, anchor gen0000 = 0)
    ladder: tuple[float, float] | None = None  # fixed-scale Elo, 95% half-width (eval/genGGGG/ladder.json)
    ladder_first: bool = False  # `ladder` is the first, quick rating (ladder_first.json): the full one is due
    ladder_between: str = ""  # the bracketing rungs (`between uct:512 and gnugo:1+r20`)
    mean_game_length: float | None = None
    resign_false_positive_rate: float | None = None
    model_time: float | None = None  # mtime of the model file (epoch seconds)
    train_seconds: float | None = None
    selfplay_seconds: float | None = None
    window_skipped: list[dict] = field(default_factory=list)  # game files the window skipped, with reasons


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _last_metrics(path: str) -> tuple[dict | None, dict | None]:
    """The last training-step record and the end-of-training record of a metrics.jsonl file."""
    step = end = None
    for record in storage.read_json_lines(path):
        if record.get("event") == "end":
            end = record
        elif "loss" in record:
            step = record
    return step, end


def _number(record: dict | None, *keys: str) -> float | None:
    if not record:
        return None
    for key in keys:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def _count_games(root: str, generation: int, planned: int) -> int:
    """Game files of the planned self-play jobs written so far (`game00000.arrow` .. `game{planned-1}`).

    Other `.arrow` files in the folder (copied in, left from another config) are not this generation's games.
    Only names are looked at: the games-complete job reads and checks every file.
    """
    directory = layout.games_dir(root, generation)
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    count = 0
    for name in names:
        match = re.fullmatch(r"game(\d+)\.arrow", name)
        if match and int(match.group(1)) < planned:
            count += 1
    return count


def win_rate(path: str) -> float | None:
    """Win rate of the evaluated model in a `minigo evaluate` results file (None if absent or unreadable)."""
    if not os.path.exists(path):
        return None

    try:
        match = read_match(path)
    except ValueError:
        return None
    return match.win_rate if match.games else None


def read_elo(root: str) -> dict[int, float]:
    """Elo per generation from `{root}/summary/elo.json` (empty if the summary is not written yet)."""
    data = _read_json(layout.ratings_path(root))
    out: dict[int, float] = {}
    if not isinstance(data, dict):
        return out
    players = data.get("ratings", data.get("players", data))
    if isinstance(players, dict):
        items = players.items()
    elif isinstance(players, list):
        items = ((p.get("player", p.get("name")), p) for p in players if isinstance(p, dict))
    else:
        return out
    for name, value in items:
        match = re.fullmatch(r"gen(\d+)", str(name))
        elo = value.get("elo") if isinstance(value, dict) else value
        if match and isinstance(elo, (int, float)):
            out[int(match.group(1))] = float(elo)
    return out


def collect(cfg: RunConfig) -> list[GenerationStatus]:
    """One `GenerationStatus` per generation 0..G, from the run's files."""
    root = cfg.root
    elo = read_elo(root)
    rows = []
    for g in range(0, cfg.generations + 1):
        row = GenerationStatus(generation=g)
        model = layout.model_path(root, g)
        row.model_time = _mtime(model)
        if row.model_time is not None:
            row.model = os.path.relpath(model, root)
        if g in selfplay_generations(cfg):
            row.games_total = cfg.selfplay.games
            marker = read_marker(root, g)
            if isinstance(marker, dict):
                row.games_complete = True
                row.games_done = int(marker.get("games", 0))
                row.mean_game_length = _number(marker, "mean_game_length")
                row.resign_false_positive_rate = _number(marker, "resign_false_positive_rate")
                finished = _mtime(layout.complete_marker_path(root, g))
                if finished is not None and row.model_time is not None:
                    row.selfplay_seconds = max(0.0, finished - row.model_time)
            else:
                row.games_done = _count_games(root, g, cfg.selfplay.games)
        if g >= 1:
            manifest = _read_json(layout.window_manifest_path(root, g))
            if isinstance(manifest, dict):
                positions = _number(manifest, "rows")
                row.window_positions = int(positions) if positions is not None else None
                skipped = manifest.get("skipped")
                if isinstance(skipped, list):
                    row.window_skipped = [s for s in skipped if isinstance(s, dict)]
                started = _mtime(layout.window_manifest_path(root, g))
                if started is not None and row.model_time is not None:
                    row.train_seconds = max(0.0, row.model_time - started)
            step, end = _last_metrics(layout.train_metrics_path(root, g))
            row.loss = _number(step, "loss")
            row.policy_loss = _number(step, "policy_loss")
            row.value_loss = _number(step, "value_loss")
            steps = _number(step, "global_step")
            row.train_steps = int(steps) if steps is not None else None
            for spec in opponent_specs(cfg):
                path = evaluation_file(cfg, g, spec)
                rate = win_rate(path) if path else None
                if rate is not None:
                    row.win_rates[spec.text] = rate
            rating = fixed_scale.generation_rating(root, g)
            if rating is not None:
                row.ladder = (float(rating["elo"]), (rating["ci95"][1] - rating["ci95"][0]) / 2.0)
                row.ladder_first = bool(rating.get("first"))
                row.ladder_between = fixed_scale.between(rating)
        row.elo = elo.get(g)
        rows.append(row)
    return rows


def _fmt(value: float | None, spec: str, width: int) -> str:
    return (format(value, spec) if value is not None else "-").rjust(width)


def format_duration(seconds: float | None) -> str:
    """`m:ss` below an hour, `h:mm:ss` above (negative or non-finite durations count as 0); `-` for None."""
    if seconds is None:
        return "-"
    total = max(0, int(round(seconds))) if math.isfinite(seconds) else 0
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _window_text(cfg: RunConfig) -> str:
    """`window W generations`; with `window.generations_schedule`, `window 2 generations (4 from generation
    5, ...)`."""
    pairs = cfg.window.generations_schedule
    if pairs is None:
        return f"window {cfg.window.generations} generations"
    later = ", ".join(f"{n} from generation {at}" for at, n in pairs[1:])
    return f"window {pairs[0][1]} generations" + (f" ({later})" if later else "")


def format_table(cfg: RunConfig, rows: list[GenerationStatus]) -> str:
    """The `minigo status` table: one line per generation."""
    start = rows[0].model_time if rows and rows[0].model_time is not None else None
    specs = opponent_specs(cfg)
    rungs = dict(fixed_scale.ladder_rungs(cfg.board_size) or [])
    head = ["gen", "games", "window", "loss", "model", "elo (fixed)", "bracket"]
    head += [f"vs {s.text}" + (f" ({rungs[s.text]:.0f})" if s.text in rungs else "") for s in specs]
    head += ["train", "selfplay", "elapsed"]
    lines = [
        f"run {cfg.root}: {cfg.board_size}x{cfg.board_size}, {cfg.model.blocks}x{cfg.model.filters} net, "
        f"{cfg.selfplay.games} games/generation in jobs of {cfg.selfplay.games_per_job}, "
        f"{_window_text(cfg)}, "
        f"target {cfg.evaluate.target}",
    ]
    table = []
    for row in rows:
        games = (
            f"{row.games_done}/{row.games_total}" + ("" if row.games_complete else "*")
            if row.games_total
            else "-"
        )
        cells = [
            str(row.generation),
            games,
            (str(row.window_positions) if row.window_positions is not None else "-")
            + (f" ({len(row.window_skipped)} skipped)" if row.window_skipped else ""),
            _fmt(row.loss, ".3f", 0),
            row.model or "-",
            f"{row.ladder[0]:.0f} +-{row.ladder[1]:.0f}" + ("~" if row.ladder_first else "")
            if row.ladder
            else "",
            row.ladder_between.removeprefix("between ").replace(" and ", " - "),
        ]
        cells += [_fmt(row.win_rates.get(s.text), ".2f", 0) for s in specs]
        elapsed = row.model_time - start if (start is not None and row.model_time is not None) else None
        cells += [
            format_duration(row.train_seconds),
            format_duration(row.selfplay_seconds),
            format_duration(elapsed),
        ]
        table.append(cells)
    widths = [max(len(head[i]), *(len(r[i]) for r in table)) for i in range(len(head))]
    lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    lines.append(
        "(* games still being played; elo (fixed) = on the fixed Elo ladder, 95% half-width, ~ a first"
        " rating of a few games; vs X (E): win rate, E = X's Elo on the ladder; elapsed = model file time"
        " since generation 0's model)"
    )
    for row in rows:
        if row.window_skipped:
            lines.append(
                f"generation {row.generation}: the window skipped {len(row.window_skipped)} bad game files:"
            )
            lines += [f"  {s.get('path')}: {s.get('reason')}" for s in row.window_skipped]
    return "\n".join(lines)


def load_run_config(root: str) -> RunConfig:
    """The effective config a run was started with (`{root}/config.yaml`), its root set to `root`."""
    path = Path(layout.effective_config_path(root))
    if not path.exists():
        raise ConfigError(
            f"{path} not found: is {root} a run directory? (the workflow writes config.yaml there first)"
        )
    cfg = load_config(path)
    return RunConfig(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, "root": str(root)})


def describe_next(cfg: RunConfig) -> tuple[str, bool]:
    """What is left to do, and whether the run is finished: `generation F of G` (the first generation not
    done yet), `late evaluations of generations A,B` (older ones missing only evaluation files), or
    `all G generations are done`."""
    first, late = frontier(cfg)
    if first > cfg.generations and not late:
        return f"all {cfg.generations} generations are done", True
    parts = []
    if first <= cfg.generations:
        parts.append(f"generation {first} of {cfg.generations}")
    if late:
        parts.append("late evaluations of generations " + ",".join(map(str, late)))
    return "; ".join(parts), False


def fixed_scale_summary(cfg: RunConfig) -> str:
    """The strength table `minigo run` ends with: each evaluated generation on the fixed Elo ladder
    (`fixed_scale.format_summary`), the newest placed against the GNU Go levels the run played."""
    gnugo = [s.text for s in opponent_specs(cfg) if s.kind == "gnugo"]
    ratings = fixed_scale.read_ratings(cfg.root)
    return fixed_scale.format_summary(
        ratings, fixed_scale.ladder_rungs(cfg.board_size), cfg.board_size, gnugo
    )
