"""`python -m minigo_core.bench ablation --spec config/ablation/hour.yaml`: an ablation at equal wall time.

Every row of the spec is a real run (`minigo run`, the local profile, this machine's cores) of the spec's
`base` file with the spec's `common` keys and the row's `set` keys merged over it, stopped after
`budget_minutes` of wall time (SIGINT to the run's process group: Snakemake stops its jobs and marks their
outputs incomplete). The row's result is its last finished model (`{root}/ROW/row_result.json`, the run in
`{root}/ROW/run`). The base states every key of the run config (a frozen copy of config.yaml as the spec's
table was measured with, config/ablation/base-*.yaml; `load_spec` refuses one that does not), so a later
change to config.yaml changes no row: the command reruns the rows of its committed table.

Then, with a `rating:` section in the spec, every row's last model is rated on the project's fixed Elo ladder
of its board size (`minigo ladder rate`, the scale the run's own ratings are on: anchor gnugo:10 = 1800), with
the same settings and seed for every row: `rating.readouts` readouts a move, until the 95% interval is within
+-`rating.half_width` Elo or `rating.max_games` games are played, `rating.jobs` ratings at once
(`{root}/ROW/rating.json`, the standard rating file; `minigo_core.bench.ablation.ladder`). The table (sorted
by Elo) gives each row's cost too, read from its run directory as `minigo status --breakdown` reads it: last
generation, self-play games, recorded positions, training steps, the loop's core-seconds and the wall
seconds; and each row's Elo difference to the row named `default`. A spec with `tournament:` and no `rating:`
(config/ablation/rows.yaml) gets the older round-robin instead: the rows' models against each other and GNU
Go, on one Bradley-Terry scale of that tournament's own (`minigo_core.bench.ablation.tournament`).

A row with `branch: {row: R, generation: G}` goes on from row R's run (the same seed's replicate) after
its generation G: R's finished generations 0..G are copied into the row's run directory as a warm start's are
(`minigo_core.bench.ablation.warm`), and the row runs its own from G+1. For a lever that acts only after G (a
learning rate dropped late, a schedule's last step), whose runs are byte-identical to R's through G, this
saves replaying them; that they are identical is the spec's claim, the row's config is not compared with R's.
Its wall time counts R's share: R's wall seconds x G / R's last finished generation.

A row may set its own `budget_minutes` (an equal-time row: a bigger net stopped at the wall time the rows it
is compared with took, its `generations` set beyond what it reaches; its result names the generation it got
to).

Rows, ratings and matches already done (their files exist) are not run again, and a row cut off before its
result goes on from where it stopped for what is left of its budget (`row_progress.json`), so the command
resumes;
`--rate-only` starts no row and rates those that have a result. Prints a Markdown table, also written to
`{root}/ablation.md`, with the JSON (the command, the git commit, the CPU) in `{root}/ablation.json`.
`--merge FILE` adds the rows of an earlier ablation.json (another root, machine or session, whose run
directories are not here) that this root has no row of, as they were, named in the JSON's `merged_from`.

With a `measures:` section too (config/ablation/value.yaml), every row's model gets its value head's error on
the position set `measures.value_set` (MSE, sign right, last third: `bench value_error`) and its search
scaling (against itself at the readouts before, for each of `measures.scaling_readouts` but the first,
`measures.scaling_games` games a pair from `measures.seed`: `bench search_scaling`; the Elo per doubling over
the range with its 95% interval) beside its rating, `measures.jobs` rows at once (`{root}/ROW/measures.json`,
kept unless its settings or model differ; `minigo_core.bench.ablation.measures`).

With `seeds: [S1, S2, ...]` (a spec with `rating:`), every row runs once per seed, its config with `seed: S`
merged last: the first seed's run where the row lives without seeds (`{root}/ROW`, so a row already run with
the config's own seed keeps its result), the others in `{root}/ROW@sS`. Each replicate runs, resumes and is
rated like a row; the first pass runs every row's first seed, the next every row's second, and so on, so a
cut-off session still has whole passes. The table then gives each row's mean Elo over its rated seeds and
its differences with an interval from the seeds' spread (`minigo_core.bench.ablation.seeds`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from minigo_core.base.config import ConfigError, from_dict, unstated_keys
from minigo_core.bench.ablation import ladder as _ladder
from minigo_core.bench.ablation import measures as _measures
from minigo_core.bench.ablation import seeds as _seeds
from minigo_core.bench.ablation import tournament as _tournament
from minigo_core.bench.ablation import warm as _warm
from minigo_core.data import layout
from minigo_core.pipeline.workflow import effective_config_text, without_unavailable_opponents

REPO = Path(__file__).resolve().parents[3]
STOP_GRACE_S = 15  # after SIGINT, how long Snakemake gets to stop before SIGTERM (it waits for running jobs)


@dataclass
class Row:
    name: str
    why: str
    overrides: dict
    root: Path
    from_scratch: bool = False  # with a warm start: run from nothing for the base's wall time + the budget
    group: str = ""  # the spec's row this run is of (its name, or with `seeds` the row it replicates)
    seed: int | None = None  # with `seeds`: the run seed merged last over the row's config
    budget_minutes: float | None = None  # the row's own wall budget (an equal-time row), else the spec's
    branch: tuple[str, int] | None = None  # (row, G): goes on from that row's run after its generation G

    @property
    def config_path(self) -> Path:
        return self.root / "row.yaml"

    @property
    def result_path(self) -> Path:
        return self.root / "row_result.json"


def _read_spec(path: str) -> dict:
    """The spec file as a mapping with a `rows` list of mappings, each with a `name`; SystemExit naming the
    file and what is wrong (not there, not YAML, not that shape)."""
    try:
        spec = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise SystemExit(f"ablation spec {path}: cannot be read ({exc.strerror or exc}); give a spec file, "
                         "for example config/ablation/value.yaml") from None  # fmt: skip
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise SystemExit(f"ablation spec {path}: not valid YAML{at}: {problem} (a text with ': ' in it "
                         "needs quotes)") from None  # fmt: skip
    if not isinstance(spec, dict) or not isinstance(spec.get("rows"), list):
        raise SystemExit(f"ablation spec {path}: needs a mapping with a `rows` list")
    for i, entry in enumerate(spec["rows"]):
        if not isinstance(entry, dict) or not entry.get("name"):
            raise SystemExit(f"ablation spec {path}: rows[{i}] needs a mapping with a `name` (and `set`)")
    return spec


def _branch(entry: dict, earlier: list[str], where: str) -> tuple[str, int] | None:
    """A row's `branch: {row: R, generation: G}` as (R, G) (None without one); SystemExit unless R is a row
    above it in the spec (it runs first in every pass) and G a generation >= 1."""
    if "branch" not in entry:
        return None
    branch, name = entry["branch"], entry["name"]
    if not isinstance(branch, dict) or set(branch) != {"row", "generation"}:
        raise SystemExit(f"{where}: row {name}: branch needs `row` and `generation` (branch: {{row: R, "
                         "generation: G}: go on from row R's run after its generation G)")  # fmt: skip
    source, generation = str(branch["row"]), branch["generation"]
    if source not in earlier:
        raise SystemExit(f"{where}: row {name}: branch.row {source!r} is not a row above it in the spec; "
                         "name a row listed before it (its run must be there first)")  # fmt: skip
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        raise SystemExit(
            f"{where}: row {name}: branch.generation must be a generation >= 1, got {generation!r}"
        )
    if entry.get("from_scratch"):
        raise SystemExit(
            f"{where}: row {name}: `branch` and `from_scratch` do not go together: leave one out"
        )
    return source, generation


def branch_source(rows: list[Row], row: Row) -> dict:
    """A branching row's start (run_row's `base`): its source replicate of the same seed, the generation
    copied and the source's wall seconds to it (its wall x G / its last finished generation); SystemExit
    when the source has not got that far."""
    source, generation = row.branch
    src = next(r for r in rows if r.group == source and r.seed == row.seed)
    run = src.root / "run"
    last = _warm.last_finished(run) or 0
    if last < generation:
        raise SystemExit(
            f"row {row.name}: branches from {src.name} after generation {generation}, and {run} has "
            f"{'no finished generation' if not last else f'generations to {last}'}: run {src.name} first "
            f"(--rows {src.name})"
        )
    spent = 0.0
    for path in (src.result_path, src.root / PROGRESS_FILE):
        if path.exists():
            data = json.loads(path.read_text())
            spent = float(data.get("wall_s", data.get("spent_s", 0.0)))
            break
    return {"name": src.name, "model": layout.model_path(str(run), generation), "generation": generation,
            "wall_s": round(spent * generation / last, 1)}  # fmt: skip


def load_spec(path: str) -> tuple[dict, list[Row]]:
    """The spec and its rows (the warm start first); SystemExit naming what is wrong, before any row runs."""
    spec = _read_spec(path)
    root = Path(spec.get("root", "runs/ablation"))
    root = root if root.is_absolute() else REPO / root
    base_file = load_base(spec.get("base"), f"ablation spec {path}")
    rows = []
    for entry in spec["rows"]:
        name = str(entry["name"])
        scratch = bool(entry.get("from_scratch", False))
        minutes = entry.get("budget_minutes")
        if minutes is not None and not (isinstance(minutes, (int, float)) and minutes > 0):
            raise SystemExit(f"ablation spec {path}: row {name}: budget_minutes must be a positive number")
        rows.append(Row(name, str(entry.get("why", "")), dict(entry.get("set") or {}), root / name, scratch,
                        name, budget_minutes=None if minutes is None else float(minutes),
                        branch=_branch(entry, [r.name for r in rows], f"ablation spec {path}")))  # fmt: skip
    if isinstance(spec.get("warm_start"), dict):  # the base every other row goes on from (`_warm`)
        base = spec["warm_start"]
        rows.insert(0, Row(str(base["name"]), str(base.get("why", "")), dict(base.get("set") or {}),
                           root / str(base["name"]), group=str(base["name"])))  # fmt: skip
    if len({r.name for r in rows}) != len(rows):
        raise SystemExit(f"ablation spec {path}: row names must be unique")
    for entry in spec["rows"]:  # `against`: the row a stacked lever's Elo difference is taken against
        if "against" in entry and str(entry["against"]) not in {r.name for r in rows}:
            raise SystemExit(
                f"ablation spec {path}: row {entry['name']}: against: {entry['against']!r} is not a row "
                "of the spec; name one of its rows (or leave it out to compare with `default`)"
            )
    for row in (r for r in rows if r.branch):  # a branch goes on past the generation it copies
        try:
            generations = int(row_config({**spec, "base": base_file}, row)["generations"])
        except ConfigError as exc:
            raise SystemExit(f"ablation spec {path}: row {row.name}: {exc}") from None
        if generations <= row.branch[1]:
            raise SystemExit(f"ablation spec {path}: row {row.name}: branch.generation {row.branch[1]} must "
                             f"be below the row's generations ({generations})")  # fmt: skip
    if "seeds" in spec:  # every row once per seed (`replicates`)
        spec["seeds"] = _seeds.from_spec(spec, f"ablation spec {path}")
        rows = replicates(rows, spec["seeds"], root)
    spec = {**spec, "root": root, "base": base_file}
    if "rating" in spec:  # checked now: a bad section fails before the rows' hours, not after
        spec["rating"] = _ladder.RatingSettings.from_spec(spec["rating"], f"ablation spec {path}")
        for row in rows:
            try:  # the row's config with the rating's readouts (`_ladder.rate_row`)
                from_dict(merge(row_config(spec, row), {"evaluate": {"readouts": spec["rating"].readouts}}))
            except ConfigError as exc:
                raise SystemExit(f"ablation spec {path}: row {row.name}: {exc}") from None
    if "measures" in spec:  # the value error and search scaling beside the ratings (`_measures`)
        if "rating" not in spec:
            raise SystemExit(f"ablation spec {path}: `measures` goes beside the ratings: it needs `rating:`")
        spec["measures"] = _measures.MeasureSettings.from_spec(spec["measures"], f"ablation spec {path}")
        least = spec["measures"].scaling_readouts[0]
        for row in rows:
            try:  # the row's config with the scaling's fewest readouts
                from_dict(merge(row_config(spec, row), {"evaluate": {"readouts": least}}))
            except ConfigError as exc:
                raise SystemExit(
                    f"ablation spec {path}: row {row.name}: measures.scaling_readouts: {exc}"
                ) from None
    return spec, rows


def replicates(rows: list[Row], seeds: list[int], root: Path) -> list[Row]:
    """Every row once per seed, in passes: all rows' first seed, then all rows' second seed, ... The first
    seed's replicate keeps the row's name and directory; seed S of the others is `ROW@sS`."""
    out = []
    for i, seed in enumerate(seeds):
        for row in rows:
            name = row.name if i == 0 else f"{row.name}@s{seed}"
            out.append(replace(row, name=name, root=root / name, seed=seed))
    return out


def selected(rows: list[Row], arg: str) -> list[Row]:
    """The rows `--rows` names (all for ""): a spec row's name selects all of its seeds' replicates, `ROW@sS`
    the one of seed S (`ROW@s1` too: the first seed's keeps the row's name)."""
    names = set(arg.split(","))
    return [r for r in rows if not arg or {r.name, r.group, f"{r.group}@s{r.seed}"} & names]


def merge(base: dict, over: dict) -> dict:
    """`over` merged into `base` key by key, nested mappings merged too (Snakemake's --configfile rule)."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def load_base(name: object, where: str) -> Path:
    """The spec's `base`: the run config file every row is merged over (a path, relative to the repository or
    absolute). SystemExit unless it is a mapping that states every key of the run config: a key it left out
    would come from config.yaml's defaults and change with them."""
    if not isinstance(name, str) or not name:
        raise SystemExit(
            f"{where}: needs `base:`, the run config file every row is merged over, stating every key (as "
            "config/ablation/base-hour.yaml does), so that a change to config.yaml changes no row"
        )
    path = Path(name) if Path(name).is_absolute() else REPO / name
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"{where}: cannot read its base {name}: {exc}") from None
    if not isinstance(data, dict):
        raise SystemExit(f"{where}: its base {name} must hold a mapping of run config keys")
    missing = unstated_keys(data)
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise SystemExit(
            f"{where}: its base {name} does not state {shown}; a row would take config.yaml's value, which "
            "changes when config.yaml does: state every key, with the value the spec's table ran with"
        )
    return path


def row_config(spec: dict, row: Row) -> dict:
    """The spec's base file, then the spec's `common`, then the row's `set`, then a replicate's seed; the
    row's own run root."""
    data = yaml.safe_load(Path(spec["base"]).read_text())
    merge(data, json.loads(json.dumps(spec.get("common") or {})))
    merge(data, json.loads(json.dumps(row.overrides)))
    if row.seed is not None:
        data["seed"] = row.seed
    data["root"] = str(row.root / "run")
    from_dict(data)  # validate now: a bad row fails before any run starts
    return data


def last_model(run_root: Path, generations: int) -> int | None:
    done = [g for g in range(generations + 1) if Path(layout.model_path(str(run_root), g)).exists()]
    return max(done) if done else None


PROGRESS_FILE = "row_progress.json"  # a row's run so far: its config, the wall seconds it has had, its pieces
PROGRESS_EVERY_S = 20.0  # how often a running row records its wall seconds (what a cut-off can lose)


def run_command(row: Row) -> list[str]:
    """The row's run: `minigo run` on the row's config, the local profile, no report."""
    return [sys.executable, "-m", "minigo_core.cli", "run", "--profile", "profiles/local",
            "--config", str(row.config_path), "--no-report"]  # fmt: skip


def _flat(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value})
    return out


def _resumable(row: Row, data: dict) -> dict | None:
    """The progress of a row an earlier invocation started and did not finish, when it ran this same config:
    every key of its row.yaml has the value it has now (keys added to the run config since then may be new:
    a base carries for each the value that keeps its table's behaviour). None when there is none or a value
    differs: the row starts again."""
    try:
        progress = json.loads((row.root / PROGRESS_FILE).read_text())
        then = _flat(yaml.safe_load(row.config_path.read_text()))
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return None
    now = _flat(data)
    same = all(key in now and now[key] == value for key, value in then.items())
    return progress if same and isinstance(progress, dict) else None


def run_row(spec: dict, row: Row, budget_s: float, base: dict | None = None) -> dict:
    """One row's run, stopped after `budget_s` of wall time; its result (last model) to row_result.json.
    With `base` (the warm start's result), the run starts as a copy of the base's finished generations.

    A row cut off before its result (the session ended, Ctrl-C, a crash) resumes: `row_progress.json` holds
    the wall seconds it has had (updated every PROGRESS_EVERY_S), and a later invocation with the same row
    config runs `minigo run` on the same run root again for what is left of the budget (Snakemake goes on
    from the finished jobs and redoes the incomplete ones). A row whose config changed starts again."""
    data = row_config(spec, row)
    text = yaml.safe_dump(data, sort_keys=False)
    progress = _resumable(row, data)
    if progress is None:
        if row.root.exists():  # cut off under another config: start it again from nothing
            shutil.rmtree(row.root)
        row.root.mkdir(parents=True)
        progress = {"spent_s": 0.0, "pieces": 0, "warm_start": None}
        if base is not None:
            base_run = Path(base["model"]).parents[1]
            last = base["generation"] if "generation" in base else _warm.last_finished(base_run)
            _warm.copy_generations(base_run, row.root / "run", last)
            # the row's effective config, as the workflow's `run_config` rule writes it (the copy leaves the
            # base's out; Snakemake would not rewrite a file it has no record of)
            cfg, _ = without_unavailable_opponents(from_dict(data))
            (row.root / "run" / layout.EFFECTIVE_CONFIG).write_text(effective_config_text(cfg))
            progress["warm_start"] = {"row": base["name"], "generation": last, "wall_s": base["wall_s"]}
        row.config_path.write_text(text)
        _save_progress(row, progress)
    else:
        row.config_path.write_text(text)  # with the keys added since, if any
    if progress["pieces"]:
        print(f"  resuming row {row.name}: {progress['spent_s']:.0f} s of {budget_s:.0f} s had", flush=True)
    code = _run_piece(row, budget_s, progress)
    gen = last_model(row.root / "run", int(data["generations"]))
    warm, wall = progress["warm_start"], progress["spent_s"]
    result = {"name": row.name, **_replicate(row), "why": row.why, "set": row.overrides, "budget_s": budget_s,
              "wall_s": round(wall, 1), "last_generation": gen,
              "model": layout.model_path(str(row.root / "run"), gen) if gen is not None else None,
              "games": (gen or 0) * int(data["selfplay"]["games"]), "exit": code,
              "warm_start": warm, "pieces": progress["pieces"],
              "total_wall_s": round(wall + (warm["wall_s"] if warm else 0.0), 1)}  # fmt: skip
    row.result_path.write_text(json.dumps(result, indent=1))
    return result


def _replicate(row: Row) -> dict:
    """What a replicate's result adds: the spec's row it is of and its seed (nothing without `seeds`)."""
    return {} if row.seed is None else {"row": row.group, "seed": row.seed}


def kept_result(row: Row) -> dict | None:
    """The row's result from an earlier invocation (None: none yet). With `seeds`, SystemExit when its run was
    made with another seed (a row run before `seeds` came, under the config's seed, and the spec's first seed
    is another): its result would be counted under the wrong seed."""
    if not row.result_path.exists():
        return None
    result = json.loads(row.result_path.read_text())
    if row.seed is None:
        return result
    try:
        ran = (yaml.safe_load(row.config_path.read_text()) or {}).get("seed")
    except (OSError, yaml.YAMLError):
        ran = None
    if ran != row.seed:
        raise SystemExit(
            f"{row.root}: its run was made with seed {ran}, and the spec's `seeds` give it seed {row.seed}: "
            f"put {ran} first in `seeds`, or move the directory away to run it again"
        )
    return {**result, **_replicate(row)}


def _save_progress(row: Row, progress: dict) -> None:
    tmp = row.root / (PROGRESS_FILE + ".tmp")
    tmp.write_text(json.dumps(progress, indent=1))
    os.replace(tmp, row.root / PROGRESS_FILE)


def _run_piece(row: Row, budget_s: float, progress: dict) -> int | None:
    """`minigo run` for what is left of the row's budget, its wall seconds added to `progress` as it runs;
    its exit status (None when no time was left). On Ctrl-C the run is stopped and its time kept."""
    left = budget_s - float(progress["spent_s"])
    if left <= 0:
        return None
    progress["pieces"] += 1
    if progress["pieces"] > 1:  # a run killed with its driver leaves Snakemake's lock of the run root
        subprocess.run([*run_command(row), "--unlock"], cwd=REPO, capture_output=True)
    had, start = float(progress["spent_s"]), time.time()
    with open(row.root / "run.log", "a") as log:
        proc = subprocess.Popen(run_command(row), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        try:
            while proc.poll() is None:
                elapsed = time.time() - start
                if elapsed >= left:
                    _stop(proc)
                    break
                try:
                    proc.wait(timeout=min(PROGRESS_EVERY_S, left - elapsed))
                except subprocess.TimeoutExpired:
                    pass
                progress["spent_s"] = round(had + time.time() - start, 1)
                _save_progress(row, progress)
        except BaseException:
            _stop(proc)
            raise
        finally:
            progress["spent_s"] = round(had + time.time() - start, 1)
            _save_progress(row, progress)
    return proc.returncode


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGTERM, 30), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_on_signals() -> None:
    """SIGINT and SIGTERM stop the running row (its time and generations kept: `row_progress.json`) and
    then the command, even when it was started in the background, where SIGINT comes ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench ablation",
        description="An ablation at equal wall time: every row of the spec is a real run stopped after "
        "`budget_minutes`; then, with a `rating:` section, every row's last model is rated on the fixed Elo "
        "ladder of its board size (the same settings and seed for every row; {root}/ROW/rating.json), and a "
        "table gives each row's Elo, its difference to the row `default`, and its cost from its run "
        "directory (generations, games, positions, training steps, core-seconds, wall seconds). A spec with "
        "`tournament:` and no `rating:` plays the older round-robin instead. Rows and ratings whose files "
        "exist are not redone.",
        epilog="The table is printed and written to {root}/ablation.md, with {root}/ablation.json. See "
        "config/ablation/hour.yaml (rating) and config/ablation/rows.yaml (tournament).",
    )
    parser.add_argument(
        "--spec", default="config/ablation/rows.yaml", help="the ablation spec (default: %(default)s)"
    )
    parser.add_argument(
        "--rows",
        default="",
        help="comma-separated row names to run (default: all; with `seeds`, all of a row's seeds, or one "
        "replicate by its name ROW@sS, the first seed's too); every row with a result is rated",
    )
    parser.add_argument(
        "--merge",
        action="append",
        default=[],
        metavar="ABLATION_JSON",
        help="an earlier ablation.json (another root, machine or session: docs/ablation-value.json) whose "
        "rows this root has no row of join the table as they were, named in the JSON's `merged_from`; "
        "repeatable",
    )
    stage = parser.add_mutually_exclusive_group()
    stage.add_argument(
        "--no-rating",
        "--no-tournament",
        dest="no_rating",
        action="store_true",
        help="only run the rows: no rating, no tournament, no table",
    )
    stage.add_argument(
        "--rate-only",
        action="store_true",
        help="start no row: rate (or play the tournament of) the rows that have a result, and tabulate",
    )
    args = parser.parse_args(argv)
    _stop_on_signals()
    spec, rows = load_spec(args.spec)
    wanted = selected(rows, args.rows)
    budget_s = 60.0 * float(spec.get("budget_minutes", 10))
    warm = spec.get("warm_start") if isinstance(spec.get("warm_start"), dict) else None
    results, base = [], None
    for row in rows:
        is_base = warm is not None and row.name == str(warm["name"])
        kept = kept_result(row)
        if kept is not None:
            results.append(kept)
        elif (row in wanted or is_base) and not args.rate_only:
            row_budget, start_from = budget_s, None
            if row.budget_minutes is not None:  # an equal-time row: its own wall budget
                row_budget = 60.0 * row.budget_minutes
            if is_base:
                row_budget = 60.0 * float(warm.get("budget_minutes", spec.get("budget_minutes", 10)))
            elif row.branch is not None:
                start_from = branch_source(rows, row)
            elif base is not None and row.from_scratch:
                row_budget = budget_s + float(base["wall_s"])
            elif base is not None:
                start_from = base
            elif warm is not None:
                raise SystemExit(f"row {row.name}: the warm start {warm['name']} has no model to start from")
            print(
                f"[{time.strftime('%H:%M:%S')}] row {row.name}: {row.why} ({row_budget / 60:.1f} min"
                + (f", from {start_from['name']})" if start_from else ")"),
                flush=True,
            )
            results.append(run_row(spec, row, row_budget, start_from))
            print(
                f"  -> generation {results[-1]['last_generation']} in {results[-1]['wall_s']:.0f} s",
                flush=True,
            )
        else:
            continue
        if is_base:
            base = results[-1] if results[-1].get("model") else None
    if args.no_rating or len(results) < 1:
        return 0
    if "rating" in spec:
        command = ["python", "-m", "minigo_core.bench", "ablation", *(sys.argv[1:] if argv is None else argv)]
        return _ladder.report(spec, results, command, args.merge)
    _tournament.report(spec, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
