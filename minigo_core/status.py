"""The state of a run from its files alone: what each generation has produced, and what to run next.

`minigo status ROOT` prints one line per generation (games done/total, window size, training loss, model,
evaluation win rate and Elo, wall times). The workflow (`workflow/rules/common.smk`) uses `plan()` to keep
Snakemake's DAG bounded: only the generations that are not done yet (plus at most `max_jobs` jobs' worth
of future generations) are planned, so planning costs the same at generation 100 as at generation 1.

Everything here reads small per-generation files with a few `stat`/`read` calls per generation; nothing
lists a directory of game files unless a generation has no `genGGGG.complete.json` marker yet.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minigo_core import storage
from minigo_core.config import ConfigError, RunConfig, load_config

EFFECTIVE_CONFIG = "config.yaml"  # the validated config of a run, written by the workflow into {root}
SUMMARY_DIR = "summary"
RATINGS_FILE = "elo.json"  # written by `minigo ratings --out-dir {root}/summary`


# ---------------------------------------------------------------------------------------------------------
# Paths the workflow adds to the run layout of `minigo_core.storage`.
def effective_config_path(root: str) -> str:
    return storage.join(root, EFFECTIVE_CONFIG)


def complete_marker_path(root: str, generation: int) -> str:
    """`games/genXXXX.complete.json`: written once every self-play game of the generation is verified.

    It sits next to the generation's game directory, not in it: Snakemake caches the listing of every
    directory holding an input file, and a directory of 8192 game files per generation would make that cost
    grow with the run's history.
    """
    return storage.join(root, "games", f"gen{generation:04d}.complete.json")


def opponent_slug(spec: str) -> str:
    """A file-name-safe form of an opponent spec: `gnugo:1` -> `gnugo-1`; model specs stay as they are."""
    return spec.replace(":", "-")


def opponent_spec(slug: str) -> str:
    """Inverse of `opponent_slug`."""
    return slug.replace("-", ":", 1) if slug.startswith("gnugo-") else slug


def eval_path(root: str, generation: int, spec: str) -> str:
    return storage.join(storage.eval_dir(root, generation), f"vs_{opponent_slug(spec)}.json")


def train_metrics_path(root: str, generation: int) -> str:
    return storage.join(storage.train_dir(root, generation), "metrics.jsonl")


# ---------------------------------------------------------------------------------------------------------
# What a generation consists of.
def selfplay_generations(cfg: RunConfig) -> range:
    """Generations whose models play self-play: 0 .. G-1 (the last model's games would train nothing)."""
    return range(0, cfg.generations)


def opponent_specs(cfg: RunConfig) -> list[str]:
    """Every configured opponent spec (`evaluate.opponents`, then `evaluate.target`), duplicates removed."""
    specs: list[str] = []
    for spec in (*cfg.evaluate.opponents, cfg.evaluate.target):
        if spec.startswith("gen") and spec[3:].isdigit() and int(spec[3:]) > cfg.generations:
            raise ConfigError(
                f"config key 'evaluate' names opponent {spec!r}, but the run has only "
                f"{cfg.generations} generations (config key 'generations')"
            )
        if spec not in specs:
            specs.append(spec)
    return specs if cfg.evaluate.games > 0 else []


def _opponent_key(spec: str, generation: int) -> str:
    other = opponent_generation(spec, generation)
    return spec if other is None else f"gen{other}"


def evaluation_specs(cfg: RunConfig, generation: int) -> list[str]:
    """The matches of `generation`: one per distinct opponent (at generation 1 `previous` is `gen0`: one
    match, named after the spec listed first); none for generation 0 and none against itself."""
    if generation < 1:
        return []
    seen = {f"gen{generation}"}
    specs = []
    for spec in opponent_specs(cfg):
        key = _opponent_key(spec, generation)
        if key not in seen:
            seen.add(key)
            specs.append(spec)
    return specs


def evaluation_files(cfg: RunConfig, generation: int) -> list[str]:
    """The results files of `generation`'s matches."""
    return [eval_path(cfg.root, generation, spec) for spec in evaluation_specs(cfg, generation)]


def evaluation_file(cfg: RunConfig, generation: int, spec: str) -> str | None:
    """The results file holding `generation` against `spec` (shared by specs naming the same opponent)."""
    key = _opponent_key(spec, generation)
    for played in evaluation_specs(cfg, generation):
        if _opponent_key(played, generation) == key:
            return eval_path(cfg.root, generation, played)
    return None


def opponent_generation(spec: str, generation: int) -> int | None:
    """The generation whose model file an opponent spec needs (None for GNU Go and the random player)."""
    if spec == "previous":
        return generation - 1
    if spec.startswith("gen") and spec[3:].isdigit():
        return int(spec[3:])
    return None


def generation_outputs(cfg: RunConfig, generation: int) -> list[str]:
    """The files that make `generation` done: its model, its games-complete marker, its evaluations."""
    root = cfg.root
    files = [storage.model_path(root, generation)]
    if generation in selfplay_generations(cfg):
        files.append(complete_marker_path(root, generation))
    return files + evaluation_files(cfg, generation)


def jobs_per_generation(cfg: RunConfig) -> int:
    """Jobs one generation adds to the DAG: self-play games, games-complete, window, train, evaluations."""
    return cfg.selfplay.games + 3 + len(opponent_specs(cfg))


# ---------------------------------------------------------------------------------------------------------
# The bounded plan.
@dataclass(frozen=True)
class Plan:
    """Generations one Snakemake invocation works on.

    `first..last` get every rule (bootstrap/window/train/self-play/games-complete/evaluate); generations
    below `first` are finished and appear only as existing input files, so the DAG never reaches into
    them. `late_evaluations` are older generations that are done except for some evaluation files (an
    evaluation that failed while the run went on): only their evaluate jobs are planned.
    """

    first: int
    last: int
    generations: int
    late_evaluations: tuple[int, ...] = ()
    explicit: bool = False

    @property
    def planned(self) -> range:
        return range(self.first, self.last + 1)

    @property
    def finished(self) -> bool:
        return self.first > self.generations and not self.late_evaluations

    @property
    def complete_run(self) -> bool:
        """True when this plan reaches the run's last generation (no further invocation is needed)."""
        return self.last >= self.generations

    def describe(self) -> str:
        if self.finished:
            return f"all {self.generations} generations are done"
        parts = []
        if self.first <= self.last:
            parts.append(f"generations {self.first}..{self.last} of {self.generations}")
        if self.late_evaluations:
            parts.append("late evaluations of generations " + ",".join(map(str, self.late_evaluations)))
        return "; ".join(parts)


def _missing(paths: list[str]) -> list[str]:
    return [p for p in paths if not os.path.exists(p)]


def frontier(cfg: RunConfig) -> tuple[int, tuple[int, ...]]:
    """The first generation whose model or games are missing, and the older ones missing evaluations.

    Costs a few `stat` calls per finished generation (no directory listing).
    """
    late = []
    for g in range(0, cfg.generations + 1):
        outputs = generation_outputs(cfg, g)
        critical = outputs[:2] if g in selfplay_generations(cfg) else outputs[:1]
        if _missing(critical):
            return g, tuple(late)
        if _missing(outputs[len(critical) :]):
            late.append(g)
    return cfg.generations + 1, tuple(late)


def plan(cfg: RunConfig, first: int | None = None, last: int | None = None, max_jobs: int = 10000) -> Plan:
    """The generations to put into the DAG.

    Defaults: from the first unfinished generation to as many generations as fit `max_jobs` jobs (at least
    one), capped at the run's last generation. `first`/`last` given explicitly (to rerun a generation) are
    taken as they are, after checking that the generations before `first` are finished.
    """
    G = cfg.generations
    auto_first, late = frontier(cfg)
    if first is None:
        start = auto_first
    else:
        if not 0 <= first <= G:
            raise ConfigError(f"config key 'first_generation' = {first} is out of range; allowed: 0..{G}")
        if first > auto_first:
            raise ConfigError(
                f"config key 'first_generation' = {first}, but generation {auto_first} is not finished "
                f"(missing: {', '.join(_missing(generation_outputs(cfg, auto_first))[:3])}); "
                f"run generations from {auto_first} first"
            )
        start = first
    horizon = max(1, max_jobs // max(1, jobs_per_generation(cfg)))
    end = min(G, start + horizon - 1)
    if last is not None:
        if not start <= last <= G:
            raise ConfigError(f"config key 'last_generation' = {last} is out of range; allowed: {start}..{G}")
        end = last if first is not None else min(end, last)
    late = tuple(g for g in late if g < start)
    return Plan(first=start, last=end, generations=G, late_evaluations=late, explicit=first is not None)


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
    elo: float | None = None
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
    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None, None
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
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
    directory = storage.games_dir(root, generation)
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
    from minigo_core.ratings import read_match  # numpy; imported only when a run is inspected

    try:
        match = read_match(path)
    except ValueError:
        return None
    return match.win_rate if match.games else None


def read_elo(root: str) -> dict[int, float]:
    """Elo per generation from `{root}/summary/elo.json` (empty if the summary is not written yet)."""
    data = _read_json(storage.join(root, SUMMARY_DIR, RATINGS_FILE))
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
        model = storage.model_path(root, g)
        row.model_time = _mtime(model)
        if row.model_time is not None:
            row.model = os.path.relpath(model, root)
        if g in selfplay_generations(cfg):
            row.games_total = cfg.selfplay.games
            marker = _read_json(complete_marker_path(root, g))
            if isinstance(marker, dict):
                row.games_complete = True
                row.games_done = int(marker.get("games", 0))
                row.mean_game_length = _number(marker, "mean_game_length")
                row.resign_false_positive_rate = _number(marker, "resign_false_positive_rate")
                finished = _mtime(complete_marker_path(root, g))
                if finished is not None and row.model_time is not None:
                    row.selfplay_seconds = max(0.0, finished - row.model_time)
            else:
                row.games_done = _count_games(root, g, cfg.selfplay.games)
        if g >= 1:
            manifest = _read_json(storage.window_manifest_path(root, g))
            if isinstance(manifest, dict):
                positions = _number(manifest, "rows")
                row.window_positions = int(positions) if positions is not None else None
                skipped = manifest.get("skipped")
                if isinstance(skipped, list):
                    row.window_skipped = [s for s in skipped if isinstance(s, dict)]
                started = _mtime(storage.window_manifest_path(root, g))
                if started is not None and row.model_time is not None:
                    row.train_seconds = max(0.0, row.model_time - started)
            step, end = _last_metrics(train_metrics_path(root, g))
            row.loss = _number(step, "loss")
            row.policy_loss = _number(step, "policy_loss")
            row.value_loss = _number(step, "value_loss")
            steps = _number(step, "global_step")
            row.train_steps = int(steps) if steps is not None else None
            for spec in opponent_specs(cfg):
                path = evaluation_file(cfg, g, spec)
                rate = win_rate(path) if path else None
                if rate is not None:
                    row.win_rates[spec] = rate
        row.elo = elo.get(g)
        rows.append(row)
    return rows


def _fmt(value: float | None, spec: str, width: int) -> str:
    return (format(value, spec) if value is not None else "-").rjust(width)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_table(cfg: RunConfig, rows: list[GenerationStatus]) -> str:
    """The `minigo status` table: one line per generation."""
    start = rows[0].model_time if rows and rows[0].model_time is not None else None
    specs = opponent_specs(cfg)
    head = ["gen", "games", "window", "loss", "model"] + [f"vs {s}" for s in specs]
    head += ["elo", "train", "selfplay", "elapsed"]
    lines = [
        f"run {cfg.root}: {cfg.board_size}x{cfg.board_size}, {cfg.model.blocks}x{cfg.model.filters} net, "
        f"{cfg.selfplay.games} games/generation, window {cfg.window.generations} generations, "
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
        ]
        cells += [_fmt(row.win_rates.get(s), ".2f", 0) for s in specs]
        elapsed = row.model_time - start if (start is not None and row.model_time is not None) else None
        cells += [
            _fmt(row.elo, ".0f", 0),
            _duration(row.train_seconds),
            _duration(row.selfplay_seconds),
            _duration(elapsed),
        ]
        table.append(cells)
    widths = [max(len(head[i]), *(len(r[i]) for r in table)) for i in range(len(head))]
    lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    lines.append("(* games still being played; elapsed = model file time since generation 0's model)")
    for row in rows:
        if row.window_skipped:
            lines.append(
                f"generation {row.generation}: the window skipped {len(row.window_skipped)} bad game files:"
            )
            lines += [f"  {s.get('path')}: {s.get('reason')}" for s in row.window_skipped]
    return "\n".join(lines)


def load_run_config(root: str) -> RunConfig:
    """The effective config a run was started with (`{root}/config.yaml`), its root set to `root`."""
    path = Path(effective_config_path(root))
    if not path.exists():
        raise ConfigError(
            f"{path} not found: is {root} a run directory? (the workflow writes config.yaml there first)"
        )
    cfg = load_config(path)
    return RunConfig(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, "root": str(root)})


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="minigo status", description="One line per generation of a run, from its files alone."
    )
    parser.add_argument("root", help="the run directory (config key 'root')")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines instead")
    args = parser.parse_args(argv)
    try:
        cfg = load_run_config(args.root)
    except ConfigError as exc:
        print(f"minigo status: {exc}", file=sys.stderr)
        return 2
    rows = collect(cfg)
    if args.json:
        for row in rows:
            print(json.dumps(row.__dict__, sort_keys=True))
    else:
        print(format_table(cfg, rows))
        p = plan(cfg)
        print(f"next: {p.describe()}" + ("" if p.finished else f" (as of {time.strftime('%H:%M:%S')})"))
    return 0
