"""Chaos run: kill -9 processes of a running workflow, kind by kind, rerun until done, compare with an
undisturbed run.

    python workflow/scripts/chaos.py --workdir /tmp/chaos [--config config/tiny.yaml] [--kills 10] [--seed 1]
        [--kinds selfplay,train-rank,...] [--profile local|slurm]

1. Runs the config undisturbed in WORKDIR/A: the reference. A watcher notes how long each kind of process
   lives there, in wall and in CPU seconds (`work_clock`: the process's and its children's CPU; for the
   launcher of the training ranks, its whole job's), the clock of the kill moments of run B: a loaded
   machine stretches wall time, hardly CPU time.
2. Plans the kills (seeded, `kill_plan`): kinds drawn without repeats while possible from the kinds this
   config's run starts (`plannable_kinds`), in the order the pipeline starts them, Snakemake itself at a
   random place; or exactly the kinds of `--kinds`. The kinds:
     bootstrap, games_complete, window, evaluate   the `minigo` command of that rule's job
     selfplay          a self-play job of K > 1 games (`minigo selfplay --count K`); `selfplay-single`: K = 1
     train             the launcher of the training ranks (`minigo train --ranks N`; under Slurm its `srun`)
     train-rank        one training rank (under Slurm: a rank on node1)
     train-rank-node2  (Slurm, `--profile slurm`) a rank whose environment says SLURMD_NODENAME=node2
     snakemake         Snakemake itself, while a job of it runs (its jobs run on, as on a cluster)
   (ratings and plots only through `--kinds`.)
3. Runs it again in WORKDIR/B and kills. Each planned kill waits for a process of its kind -- as long as the
   run lasts, over as many Snakemake attempts as it takes -- and hits it at a random moment of its life
   (seeded draws): a CPU reading drawn in 5-75 % of the shortest life of that kind in run A (halved after
   each miss of the kind: a process that ended first; the next one is aimed at); a multi-game self-play
   job, once m of its K game files are written (m drawn in 0..K-1; m = 0: a CPU reading), so that its retry
   must keep them. Every running process of a pending kind is aimed at, each at its own moment; the first
   moment to come is a kill, and the other processes of the job it hit (a launcher's ranks, a rank's
   launcher) are no longer aimed at. A Snakemake kill waits for the kills planned before it, and for a
   moment when a job runs and no process of a pending kind does. A kill is given up ("not reached", with
   the reason) only when an attempt ends without a process of its kind and a dry run plans no job that
   would start one (or the run finished). A killed job fails its attempt (local profile: retries 0), which
   Snakemake ends after its other jobs; a killed Snakemake leaves its jobs running: they (under Slurm: the
   run's jobs, until squeue no longer lists them as pending or running) are waited for and the lock is
   released with `--unlock`; then Snakemake starts again with `--rerun-incomplete` -- until no kill is
   pending and an attempt succeeds.
4. Checks run B: a final dry run has nothing left to do; no temporary (`.tmp-*`) file is left (one that a
   killed process wrote names it: its name holds the writer's pid); every artifact
   is valid (game files, shards against their manifest checksums, models, JSON); every artifact is
   byte-identical to run A, except the files that record wall-clock time (listed in WALL_CLOCK, compared with
   those fields removed). While run B runs, a watcher validates each artifact as soon as it appears under its
   final name: a half-written file under a final name is reported. For a killed self-play job: which of its
   game files existed at the kill, and whether its retry kept them (its record, its log's "kept N game files
   of an earlier attempt"); one it did not keep is a problem.

`--profile slurm` runs A and B through `profiles/slurm` on a running Slurm test cluster of two nodes
(`python tests/slurm_cluster.py start DIR`), with the test cluster's settings of tests/test_slurm.py, the
training ranks spread over node1 and node2 (`--set-resources train:nodes=2`: `srun -n 2 -N 2 ...
--kill-on-bad-exit=1`), and retries (`--retries`, default 2) so that Snakemake resubmits a killed job.
Processes that slurmd starts are found in /proc like local ones (by their working directory); leftover
Slurm jobs of a run are cancelled at the end.

Both runs use the same relative root (`run`) inside their own working directory, so paths recorded inside
artifacts are the same. Prints a JSON report (per kind: planned, killed, not reached with the reason, and
each kill's pid, command, seconds into the process and attempt), then a table of the kinds; exit status 0
when every check held and every planned kill happened, 1 otherwise (each problem is described: which file,
which fields or bytes, which kill), 2 when the reference run itself failed.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from minigo_core.data import storage  # noqa: E402
from minigo_core.pipeline import plan as planning  # noqa: E402
from minigo_core.pipeline import workflow  # noqa: E402

ROOT = "run"  # the run root, relative to each run's working directory
# Files that are not artifacts, or hold nothing but wall-clock facts: never compared.
SKIP = (
    "logs/*",
    "summary/status.txt",  # `minigo status`: elapsed times, "as of" clock time
    "summary/time_to_target.json",  # wall time to the target by definition
    "summary/winrate.png",  # win rate against wall-clock hours
    "summary/learning_curve.png",  # Elo and win rates against wall-clock minutes
)
# Artifacts that record wall-clock time next to deterministic content: compared with these keys (JSON, at
# any depth) or columns (CSV) removed.
WALL_CLOCK = {
    "games/*/job*.json": {"attempt"},  # a self-play job's record: this attempt's host, clocks, kept games
    "window/*/manifest.json": {"timings", "peak_rss_mb"},
    "train/*/metrics.jsonl": {
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
    },  # fmt: skip
    "eval/*/*.json": {
        "started_unix",
        "finished_unix",
        "started_at",
        "finished_at",
        "wall_seconds",
        "seconds",
        "wall_time_s",
    },  # fmt: skip
    "summary/elo.json": {"model_time_s", "evaluated_time_s"},
    "summary/elo.csv": {"model_time_s", "evaluated_time_s"},
}
KIND_OF_SUBCOMMAND = {
    "train": "train",
    "window": "window",
    "evaluate": "evaluate",
    "bootstrap": "bootstrap",
    "ratings": "ratings",
    "games-complete": "games_complete",
    "plots": "plots",
}
# Every kind a kill can aim at, in the order the pipeline first starts them, and the rule of its job.
RULE_OF = {"bootstrap": "bootstrap", "selfplay": "selfplay", "selfplay-single": "selfplay",
           "games_complete": "games_complete", "window": "window", "train": "train", "train-rank": "train",
           "train-rank-node2": "train", "evaluate": "evaluate", "ratings": "ratings", "plots": "plots",
           "snakemake": None}  # fmt: skip
KINDS = tuple(RULE_OF)
SECOND_NODE = "node2"  # the node of kind train-rank-node2 (tests/slurm_cluster.py names them node1, node2)
# Slurm job states in which a job still holds (or will hold) processes; squeue lists finished jobs for
# MinJobAge seconds after their end, in the other states.
SLURM_ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}  # fmt: skip
SLURM_NON_TASK_STEPS = ("batch", "extern", "interactive")  # SLURM_STEP_ID of what is not an srun task


# ------------------------------------------------------------------------------------------------ processes
class Proc(NamedTuple):
    pid: int
    kind: str
    argv: list[str]


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def environ(pid: int) -> dict[str, str]:
    """A process's environment as it started (root reads anyone's)."""
    items = _read(f"/proc/{pid}/environ").decode(errors="replace").split("\0")
    return dict(item.split("=", 1) for item in items if "=" in item)


def _uptime() -> float:
    return float(_read("/proc/uptime").split()[0])


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat from field 3 (state) on (empty: the process is gone)."""
    stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
    return stat[stat.rfind(")") + 2 :].split()  # after the command name, which may hold spaces


TICK = os.sysconf("SC_CLK_TCK")


def ppid(pid: int) -> int:
    """The parent's pid (0: the process is gone)."""
    fields = _stat(pid)
    return int(fields[1]) if fields else 0


def started(pid: int) -> float | None:
    """When a process started, in seconds since boot (None: it is gone)."""
    fields = _stat(pid)
    return int(fields[19]) / TICK if fields else None  # field 22, starttime, in clock ticks


def age(pid: int) -> float | None:
    """Seconds since the process started (None: it is gone)."""
    start = started(pid)
    return None if start is None else max(0.0, _uptime() - start)


def process_tree() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds used) of every process of the machine."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields:  # fields 4 (ppid), 14 and 15 (utime, stime in clock ticks)
                out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    return out


def cpu_with_descendants(pid: int, tree: dict[int, tuple[int, float]]) -> float:
    """CPU seconds of a process and of its live descendants."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in tree.items():
        children.setdefault(parent, []).append(child)
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += tree.get(p, (0, 0.0))[1]
        todo += children.get(p, [])
    return total


def _argv(pid: int) -> list[str]:
    return _read(f"/proc/{pid}/cmdline").decode(errors="replace").split("\0")[:-1]


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def alive(pid: int, argv: list[str]) -> bool:
    """The process runs still, as the same command (not gone, not a zombie, its pid not reused)."""
    return _argv(pid) == argv


def option(argv: list[str], name: str) -> str | None:
    """The value after `name` in argv (None if absent)."""
    return argv[argv.index(name) + 1] if name in argv[:-1] else None


def run_processes(workdir: Path) -> list[Proc]:
    """Every process of the run in `workdir` (found by working directory and argv), local or started by
    slurmd on this machine."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        if _cwd(pid) != str(workdir):
            continue
        argv = _argv(pid)
        kind = classify(argv, pid)
        # a child with its parent's command line is a fork that has not yet run its own command (or a
        # worker process of its parent): not a process of its own kind
        if kind is not None and argv != _argv(ppid(pid)):
            found.append(Proc(pid, kind, argv))
    return found


def classify(argv: list[str], pid: int | None = None) -> str | None:
    """What a process of the run is (one of KINDS, or `snakemake-job`: a Snakemake that runs one job for the
    main one), from its argv and (for a training task under Slurm) its environment; None for shells,
    `timeout` and helper processes."""
    if not argv or os.path.basename(argv[0]) in ("timeout", "bash", "sh"):
        return None
    if any(os.path.basename(a) == "snakemake" for a in argv[:2]) or argv[1:3] == ["-m", "snakemake"]:
        return "snakemake-job" if "--mode" in argv else "snakemake"
    if "minigo_core.jobs.train" in argv and "--rank" in argv:
        return "train-rank"  # a rank that `minigo train --ranks N` started
    if "minigo_core.cli" not in argv:
        return None
    command = option(argv, "minigo_core.cli")
    if os.path.basename(argv[0]) == "srun":
        return "train" if command == "train" else None  # the launcher of the ranks under Slurm
    if command == "selfplay":
        return "selfplay" if int(option(argv, "--count") or 1) > 1 else "selfplay-single"
    if command == "train" and "--ranks" not in argv and pid is not None:
        env = environ(pid)
        if "SLURM_PROCID" in env and env.get("SLURM_STEP_ID", "batch") not in SLURM_NON_TASK_STEPS:
            return "train-rank-node2" if env.get("SLURMD_NODENAME") == SECOND_NODE else "train-rank"
    return KIND_OF_SUBCOMMAND.get(command or "")


def summarize(argv: list[str]) -> str:
    """A short form of a command line: `minigo selfplay --generation 0001 --game 0 --count 3`."""
    keep = ("--generation", "--game", "--count", "--opponent", "--rank", "--world-size", "--ranks")
    if any(os.path.basename(a) == "snakemake" for a in argv[:2]) or argv[1:3] == ["-m", "snakemake"]:
        return "snakemake" + (f" --mode {option(argv, '--mode')}" if "--mode" in argv else "")
    head = next((m for m in ("minigo_core.cli", "minigo_core.jobs.train") if m in argv), None)
    if head is None:
        return " ".join(argv)[:120]
    i = argv.index(head)
    words = ["minigo", argv[i + 1]] if head == "minigo_core.cli" else ["minigo-train-rank"]
    if os.path.basename(argv[0]) == "srun":
        words = [" ".join(a for a in argv[:i] if not a.startswith("/"))[:60], *words]
    words += [f"{name} {option(argv, name)}" for name in keep if option(argv, name) is not None]
    return " ".join(words)


def slurm_jobs(workdir: Path) -> list[tuple[str, str]]:
    """(job id, state) of the Slurm jobs of the run in `workdir` that still run or wait to run."""
    try:
        out = subprocess.run(["squeue", "-h", "-o", "%i|%T|%Z"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    rows = [line.split("|", 2) for line in out.stdout.splitlines() if line.count("|") == 2]
    return [(i, s) for i, s, d in rows if s in SLURM_ACTIVE and d.rstrip("/") == str(workdir)]


def wait_for_no_jobs(workdir: Path, timeout_s: float, slurm: bool = False) -> list[Proc]:
    """Wait until no job of the run is left (orphans of a killed Snakemake finish their jobs): its Slurm
    jobs (in `slurm` mode) have left squeue's active states and none of its processes runs."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not (slurm and slurm_jobs(workdir)) and not run_processes(workdir):
            return []
        time.sleep(0.5)
    return run_processes(workdir)


def cancel_slurm_jobs(workdir: Path) -> list[str]:
    """scancel the run's Slurm jobs that are still active; their ids."""
    ids = [i for i, _ in slurm_jobs(workdir)]
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
    return ids


def stop_all(workdir: Path, slurm: bool = False) -> None:
    """SIGKILL every process of the run, cancel its Slurm jobs (when the driver itself is stopped)."""
    if slurm:
        cancel_slurm_jobs(workdir)
    for pid, _, _ in run_processes(workdir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def job_of(pid: int, workdir: Path) -> str:
    """Which job a process of the run belongs to: `slurm:ID` (its SLURM_JOB_ID) under Slurm, else
    `local:PID` of its topmost ancestor below the main Snakemake (the job's shell)."""
    env = environ(pid)
    if "SLURM_JOB_ID" in env:
        return f"slurm:{env['SLURM_JOB_ID']}"
    root = pid
    for _ in range(64):
        parent = ppid(root)
        if parent <= 1 or classify(_argv(parent)) == "snakemake" or _cwd(parent) != str(workdir):
            break
        root = parent
    return f"local:{root}"


def job_cpu(job: str, workdir: Path, tree: dict[int, tuple[int, float]]) -> float:
    """CPU seconds of the live processes of a job (see job_of), less those of a Snakemake running it."""
    kind, _, ident = job.partition(":")
    if kind == "local":
        return cpu_with_descendants(int(ident), tree)
    procs = run_processes(workdir)  # the job's own processes, not the Snakemake that runs it in the job
    pids = [p.pid for p in procs if p.kind != "snakemake-job" and environ(p.pid).get("SLURM_JOB_ID") == ident]
    return sum(cpu_with_descendants(pid, tree) for pid in pids)


def work_clock(proc: Proc, job: str, workdir: Path) -> float:
    """How far a process has got, in CPU seconds, which a loaded machine stretches far less than wall time:
    its own and its children's; for the launcher of the training ranks, its whole job's (the ranks)."""
    tree = process_tree()
    if proc.kind == "train":
        return job_cpu(job, workdir, tree)
    return cpu_with_descendants(proc.pid, tree)


class Lifetimes(threading.Thread):
    """How long each kind of process of a run lives, in wall and in CPU seconds (see work_clock): polls
    the run's processes (for the reference run)."""

    def __init__(self, workdir: Path, period_s: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.workdir, self.period_s = workdir, period_s
        self.seen: dict[int, list] = {}  # pid -> [kind, job, started (s since boot), last seen, work clock]
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for proc in run_processes(self.workdir):
                if proc.pid not in self.seen:
                    start = started(proc.pid)
                    if start is None:
                        continue
                    self.seen[proc.pid] = [proc.kind, job_of(proc.pid, self.workdir), start, 0.0, 0.0]
                entry = self.seen[proc.pid]
                # the largest reading: a launcher outlives its ranks, whose CPU leaves its job's with them
                entry[3], entry[4] = _uptime(), max(entry[4], work_clock(proc, entry[1], self.workdir))
            self.stop.wait(self.period_s)

    def by_kind(self, index: int) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for kind, _, start, last, clock in self.seen.values():
            out.setdefault(kind, []).append(round(last - start if index == 0 else clock, 2))
        return {k: sorted(v) for k, v in sorted(out.items())}

    def summary(self) -> dict[str, dict]:
        """Per kind: how many processes ran, their shortest, median and longest lifetime in wall seconds,
        and the shortest in CPU seconds (work_clock)."""
        cpu = self.by_kind(1)
        return {
            kind: {
                "count": len(v),
                "min": v[0],
                "median": v[len(v) // 2],
                "max": v[-1],
                "min_cpu": cpu[kind][0],
            }
            for kind, v in self.by_kind(0).items()
        }

    def shortest(self, kind: str, default: float = 1.0) -> float:
        """The shortest life of a process of `kind`, in CPU seconds (work_clock)."""
        lives = self.by_kind(1).get(kind)
        return max(0.05, lives[0]) if lives else default


# ------------------------------------------------------------------------------------------------ snakemake
# A Slurm run on the test cluster (tests/test_slurm.py): a fast first status check, a local disk, the test
# partition; the ranks on 2 nodes (on the command line --set-resources replaces the profile's, so mpi is
# repeated).
SLURM_OPTIONS = ("--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5",
                 "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=1000", "runtime=30",
                 "--set-resources", "train:mpi='srun'", "train:nodes=2")  # fmt: skip


@dataclass
class Runner:
    """How to call Snakemake on a run: the config, the profile (local or slurm) and its options."""

    config: Path
    cores: int = 2
    timeout_s: int = 1800
    profile: str = "local"
    retries: int | None = None  # None: the profile's

    @property
    def slurm(self) -> bool:
        return self.profile == "slurm"

    def argv(self, workdir: Path, *extra: str, timeout_s: int | None = None) -> list[str]:
        snakemake = str(Path(sys.executable).with_name("snakemake"))
        limit = str(timeout_s or self.timeout_s)
        argv = ["timeout", "-k", "10", limit, snakemake, "--profile", str(REPO / "profiles" / self.profile),
                "--snakefile", str(REPO / "Snakefile"), "--configfile", str(self.config),
                "--directory", str(workdir), "--rerun-incomplete"]  # fmt: skip
        argv += list(SLURM_OPTIONS) if self.slurm else ["--cores", str(self.cores)]
        if self.retries is not None:
            argv += ["--retries", str(self.retries)]
        return argv + list(extra)

    def start(self, workdir: Path, attempt: int) -> subprocess.Popen:
        log = open(workdir / f"snakemake.attempt{attempt:02d}.log", "w")  # noqa: SIM115 - closed in finish
        proc = subprocess.Popen(self.argv(workdir), stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
        proc.log_file = log  # type: ignore[attr-defined]
        return proc

    def call(self, workdir: Path, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(workdir, *extra, timeout_s=300), cwd=workdir, capture_output=True, text=True
        )

    def unlock(self, workdir: Path) -> None:
        self.call(workdir, "--unlock")


def finish(proc: subprocess.Popen) -> int:
    code = proc.wait()
    proc.log_file.close()  # type: ignore[attr-defined]
    return code


# ------------------------------------------------------------------------------------------------ validity
def validate(path: Path, rel: str, manifest_sha: dict[str, str] | None = None) -> str | None:
    """None if the artifact at `path` is complete and valid, else what is wrong with it."""
    from minigo_core.data import gamefile, shards
    from minigo_core.nn import model

    try:
        if fnmatch.fnmatch(rel, "models/*.safetensors"):
            model.load_model(str(path), backend="torch")
        elif fnmatch.fnmatch(rel, "games/*/*.arrow"):
            gamefile.read_game(str(path)).training_examples()
        elif fnmatch.fnmatch(rel, "window/*/shard*.arrow"):
            shard = shards.load_shard(str(path), (manifest_sha or {}).get(rel))
            shard.rows(0, shard.num_rows)
        elif rel.endswith(".jsonl"):
            for line in path.read_text().splitlines():
                json.loads(line)
        elif rel.endswith(".json"):
            json.loads(path.read_text())
        elif rel.endswith(".yaml"):
            yaml.safe_load(path.read_text())
        elif rel.endswith(".png"):
            if not path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"):
                return "not a PNG file"
    except FileNotFoundError:
        return None  # removed meanwhile (Snakemake cleans up the outputs of a failed job)
    except Exception as exc:  # noqa: BLE001 - any failure to read is the finding
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


def artifacts(root: Path) -> dict[str, Path]:
    """Every file of a run (relative path -> path), except logs and other files in SKIP."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            if not any(fnmatch.fnmatch(rel, pattern) for pattern in SKIP):
                out[rel] = path
    return out


def manifest_checksums(root: Path) -> dict[str, str]:
    sums = {}
    for manifest in root.glob("window/*/manifest.json"):
        data = json.loads(manifest.read_text())
        for shard in data.get("shards", []):
            rel = (manifest.parent / shard["name"]).relative_to(root).as_posix()
            sums[rel] = shard["sha256"]
    return sums


class Watcher(threading.Thread):
    """Validates each artifact as soon as it appears (or changes) under a final name during the chaos run."""

    def __init__(self, root: Path, period_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.root, self.period_s = root, period_s
        self.seen: dict[str, tuple[int, int]] = {}
        self.problems: list[str] = []
        self.checked = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.scan()
            self.stop.wait(self.period_s)

    def scan(self) -> None:
        if not self.root.exists():
            return
        for rel, path in artifacts(self.root).items():
            if storage.is_temporary(rel) or rel.endswith(".jsonl"):  # metrics.jsonl is a log, appended to
                continue
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            key = (st.st_size, st.st_mtime_ns)
            if self.seen.get(rel) == key:
                continue
            self.seen[rel] = key
            problem = validate(path, rel)
            self.checked += 1
            if problem is not None:
                self.problems.append(f"{rel} was visible under its final name while invalid: {problem}")


# ------------------------------------------------------------------------------------------------ comparing
def _strip(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_strip(v, keys) for v in value]
    return value


def _json_diff(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}/{k}: only in {'reference' if k in a else 'chaos run'}")
            else:
                out += _json_diff(a[k], b[k], f"{where}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in _json_diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where or '/'}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"]


def _load_json_lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _load_structured(path: Path) -> Any:
    """A JSON, JSON-lines or CSV artifact as plain data (CSV: a list of row dicts)."""
    if path.suffix == ".jsonl":
        return _load_json_lines(path)
    if path.suffix == ".csv":
        import csv

        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    return json.loads(path.read_text())


def describe_difference(rel: str, a: Path, b: Path, ignored: frozenset[str] = frozenset()) -> str:
    """What differs between the reference's and the chaos run's version of one artifact (`ignored`: keys
    left out of the comparison)."""
    da, db = a.read_bytes(), b.read_bytes()
    offset = next((i for i, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), min(len(da), len(db)))
    head = f"{rel}: {len(da)} vs {len(db)} bytes, first difference at byte {offset}"
    try:
        if rel.endswith(".safetensors"):
            from minigo_core.nn import modelfile

            fa, fb = modelfile.read(str(a)), modelfile.read(str(b))
            sa, sb = fa.tensors, fb.tensors
            tensors = [k for k in sa if k not in sb or not np.array_equal(sa[k], sb[k])]
            fields = _json_diff(
                {"config": fa.config.to_dict(), "provenance": fa.provenance},
                {"config": fb.config.to_dict(), "provenance": fb.provenance},
            )
            return f"{head}; weights differ in {tensors[:5] or 'none'}; other fields: {fields[:6] or 'none'}"
        if fnmatch.fnmatch(rel, "games/*/*.arrow"):
            from minigo_core.data import gamefile

            ra, rb = gamefile.read_game(str(a)), gamefile.read_game(str(b))
            fields = _json_diff(ra.metadata, rb.metadata)
            same_rows = bool(
                np.array_equal(ra.visits, rb.visits) and np.array_equal(ra.root_value, rb.root_value)
            )
            rows = "equal" if same_rows else "differ"
            return f"{head}; metadata differs in {fields[:6] or 'nothing'}; rows {rows}"
        if rel.endswith((".jsonl", ".json", ".csv")):
            diff = _json_diff(_strip(_load_structured(a), ignored), _strip(_load_structured(b), ignored))
            return f"{head}; {diff[:8]}"
    except Exception as exc:  # noqa: BLE001 - the byte offset is still a useful description
        return f"{head} ({type(exc).__name__} while describing: {exc})"
    return head


def compare(reference: Path, chaos: Path) -> list[str]:
    """Every way the chaos run's artifacts differ from the reference's (empty: identical)."""
    ra, rb = artifacts(reference), artifacts(chaos)
    rb = {rel: path for rel, path in rb.items() if not storage.is_temporary(rel)}  # check_run reports them
    problems = [f"{rel}: missing from the chaos run" for rel in sorted(set(ra) - set(rb))]
    problems += [f"{rel}: only in the chaos run" for rel in sorted(set(rb) - set(ra))]
    for rel in sorted(set(ra) & set(rb)):
        keys = next((k for pattern, k in WALL_CLOCK.items() if fnmatch.fnmatch(rel, pattern)), None)
        if keys is not None:
            if _strip(_load_structured(ra[rel]), keys) != _strip(_load_structured(rb[rel]), keys):
                described = describe_difference(rel, ra[rel], rb[rel], frozenset(keys))
                problems.append(f"{described} (wall-clock fields ignored)")
        elif ra[rel].read_bytes() != rb[rel].read_bytes():
            problems.append(describe_difference(rel, ra[rel], rb[rel]))
    return problems


def check_run(root: Path, label: str, killed: dict[int, str] | None = None) -> list[str]:
    """Temporary files left behind and invalid artifacts in one run (`killed`: pid -> what the chaos run
    killed, to name the writer of a temporary file, whose name ends in `.PID.RANDOM`)."""
    problems = []
    for path in sorted(root.rglob(f"{storage.TMP_PREFIX}*")):
        parts = path.name.rsplit(".", 2)
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        writer = f" (written by pid {pid}: {killed[pid]})" if killed and pid in killed else ""
        problems.append(f"{label}: temporary file left behind: {path.relative_to(root)}{writer}")
    sums = manifest_checksums(root)
    for rel, path in artifacts(root).items():
        problem = validate(path, rel, sums)
        if problem is not None:
            problems.append(f"{label}: {rel} is invalid: {problem}")
    return problems


# ------------------------------------------------------------------------------------------------ chaos
# ------------------------------------------------------------------------------------------------ planning
def config_data(source: Path, overrides: list[str]) -> dict:
    """The run config of `source` with `KEY=VALUE` overrides (YAML values) and the root `run`."""
    data = yaml.safe_load(source.read_text())
    data["root"] = ROOT
    for item in overrides:
        key, _, value = item.partition("=")
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    return data


def write_config(path: Path, source: Path, overrides: list[str]) -> Path:
    path.write_text(yaml.safe_dump(config_data(source, overrides), sort_keys=False))
    return path


def plannable_kinds(cfg: Any, slurm: bool = False) -> list[str]:
    """The kinds a plan draws from: those the run of `cfg` starts (in pipeline order), ratings and plots
    left out; self-play as `selfplay` where some job plays K > 1 games, else `selfplay-single`."""
    kinds = ["bootstrap"]
    if cfg.generations >= 1:
        sizes = [len(games) for games in planning.selfplay_jobs(cfg)]
        kinds += ["selfplay" if max(sizes) > 1 else "selfplay-single", "games_complete", "window", "train"]
        kinds += ["train-rank"] * (cfg.train.ranks > 1) + ["train-rank-node2"] * (
            slurm and cfg.train.ranks > 1
        )
        if any(planning.evaluation_specs(cfg, g) for g in range(1, cfg.generations + 1)):
            kinds.append("evaluate")
    return kinds + ["snakemake"]


def kill_plan(kinds: list[str], kills: int, rng: np.random.Generator) -> list[str]:
    """`kills` kinds drawn from `kinds` (without repeats while possible), in the order the pipeline first
    starts them (KINDS); each Snakemake kill at a random place among them."""
    chosen = [str(k) for k in rng.permutation(kinds)[:kills]]
    while len(chosen) < kills:
        chosen.append(kinds[int(rng.integers(0, len(kinds)))])
    plan = sorted((k for k in chosen if k != "snakemake"), key=KINDS.index)
    for _ in range(chosen.count("snakemake")):
        plan.insert(int(rng.integers(0, len(plan) + 1)), "snakemake")
    return plan


def kinds_of_dry_run(text: str, job_sizes: list[int]) -> tuple[set[str], str]:
    """The kinds of process that the jobs a dry run lists would start, and those jobs (`rule xN, ...`)."""
    kinds: set[str] = set()
    counts: dict[str, int] = {}
    rule = None
    for line in text.splitlines():
        line = line.strip()
        match = re.fullmatch(r"(?:local)?rule (\w+):", line)
        if match:
            rule = match.group(1)
            counts[rule] = counts.get(rule, 0) + 1
            kinds |= {k for k, r in RULE_OF.items() if r == rule and r != "selfplay"}
        elif rule == "selfplay" and line.startswith("wildcards:"):
            job = re.search(r"\bjob=(\d+)", line)
            size = job_sizes[int(job.group(1))] if job and int(job.group(1)) < len(job_sizes) else 1
            kinds.add("selfplay" if size > 1 else "selfplay-single")
    if counts:
        kinds.add("snakemake")
    return kinds, ", ".join(f"{r} x{n}" for r, n in counts.items()) or "nothing"


# ------------------------------------------------------------------------------------------------ chaos
@dataclass
class Kill:
    """One planned kill and what became of it."""

    kind: str
    status: str = "pending"  # pending, killed, not reached
    reason: str = ""  # why not reached
    detail: dict[str, Any] = field(default_factory=dict)


def game_files(argv: list[str], workdir: Path) -> list[tuple[int, Path]]:
    """(game, file) of each game of a `minigo selfplay` job."""
    pattern, first, count = (
        option(argv, "--out") or "",
        int(option(argv, "--game") or 0),
        int(option(argv, "--count") or 1),
    )
    if count == 1 and "{game" not in pattern:
        return [(first, workdir / pattern)]
    return [(g, workdir / pattern.format(game=g)) for g in range(first, first + count)]


def _relative(path: str, workdir: Path) -> str:
    return os.path.relpath(path, workdir) if path.startswith(str(workdir) + "/") else path


@dataclass
class Aim:
    """A running process of a kind with a kill pending, and the moment drawn for it."""

    proc: Proc
    job: str  # job_of: a kill dooms the other processes of its job
    ready: Callable[[], bool]  # the moment has come
    moment: str
    poll_s: float
    env: dict[str, str]
    log: str  # its stdout (a job's log file)
    next_check: float = 0.0


class Chaos:
    """Run B: Snakemake attempts until one succeeds; each planned kill waits for a process of its kind."""

    def __init__(
        self,
        workdir: Path,
        runner: Runner,
        plan: list[str],
        rng: np.random.Generator,
        lifetime: Callable[[str], float],
        max_attempts: int,
        job_sizes: list[int],
    ) -> None:
        self.workdir, self.runner, self.rng, self.lifetime = workdir, runner, rng, lifetime
        self.kills = [Kill(kind) for kind in plan]
        self.max_attempts, self.job_sizes = max_attempts, job_sizes
        self.attempt, self.t0 = 0, time.monotonic()
        self.events: list[dict] = []
        self.misses: dict[str, int] = {}  # per kind: processes that ended before their moment
        self.jobs: dict[int, str] = {}  # pid -> job_of (cached)
        self.doomed: set[str] = set()  # jobs a kill hit: their other processes end with them

    def pending(self, kind: str | None = None) -> list[Kill]:
        return [k for k in self.kills if k.status == "pending" and kind in (None, k.kind)]

    def give_up(self, kills: list[Kill], reason: str) -> None:
        for kill in kills:
            kill.status, kill.reason = "not reached", reason
            print(f"chaos: kill of {kill.kind} not reached: {reason}", flush=True)

    def run(self) -> dict:
        code = None
        while code != 0 and self.attempt < self.max_attempts:
            self.attempt += 1
            proc = self.runner.start(self.workdir, self.attempt)
            killed_snakemake = self.attack(proc)
            code = finish(proc)
            if killed_snakemake:  # its jobs run on: wait for them, then release its lock
                left = wait_for_no_jobs(self.workdir, self.runner.timeout_s, self.runner.slurm)
                if left:
                    self.events.append(
                        {"attempt": self.attempt, "orphans_still_running": [p.kind for p in left]}
                    )
                self.runner.unlock(self.workdir)
            elif code == 0:
                self.give_up(self.pending(), f"the run finished in attempt {self.attempt} before one ran")
            elif self.pending():
                self.give_up_unreachable()
        self.give_up(self.pending(), f"no Snakemake attempt left (--max-attempts {self.max_attempts})")
        return {
            "attempts": self.attempt,
            "final_exit": code,
            "seconds": round(time.monotonic() - self.t0, 1),
            "kills_done": sum(k.status == "killed" for k in self.kills),
            "misses": self.misses,
            "events": self.events,
        }

    def attack(self, proc: subprocess.Popen) -> bool:
        """Kill while this attempt runs: each process of a pending kind is aimed at, at its own drawn
        moment; the first moment to come is a kill. True when Snakemake itself was killed (that ends the
        attempt)."""
        aims: dict[int, Aim] = {}
        next_scan = 0.0
        while proc.poll() is None and self.pending():
            now = time.monotonic()
            if now >= next_scan:
                self.arm(aims, run_processes(self.workdir), proc.pid)
                next_scan = now + 0.02
            fired = None
            for pid, aim in list(aims.items()):
                if now < aim.next_check:
                    continue
                aim.next_check = now + aim.poll_s
                if aim.ready():
                    fired = aims.pop(pid)
                    break
                if not alive(pid, aim.proc.argv):  # it ended before its moment: the next one of its kind
                    del aims[pid]
                    self.misses[aim.proc.kind] = self.misses.get(aim.proc.kind, 0) + 1
            if fired is None:
                time.sleep(
                    max(0.0, min([next_scan, *(a.next_check for a in aims.values())]) - time.monotonic())
                )
                continue
            if not self.shoot(fired):
                self.misses[fired.proc.kind] = self.misses.get(fired.proc.kind, 0) + 1
            else:
                aims = {p: a for p, a in aims.items() if a.job != fired.job and self.pending(a.proc.kind)}
                if fired.proc.kind == "snakemake":
                    return True
        return False

    def arm(self, aims: dict[int, Aim], procs: list[Proc], timeout_pid: int) -> None:
        """Aim at each new process of a kind with a kill pending (not of a job already hit); at Snakemake,
        once the kills planned before it are done, while a job runs and nothing else is aimed at (the main
        Snakemake: the child of `timeout_pid`)."""
        for p in procs:
            if p.pid in aims or p.kind == "snakemake" or not self.pending(p.kind):
                continue
            if p.pid not in self.jobs:
                self.jobs[p.pid] = job_of(p.pid, self.workdir)
            job = self.jobs[p.pid]
            if job not in self.doomed:
                aims[p.pid] = self.aim(p, job)
        main = [p for p in procs if p.kind == "snakemake" and ppid(p.pid) == timeout_pid]
        jobs_run = any(p.kind != "snakemake" for p in procs)
        if main and jobs_run and not aims and self.pending()[0].kind == "snakemake":
            aims[main[0].pid] = self.aim(main[0], "snakemake")

    def aim(self, victim: Proc, job: str) -> Aim:
        """Draw the moment to kill `victim`: a work_clock reading inside the shortest life of its kind in
        run A (halved after each miss of its kind); for a multi-game self-play job, m of its K game files
        written (m drawn in 0..K-1, 0: a work_clock moment); for Snakemake, < 1 s from now."""
        pid, kind, argv = victim
        misses = self.misses.get(kind, 0)
        env, log = environ(pid), _relative(os.path.realpath(f"/proc/{pid}/fd/1"), self.workdir)
        count = int(option(argv, "--count") or 1)
        written = int(self.rng.integers(0, count)) if kind == "selfplay" and misses < 2 else 0
        if written > 0:
            files = [f for _, f in game_files(argv, self.workdir)]
            ready: Callable[[], bool] = lambda: sum(f.exists() for f in files) >= written  # noqa: E731
            moment, poll_s = f"once {written} of its {count} game files were written", 0.001
        elif kind == "snakemake":
            at = time.monotonic() + float(self.rng.uniform(0.0, 1.0))
            ready, moment, poll_s = (lambda: time.monotonic() >= at), "< 1 s after a job of it was seen", 0.01
        else:
            life = self.lifetime(kind) * 0.5**misses
            target = float(self.rng.uniform(0.05, 0.75)) * life  # < 1: CPU readings vary a little
            ready = lambda: work_clock(victim, job, self.workdir) >= target  # noqa: E731
            moment, poll_s = f"at {target:.2f} CPU s (of {life:.2f} in run A)", 0.02
        return Aim(victim, job, ready, moment, poll_s, env, log)

    def shoot(self, aim: Aim) -> bool:
        """SIGKILL the process aimed at, and record the kill (False: it had ended meanwhile)."""
        (pid, kind, argv), env = aim.proc, aim.env
        seconds = age(pid)
        cpu = work_clock(aim.proc, aim.job, self.workdir) if kind != "snakemake" else None
        if seconds is None or not alive(pid, argv):
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        detail = {
            "pid": pid,
            "command": summarize(argv),
            "seconds_into_process": round(seconds, 3),
            "cpu_s": None if cpu is None else round(cpu, 2),
            "attempt": self.attempt,
            "t_s": round(time.monotonic() - self.t0, 1),
            "moment": aim.moment,
        }
        if kind == "snakemake":
            running = run_processes(self.workdir)
            detail["jobs_running"] = sorted(summarize(p.argv) for p in running if p.kind != "snakemake")
        if "SLURMD_NODENAME" in env:
            detail.update(node=env["SLURMD_NODENAME"], slurm_job=env.get("SLURM_JOB_ID"))
            detail.update({"rank": env["SLURM_PROCID"]} if kind.startswith("train-rank") else {})
        if kind.startswith("selfplay"):
            deadline = time.monotonic() + 5
            while alive(pid, argv) and time.monotonic() < deadline:
                time.sleep(0.01)  # SIGKILL is delivered: what it wrote is what its retry finds
            files = game_files(argv, self.workdir)
            detail.update(
                games_per_job=len(files),
                record=option(argv, "--record"),
                log=aim.log,
                game_files_at_kill=[g for g, f in files if f.exists()],
            )
        kill = self.pending(kind)[0]
        kill.status, kill.detail = "killed", detail
        self.doomed.add(aim.job)
        done = sum(k.status != "pending" for k in self.kills)
        print(
            f"chaos: kill -9 {kind} (pid {pid}, {detail['command']}, {detail['seconds_into_process']} s "
            f"into it), attempt {self.attempt}, {done} of {len(self.kills)}",
            flush=True,
        )
        return True

    def give_up_unreachable(self) -> None:
        """After a failed attempt: give up the pending kills whose kind no job left to run would start."""
        out = self.runner.call(self.workdir, "--dry-run")
        if out.returncode != 0:
            self.events.append({"attempt": self.attempt, "dry_run_failed": (out.stdout + out.stderr)[-1000:]})
            return
        remaining, planned = kinds_of_dry_run(out.stdout + out.stderr, self.job_sizes)
        for kill in self.pending():
            if kill.kind not in remaining:
                self.give_up(
                    [kill],
                    f"attempt {self.attempt} ended without one, and no job left to run "
                    f"starts one (a dry run plans: {planned})",
                )


def check_selfplay_retries(workdir: Path, kills: list[Kill]) -> list[str]:
    """For each killed self-play job: did its retry keep the game files the killed attempt had written (its
    record's `attempt.kept_from_earlier_attempt`, its log's "kept N game files of an earlier attempt")?"""
    problems = []
    for kill in kills:
        d = kill.detail
        if kill.status != "killed" or not d.get("record"):
            continue
        try:
            kept = json.loads((workdir / d["record"]).read_text())["attempt"]["kept_from_earlier_attempt"]
        except (OSError, ValueError, KeyError, TypeError):
            kept = None
        log = workdir / d["log"]
        lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
        d["retry"] = {"kept": kept, "log": next((line for line in lines if line.startswith("kept ")), None)}
        if kept is not None and not set(d["game_files_at_kill"]) <= set(kept):
            problems.append(
                f"self-play job {d['record']} was killed with games {d['game_files_at_kill']} "
                f"written, but its final attempt kept only {kept}"
            )
    return problems


def per_kind(kills: list[Kill], misses: dict[str, int]) -> dict[str, dict]:
    """The report per kind: planned, killed, not reached (with the reasons), each kill's detail, and the
    processes of the kind that ended before their drawn moment (missed: the next one was aimed at)."""
    out: dict[str, dict] = {}
    for kill in kills:
        entry = out.setdefault(kill.kind, {"planned": 0, "killed": 0, "not_reached": 0, "reasons": [],
                                           "missed": misses.get(kill.kind, 0), "kills": []})  # fmt: skip
        entry["planned"] += 1
        if kill.status == "killed":
            entry["killed"] += 1
            entry["kills"].append(kill.detail)
        else:
            entry["not_reached"] += 1
            entry["reasons"].append(kill.reason or kill.status)
    return out


def kind_table(kinds: dict[str, dict]) -> str:
    """A short table of `per_kind`: one line per kind, then the reasons of the kills not reached."""
    head = f"{'kind':17}{'planned':>8}{'killed':>7}{'not reached':>12}{'missed':>7}"
    lines = [f"{head}  kills: attempt, wall s (CPU s) into the process, ..."]
    notes = []
    for kind, e in kinds.items():
        parts = []
        for d in e["kills"]:
            cpu = f" ({d['cpu_s']:.2f})" if d.get("cpu_s") is not None else ""
            text = f"a{d['attempt']} {d['seconds_into_process']:.2f}s{cpu}"
            if "games_per_job" in d:
                kept = (d.get("retry") or {}).get("kept")
                text += (
                    f" K={d['games_per_job']}, {len(d['game_files_at_kill'])} game files, retry kept {kept}"
                )
            text += f" on {d['node']}" if "node" in d else ""
            parts.append(text)
        counts = f"{e['planned']:>8}{e['killed']:>7}{e['not_reached']:>12}{e['missed']:>7}"
        lines.append(f"{kind:17}{counts}  {'; '.join(parts)}")
        notes += [f"  {kind} not reached: {reason}" for reason in e["reasons"]]
    return "\n".join(lines + notes)


# ------------------------------------------------------------------------------------------------ the runs
def nothing_left_to_do(workdir: Path, runner: Runner) -> str | None:
    # Modification times only: a developer editing the workflow meanwhile is not an incomplete run.
    proc = runner.call(workdir, "--dry-run", "--rerun-triggers", "mtime")
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or "Nothing to be done" not in out:
        return f"a dry run after the chaos run still plans work:\n{out[-2000:]}"
    return None


def reference_run(workdir: Path, runner: Runner) -> tuple[int, float, Lifetimes]:
    """Run A, undisturbed, watching how long each kind of process lives."""
    lifetimes = Lifetimes(workdir)
    lifetimes.start()
    t0 = time.monotonic()
    try:
        code = finish(runner.start(workdir, 0))
    except BaseException:
        stop_all(workdir, runner.slurm)
        raise
    finally:
        lifetimes.stop.set()
        lifetimes.join()
    return code, time.monotonic() - t0, lifetimes


def final_checks(
    work: Path, runner: Runner, chaos: Chaos, result: dict, watcher: Watcher, left: list[Proc]
) -> list[str]:
    """Every problem of the chaos run: kills not reached, leftovers, invalid or different artifacts."""
    problems: list[str] = []
    if result["final_exit"] != 0:
        problems.append(f"the chaos run never finished (last exit {result['final_exit']})")
    problems += [
        f"kill {i + 1} of {len(chaos.kills)} ({k.kind}) not reached: {k.reason}"
        for i, k in enumerate(chaos.kills)
        if k.status != "killed"
    ]
    if left:
        problems.append(f"processes of the run still alive after it finished: {[p.kind for p in left]}")
    problems += watcher.problems
    if result["final_exit"] == 0:
        problem = nothing_left_to_do(work / "B", runner)
        problems += [problem] if problem else []
    problems += check_selfplay_retries(work / "B", chaos.kills)
    problems += check_run(work / "A" / ROOT, "reference")
    killed = {k.detail["pid"]: f"the {k.kind} process killed in attempt {k.detail['attempt']}, whose "
              "retry left it there" for k in chaos.kills if k.status == "killed"}  # fmt: skip
    problems += check_run(work / "B" / ROOT, "chaos run", killed)
    problems += compare(work / "A" / ROOT, work / "B" / ROOT)
    return problems


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", required=True, help="scratch directory (emptied first)")
    p.add_argument(
        "--config", default=str(REPO / "config" / "tiny.yaml"), help="run config (its root is ignored)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set selfplay.games=2 (YAML value)",
    )
    p.add_argument("--kills", type=int, default=10, help="kill -9s during the chaos run")
    p.add_argument(
        "--kinds",
        default=None,
        metavar="KIND,KIND,...",
        help=f"kill exactly these kinds, in this order of preference, instead of a drawn plan "
        f"(--kills is then their number); kinds: {', '.join(KINDS)}",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the plan, the kill moments and victims")
    p.add_argument(
        "--profile",
        choices=("local", "slurm"),
        default="local",
        help="profiles/local, or profiles/slurm on a running Slurm test cluster "
        "(python tests/slurm_cluster.py start DIR) with the ranks on 2 nodes",
    )
    p.add_argument("--cores", type=int, default=2, help="Snakemake --cores (local profile)")
    p.add_argument(
        "--retries",
        type=int,
        default=None,
        help="Snakemake --retries (default: the local profile's 0; 2 with --profile slurm, >= 1 there "
        "so that a killed job is resubmitted)",
    )
    p.add_argument("--timeout", type=int, default=1800, help="limit for each Snakemake call (timeout -k)")
    p.add_argument(
        "--max-attempts", type=int, default=None, help="Snakemake starts allowed (default kills + 4)"
    )
    p.add_argument("--report", default=None, help="also write the JSON report to this file")
    args = p.parse_args(argv)
    if args.profile == "slurm":
        args.retries = 2 if args.retries is None else args.retries
        if args.retries < 1:
            p.error("--profile slurm needs --retries >= 1: Snakemake resubmits a killed job")
    if args.kinds is not None:
        args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in args.kinds if k not in KINDS]
        if unknown or not args.kinds:
            p.error(f"--kinds: unknown {unknown or 'nothing given'}; kinds: {', '.join(KINDS)}")
        args.kills = len(args.kinds)
    return args


def output(report: dict, path: str | None) -> None:
    text = json.dumps(report, indent=1)
    print(text)
    if path:
        Path(path).write_text(text + "\n")
    if "kinds" in report:
        print("\n" + kind_table(report["kinds"]), flush=True)


def main(argv: list[str] | None = None) -> int:
    t0 = time.monotonic()
    args = parse_args(argv)
    work = Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "A").mkdir(parents=True)
    (work / "B").mkdir()
    config = write_config(work / "config.yaml", Path(args.config), args.set)
    cfg = workflow.run_config(yaml.safe_load(config.read_text()))
    runner = Runner(config, args.cores, args.timeout, args.profile, args.retries)
    plan = args.kinds or kill_plan(
        plannable_kinds(cfg, runner.slurm), args.kills, np.random.default_rng(args.seed)
    )
    report: dict[str, Any] = {
        "config": str(config),
        "profile": args.profile,
        "kills_requested": args.kills,
        "seed": args.seed,
        "kill_plan": plan,
    }
    if runner.slurm and not Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")).exists():
        report["problems"] = [
            "--profile slurm: no Slurm (start the test cluster: python tests/slurm_cluster.py start DIR)"
        ]
        output(report, args.report)
        return 2

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    code, seconds, lifetimes = reference_run(work / "A", runner)
    report["reference"] = {"exit": code, "seconds": round(seconds, 1), "lifetimes_s": lifetimes.summary()}
    if runner.slurm:
        report["reference"]["slurm_jobs_cancelled"] = cancel_slurm_jobs(work / "A")
    if code != 0:
        report["problems"] = [f"the undisturbed run failed (exit {code}); see {work / 'A'}/snakemake.*.log"]
        output(report, args.report)
        return 2

    watcher = Watcher(work / "B" / ROOT)
    watcher.start()
    sizes = [len(games) for games in planning.selfplay_jobs(cfg)]
    chaos = Chaos(
        work / "B",
        runner,
        plan,
        np.random.default_rng([args.seed, 1]),
        lifetimes.shortest,
        args.max_attempts or args.kills + 4,
        sizes,
    )
    try:
        report["chaos"] = chaos.run()
    except BaseException:
        stop_all(work / "B", runner.slurm)
        raise
    left = wait_for_no_jobs(work / "B", 120, runner.slurm)
    if runner.slurm:
        report["chaos"]["slurm_jobs_cancelled"] = cancel_slurm_jobs(work / "B")
    watcher.stop.set()
    watcher.join()
    watcher.scan()
    problems = final_checks(work, runner, chaos, report["chaos"], watcher, left)
    report["kinds"] = per_kind(chaos.kills, chaos.misses)
    report["artifacts_compared"] = len(artifacts(work / "A" / ROOT))
    report["artifacts_validated_while_running"] = watcher.checked
    report["problems"] = problems
    report["seconds_total"] = round(time.monotonic() - t0, 1)
    output(report, args.report)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
