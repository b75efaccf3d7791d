"""Where a run's time goes: its core-seconds split by what the cores did, from the run's own files alone.

`minigo status ROOT --breakdown [--per-generation] [--json] [--cores N]` prints `collect`'s `Breakdown`.

The total is **cores x wall**:

- *cores*: `--cores N`; else the last `Provided cores: N` line of the newest Snakemake log
  (`{root}/logs/snakemake/*.log`, what `minigo run` keeps); else `os.cpu_count()` of the reading machine,
  with a note (the effective config records no core count).
- *wall*: from the first job's start to the last artifact. The first job's start is the earliest job-start
  stamp of the Snakemake logs (`[Wed Nov 25 11:07:31 2026]` before a `rule NAME:` block, 1 s resolution, read
  as the middle of its second, in this machine's time zone); without a log, the earliest of the effective
  config's mtime and the job records' `attempt.process_start_epoch`. The last artifact is the newest mtime of
  the model files (`models/gen*.safetensors`), job records (`games/gen*/job*.json`), games-complete markers,
  window manifests, training metrics (`train/gen*/metrics.jsonl`), results files (`eval/gen*/vs_*.json`)
  and ladder ratings (`eval/gen*/ladder.json`); `summary/` (ratings, plots) is not counted.

Every category counts the cores a job held (wall x the threads it ran), not CPU seconds:

- **self-play games**: each job record's `attempt.games_wall_s` x `attempt.threads` (`games_cpu_s` is kept in
  the JSON as `selfplay_games_cpu`).
- **training steps**: per `train/genGGGG/metrics.jsonl`, the sum over `step` records of `step_ms` x the
  steps since the previous record (from the `start` record's `start_step`), x the `start` record's `ranks`
  x `train.threads_per_rank`. `step_ms` is rank 0's time per step, data wait included.
- **job start-up**: what a job held outside its measured work. With a Snakemake start stamp: the job's span
  (the newest mtime of its outputs minus its start) x its threads, minus its measured work (self-play
  `games_wall_s`, training steps, window `timings.total_s`, evaluation `wall_seconds`): process start,
  imports, model loading, the rendezvous of training ranks, shard loading, writing. Without one: self-play
  records' `attempt.startup_s` x threads and training's `end` record `wall_s` minus the steps (rank 0's clock
  from after its imports: a lower bound); window and evaluation start-up is then not known (in idle).
- **window**: each manifest's `timings.total_s` x `window.read_threads`, and each generation's window parts
  (`window/parts/genGGGG/parts.json`, sampled by its games-complete job: `data/parts.py`): their
  `timings.total_s` x their `threads`.
- **evaluation**: each results file's and ladder rating's `cpu_seconds` (the CPU of its games and of GNU Go:
  evaluations run niced beside the learning jobs, so their wall time is not their cost; the process's CPU
  before its first game, `startup_cpu_seconds`, is job start-up); in files without it, `wall_seconds` (else
  `finished_unix - started_unix`) x `selfplay.threads` (the players' threads, `minigo evaluate`'s default).
- **other jobs**: the spans of the `run_config`, `bootstrap` and `games_complete` jobs in the Snakemake log
  x their threads (unknown without a log), a games-complete job's window parts taken out (they are window).
- **scheduling**: Snakemake's gaps between jobs are not measurable as core-seconds from its 1 s stamps: they
  are in idle. As a hint, `dispatch_s` sums the wall seconds each self-play, games-complete, window and
  training job waited from its newest input's mtime (the `input:` line's files) to its start stamp.
- **idle**: cores x wall minus the known categories, clamped at 0; `overlap` is what the categories exceed
  cores x wall by (jobs holding more threads than the machine's cores). So parts + idle - overlap = cores x
  wall. A category no file was found for is unknown (None), and its time is in idle.

`--until-last-model` (`collect(..., until_last_model=True)`): the learning loop alone, the wall ending at the
newest model file; files written after it (the last generation's matches) are left out. `positions`: the
recorded self-play positions the job records list, and `positions_per_hour` over the wall.

Per generation (`--per-generation`): each category's core-seconds of the files of that generation (self-play
of `games/genG`, training and window of generation G and the window parts of G's games, evaluations of
`eval/genG`, its other jobs), and `span_s`, the time from model G-1's file to model G's. Idle is a run-level
figure: generations overlap.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from minigo_core.base.config import RunConfig, load_config
from minigo_core.data import layout, pack, storage

CATEGORIES = (
    ("selfplay_games", "self-play games"),
    ("training_steps", "training steps"),
    ("startup", "job start-up"),
    ("window", "window"),
    ("evaluation", "evaluation"),
    ("other_jobs", "other jobs"),
    ("scheduling", "scheduling"),
    ("idle", "idle"),
)
PARTS = tuple(key for key, _ in CATEGORIES if key != "idle")
OTHER_RULES = ("run_config", "bootstrap", "games_complete")
CRITICAL_RULES = ("selfplay", "games_complete", "window", "train")
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?rule (\w+):$")
_GEN = re.compile(r"gen(\d+)")
# An output's path inside its run (the log spells the root as the run was started: maybe relative)
_IN_RUN = re.compile(r"(?:^|/)((?:models|games|window|train|eval|summary)/[^/].*|config\.yaml)$")


@dataclass
class SnakemakeJob:
    """One job-start block of a Snakemake log."""

    rule: str
    start: float  # epoch seconds: the stamp's second + 0.5
    outputs: list[str]  # paths inside the run (`models/gen0001.safetensors`)
    threads: int = 1
    inputs: list[str] = field(default_factory=list)  # paths inside the run


@dataclass
class Breakdown:
    root: str
    cores: int
    cores_source: str
    start: float | None
    end: float | None
    run: dict[str, float | None] = field(default_factory=dict)
    generations: dict[int, dict[str, float | None]] = field(default_factory=dict)
    overlap: float = 0.0
    selfplay_games_cpu: float | None = None
    dispatch_s: float | None = None  # critical-path jobs' wait from their newest input to their start
    dispatch_jobs: int = 0
    notes: list[str] = field(default_factory=list)
    until_last_model: bool = False
    positions: int | None = None  # recorded self-play positions (the job records' files)

    @property
    def positions_per_hour(self) -> float | None:
        return 3600 * self.positions / self.wall_s if self.positions is not None and self.wall_s > 0 else None

    @property
    def wall_s(self) -> float:
        return max(0.0, self.end - self.start) if self.start is not None and self.end is not None else 0.0

    @property
    def total(self) -> float:
        return self.cores * self.wall_s

    def to_json(self) -> dict:
        return {
            "root": self.root,
            "cores": self.cores,
            "cores_source": self.cores_source,
            "start_unix": self.start,
            "end_unix": self.end,
            "wall_s": self.wall_s,
            "core_seconds": self.total,
            "until_last_model": self.until_last_model,
            "positions": self.positions,
            "positions_per_hour": self.positions_per_hour,
            "categories": self.run,
            "shares": {
                k: (v / self.total if v is not None and self.total > 0 else None) for k, v in self.run.items()
            },
            "overlap": self.overlap,
            "selfplay_games_cpu": self.selfplay_games_cpu,
            "dispatch_s": self.dispatch_s,
            "dispatch_jobs": self.dispatch_jobs,
            "generations": {str(g): row for g, row in sorted(self.generations.items())},
            "notes": self.notes,
        }


# ---- reading the files -----------------------------------------------------------------------------------
def _read_json(path: str | Path) -> dict | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _mtime(path: str | Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _num(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _generation(path: str | Path) -> int | None:
    found = _GEN.findall(str(path))
    return int(found[-1]) if found else None


def read_snakemake_logs(root: str) -> tuple[list[SnakemakeJob], int | None]:
    """Every job-start block of `{root}/logs/snakemake/*.log` (a later block for the same outputs replaces an
    earlier one: a rerun) and the last `Provided cores: N` of the newest log."""
    jobs: dict[tuple[str, ...], SnakemakeJob] = {}
    cores = None
    for path in sorted(Path(layout.snakemake_logs_dir(root)).glob("*" + layout.LOG_SUFFIX)):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        stamp, job = None, None
        for line in lines:
            text = line.strip()
            if text.startswith("Provided cores:"):
                cores = int(text.split(":", 1)[1]) if text.split(":", 1)[1].strip().isdigit() else cores
            if match := _STAMP.match(text):
                stamp, job = time.mktime(time.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")) + 0.5, None
            elif (match := _RULE.match(text)) and stamp is not None:
                job = SnakemakeJob(match.group(1), stamp, [])
            elif job is not None and text.startswith(("input: ", "output: ")):
                key, _, value = text.partition(": ")
                found = [m.group(1) for m in (_IN_RUN.search(o.strip()) for o in value.split(",")) if m]
                if key == "input":
                    job.inputs = found
                else:
                    job.outputs = found
                    jobs[tuple(found)] = job
            elif job is not None and text.startswith("threads: ") and text[9:].strip().isdigit():
                job.threads = int(text[9:].strip())
    return list(jobs.values()), cores


def _span(root: Path, job: SnakemakeJob | None) -> float | None:
    """A job's span: the newest mtime of its outputs minus its start stamp (None if no output exists)."""
    if job is None:
        return None
    ends = [t for t in (_mtime(root / o) for o in job.outputs) if t is not None]
    return max(0.0, max(ends) - job.start) if ends else None


def _train_steps_s(path: Path) -> tuple[float | None, dict | None, dict | None]:
    """Rank 0's seconds in steps (sum of `step_ms` x steps per `step` record), the last `start` and `end`."""
    steps_s, start, end, previous = None, None, None, 0
    for record in storage.read_json_lines(str(path)):
        event = record.get("event")
        if event == "start":
            start, previous = record, int(record.get("start_step") or 0)
        elif event == "end":
            end = record
        elif (
            event == "step"
            and _num(record.get("step_ms")) is not None
            and _num(record.get("step")) is not None
        ):
            done = int(record["step"])
            steps_s = (steps_s or 0.0) + record["step_ms"] / 1000 * max(0, done - previous)
            previous = done
    return steps_s, start, end


def _rel(root: Path, path: str | Path) -> str:
    return Path(path).relative_to(root).as_posix()


# ---- adding it up ----------------------------------------------------------------------------------------
class _Tally:
    """Core-seconds per category, for the run and per generation; None until a file contributes."""

    def __init__(self, until: float | None = None) -> None:
        self.run: dict[str, float | None] = {key: None for key in PARTS}
        self.generations: dict[int, dict[str, float | None]] = {}
        self.until = until  # files written after this are left out (`--until-last-model`)

    def keeps(self, path: Path) -> bool:
        written = _mtime(path)
        return self.until is None or written is None or written <= self.until

    def add(self, generation: int | None, key: str, core_s: float) -> None:
        core_s = max(0.0, core_s)
        self.run[key] = (self.run[key] or 0.0) + core_s
        if generation is not None:
            row = self.generations.setdefault(generation, {k: None for k in PARTS})
            row[key] = (row[key] or 0.0) + core_s


def _job_records(root: Path) -> list[tuple[Path, dict | None]]:
    """Every self-play job record of the run: loose (`games/gen*/job*.json`) or in a generation's pack."""
    records = {path: _read_json(path) for path in root.glob("games/gen*/job*" + layout.JOB_SUFFIX)}
    for url in root.glob("games/gen*" + layout.PACK_SUFFIX):
        try:
            packed = pack.Pack(str(url))
        except (OSError, ValueError):
            continue
        for m in packed.members():
            if m.kind == "jobrecord" and root / m.path not in records:
                try:
                    data = json.loads(packed.read(m.path))
                except ValueError:
                    data = None
                records[root / m.path] = data if isinstance(data, dict) else None
    return sorted(records.items())


def _add_selfplay(root: Path, tally: _Tally, by_output: dict, out: Breakdown) -> list[float]:
    starts = []
    for path, record in _job_records(root):
        if not tally.keeps(path):
            continue
        attempt = (record or {}).get("attempt")
        if not isinstance(attempt, dict):
            out.notes.append(f"{path} is not a readable job record: its job is in idle")
            continue
        generation, threads = _generation(path.parent), int(_num(attempt.get("threads")) or 1)
        games = _num(attempt.get("games_wall_s")) or 0.0
        recorded = [
            _num(f.get("positions")) for f in (record or {}).get("files") or [] if isinstance(f, dict)
        ]
        out.positions = (out.positions or 0) + int(sum(p for p in recorded if p is not None))
        tally.add(generation, "selfplay_games", games * threads)
        if (cpu := _num(attempt.get("games_cpu_s"))) is not None:
            out.selfplay_games_cpu = (out.selfplay_games_cpu or 0.0) + cpu
        span = _span(root, by_output.get(_rel(root, path)))
        startup = span - games if span is not None else _num(attempt.get("startup_s"))
        if startup is not None:
            tally.add(generation, "startup", startup * threads)
        if (began := _num(attempt.get("process_start_epoch"))) is not None:
            starts.append(began)
    return starts


def _add_training(root: Path, cfg: RunConfig | None, tally: _Tally, by_output: dict, out: Breakdown) -> None:
    per_rank = cfg.train.threads_per_rank if cfg is not None else 1
    for path in sorted(root.glob("train/gen*/" + layout.METRICS)):
        if not tally.keeps(layout.model_path(str(root), _generation(path.parent))):
            continue
        generation = _generation(path.parent)
        steps_s, start, end = _train_steps_s(path)
        if steps_s is None or start is None:
            out.notes.append(f"{path} has no step records: generation {generation}'s training is in idle")
            continue
        cores = int(_num(start.get("ranks")) or 1) * per_rank
        tally.add(generation, "training_steps", steps_s * cores)
        span = _span(root, by_output.get(_rel(root, layout.model_path(str(root), generation))))
        if span is None and end is not None:
            span = _num(end.get("wall_s"))
            out.notes.append(f"generation {generation}: training start-up from the end record's wall_s (no "
                             "Snakemake start stamp): the imports and launch are in idle")  # fmt: skip
        if span is not None:
            tally.add(generation, "startup", (span - steps_s) * cores)


def _add_window_and_eval(root: Path, cfg: RunConfig | None, tally: _Tally, by_output: dict) -> None:
    read_threads = cfg.window.read_threads if cfg is not None else 1
    for path in sorted(root.glob("window/gen*/" + layout.MANIFEST)):
        if not tally.keeps(path):
            continue
        total = _num(((_read_json(path) or {}).get("timings") or {}).get("total_s"))
        if total is None:
            continue
        generation = _generation(path.parent)
        tally.add(generation, "window", total * read_threads)
        if (span := _span(root, by_output.get(_rel(root, path)))) is not None:
            tally.add(generation, "startup", (span - total) * read_threads)
    threads = cfg.selfplay.threads if cfg is not None else 1
    for path in sorted(root.glob("eval/gen*/*.json")):  # the matches (vs_*.json) and the ladder rating
        if not tally.keeps(path):
            continue
        data = _read_json(path) or {}
        generation, cpu = _generation(path.parent), _num(data.get("cpu_seconds"))
        if cpu is not None:  # measured CPU: right also for a niced evaluation that ran beside other jobs
            tally.add(generation, "evaluation", cpu)
            tally.add(generation, "startup", _num(data.get("startup_cpu_seconds")) or 0.0)
            continue
        wall = _num(data.get("wall_seconds"))
        if wall is None and _num(data.get("finished_unix")) is not None and _num(data.get("started_unix")):
            wall = data["finished_unix"] - data["started_unix"]
        if wall is None:
            continue
        tally.add(generation, "evaluation", wall * threads)
        if (span := _span(root, by_output.get(_rel(root, path)))) is not None:
            tally.add(generation, "startup", (span - wall) * threads)


def _add_parts(root: Path, tally: _Tally) -> dict[int, float]:
    """Each generation's window parts as window core-seconds (`timings.total_s` x `threads` of its
    parts.json), by generation: what its games-complete job spent on them."""
    spent: dict[int, float] = {}
    for path in sorted(root.glob(layout.parts_manifest_path("", "*").lstrip("/"))):
        data = _read_json(path) or {}
        total, generation = _num((data.get("timings") or {}).get("total_s")), _generation(path.parent)
        if not tally.keeps(path) or total is None or generation is None:
            continue
        spent[generation] = total * int(_num(data.get("threads")) or 1)
        tally.add(generation, "window", spent[generation])
    return spent


def _last_artifact(root: Path) -> float | None:
    patterns = (
        "models/gen*" + layout.MODEL_SUFFIX,
        "games/gen*/job*" + layout.JOB_SUFFIX,
        "games/gen*" + layout.COMPLETE_SUFFIX,
        "window/gen*/" + layout.MANIFEST,
        "train/gen*/" + layout.METRICS,
        "eval/gen*/*.json",
    )
    times = [t for pattern in patterns for t in (_mtime(p) for p in root.glob(pattern)) if t is not None]
    return max(times) if times else None


def _cores(cores: int | None, logged: int | None, notes: list[str]) -> tuple[int, str]:
    if cores is not None:
        return max(1, int(cores)), "--cores"
    if logged is not None:
        return logged, "Snakemake log (Provided cores)"
    notes.append(
        "no core count recorded (no `Provided cores` in a Snakemake log): os.cpu_count() of this machine; "
        "--cores N to set it"
    )
    return max(1, os.cpu_count() or 1), "os.cpu_count()"


def _last_model(root: Path) -> float | None:
    times = [t for t in (_mtime(p) for p in root.glob("models/gen*" + layout.MODEL_SUFFIX)) if t is not None]
    return max(times) if times else None


def collect(root: str, cores: int | None = None, until_last_model: bool = False) -> Breakdown:
    """The breakdown of the run at `root` (see the module docstring for where each figure comes from).

    `until_last_model`: the learning loop alone, from the first job's start to the newest model file; files
    written after it (the last generation's matches, evaluations that finished later) are left out, so
    their time before it is in idle."""
    base = Path(root)
    config_path = layout.effective_config_path(root)
    try:
        cfg = load_config(config_path) if os.path.exists(config_path) else None
    except (ValueError, OSError):
        cfg = None
    jobs, logged_cores = read_snakemake_logs(root)
    out = Breakdown(str(root), 0, "", None, None, until_last_model=until_last_model)
    if cfg is None:
        out.notes.append(f"{config_path} unreadable: threads taken as 1")
    out.cores, out.cores_source = _cores(cores, logged_cores, out.notes)
    by_output = {o: job for job in jobs for o in job.outputs}
    tally = _Tally(_last_model(base) if until_last_model else None)
    starts = _add_selfplay(base, tally, by_output, out)
    _add_training(base, cfg, tally, by_output, out)
    _add_window_and_eval(base, cfg, tally, by_output)
    parts = _add_parts(base, tally)
    for job in jobs:
        if tally.until is not None and not all(tally.keeps(base / o) for o in job.outputs):
            continue
        if job.rule in OTHER_RULES and job.outputs and (span := _span(base, job)) is not None:
            generation = _generation(job.outputs[0]) if job.rule != "run_config" else None
            sampled = parts.get(generation, 0.0) if job.rule == "games_complete" else 0.0
            tally.add(generation, "other_jobs", span * job.threads - sampled)
    _dispatch(base, jobs, out)
    if not jobs:
        out.notes.append("no Snakemake log: other jobs unknown, window and evaluation start-up in idle")
    out.notes.append(
        "scheduling (Snakemake's gaps between jobs) is not measurable from its 1 s stamps: in idle"
    )
    out.start = (
        min(job.start for job in jobs) if jobs else min([*starts, _mtime(config_path) or float("inf")])
    )
    out.start = None if out.start == float("inf") else out.start
    out.end = tally.until if until_last_model else _last_artifact(base)
    parts = sum(v for v in tally.run.values() if v is not None)
    out.run = {**tally.run, "idle": max(0.0, out.total - parts)}
    out.overlap = max(0.0, parts - out.total)
    if out.overlap > 0:
        out.notes.append(
            f"the jobs held {out.overlap:.1f} core-s more than cores x wall (threads over the cores)"
        )
    for key in PARTS:
        if tally.run[key] is None and key != "scheduling":
            out.notes.append(f"{dict(CATEGORIES)[key]}: no file found, unknown (its time is in idle)")
    out.generations = _with_spans(base, tally.generations)
    return out


def _dispatch(root: Path, jobs: list[SnakemakeJob], out: Breakdown) -> None:
    """The wall seconds the critical path's jobs waited between their newest input and their start stamp."""
    for job in jobs:
        if out.end is not None and job.start > out.end:
            continue
        inputs = [t for t in (_mtime(root / i) for i in job.inputs) if t is not None]
        if job.rule in CRITICAL_RULES and inputs:
            out.dispatch_s = (out.dispatch_s or 0.0) + max(0.0, job.start - max(inputs))
            out.dispatch_jobs += 1
    if out.dispatch_s is not None:
        out.notes.append(
            f"dispatch: the {out.dispatch_jobs} self-play, games-complete, window and training jobs waited "
            f"{out.dispatch_s:.1f} s in all (wall, +-0.5 s each) from their newest input to their start "
            "(Snakemake noticing the input, free cores, spawning): part of idle"
        )


def _with_spans(root: Path, rows: dict[int, dict]) -> dict[int, dict]:
    """Each generation's row with `span_s`: model G's mtime minus model G-1's (None for generation 0)."""
    for generation, row in rows.items():
        now, before = (_mtime(layout.model_path(str(root), g)) for g in (generation, generation - 1))
        row["span_s"] = now - before if now is not None and before is not None and generation > 0 else None
    return rows


# ---- the table -------------------------------------------------------------------------------------------
def _cell(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'-' if value is None else f'{value:.{digits}f}':>{width}}"


def format_table(b: Breakdown, per_generation: bool = False) -> str:
    clock = lambda t: time.strftime("%H:%M:%S", time.localtime(t)) if t is not None else "?"  # noqa: E731
    lines = [
        f"where the time went: {b.root}",
        f"{b.cores} cores ({b.cores_source}) x {b.wall_s:.1f} s wall (first job's start {clock(b.start)} to "
        f"the last {'model' if b.until_last_model else 'model/record/results'} file {clock(b.end)}) = "
        f"{b.total:.1f} core-s",
        "",
        f"{'category':<16} {'core-s':>10} {'share':>7}",
    ]
    for key, label in CATEGORIES:
        value = b.run.get(key)
        share = f"{100 * value / b.total:6.1f}%" if value is not None and b.total > 0 else f"{'-':>7}"
        lines.append(f"{label:<16} {_cell(value, 10)} {share}")
    if b.overlap > 0:
        lines.append(f"{'overlap':<16} {_cell(-b.overlap, 10)} {100 * -b.overlap / max(b.total, 1e-9):6.1f}%")
    lines.append(f"{'total':<16} {_cell(b.total, 10)} {'100.0%' if b.total > 0 else '-':>7}")
    learning = [b.run.get(k) for k in ("selfplay_games", "training_steps")]
    if None not in learning and b.total > 0:
        lines.append(f"self-play games + training steps: {100 * sum(learning) / b.total:.1f}% of the core-s")
    if b.positions_per_hour is not None:
        lines.append(
            f"recorded self-play positions: {b.positions:,} ({b.positions_per_hour:,.0f} per wall-hour)"
        )
    if per_generation:
        heads = ("selfplay", "train steps", "start-up", "window", "evaluation", "other jobs", "scheduling")
        lines += ["", "core-s per generation (span: model G-1's file to model G's, s)"]
        lines.append(f"{'gen':>4} " + " ".join(f"{h:>12}" for h in heads) + f" {'span':>7}")
        for generation, row in sorted(b.generations.items()):
            cells = " ".join(_cell(row.get(key), 12, 2) for key in PARTS)
            lines.append(f"{generation:>4} {cells} {_cell(row.get('span_s'), 7)}")
    lines += [f"note: {note}" for note in b.notes]
    return "\n".join(lines)
