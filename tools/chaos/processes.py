"""The processes of a run, from /proc: which of the run's processes exist, what kind each is (`classify`),
which job it belongs to, how far it has got (`work_clock`: CPU seconds), and how long each kind lives in
the reference run (`Lifetimes`). Local processes and those slurmd starts on this machine alike.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import NamedTuple

from minigo_core.cluster.slurm import SLURM_NON_TASK_STEPS

KIND_OF_SUBCOMMAND = {
    "train": "train",
    "window": "window",
    "evaluate": "evaluate",
    "bootstrap": "bootstrap",
    "ratings": "ratings",
    "games-complete": "games_complete",
    "plots": "plots",
    "pack": "pack",
    "ladder": "ladder",
}
# Every kind a kill can aim at, in the order the pipeline first starts them, and the rule of its job.
RULE_OF = {"bootstrap": "bootstrap", "selfplay": "selfplay", "selfplay-single": "selfplay",
           "selfplay-term": "selfplay", "disk-full": "selfplay", "games_complete": "games_complete",
           "window": "window", "train": "train", "train-term": "train", "train-rank": "train",
           "train-rank-node2": "train", "node-loss": "train", "node-loss-selfplay": "selfplay",
           "pack": "pack", "evaluate": "evaluate", "ladder": "ladder_rating", "ratings": "ratings",
           "plots": "plots",
           "snakemake": None}  # fmt: skip
# the rules whose jobs start a process of a kind, where RULE_OF's one is not all (a first rating is one too)
MORE_RULES_OF = {"ladder": ("ladder_first_rating",)}
KINDS = tuple(RULE_OF)
# the node of kind train-rank-node2 (tests/cluster/slurm_cluster.py names them node1, node2)
SECOND_NODE = "node2"
# Kinds that are not a process of their own: the kind of process whose moment they strike at. A node loss
# strikes while a training rank runs on SECOND_NODE, and takes the whole node (every process of its jobs).
TARGET_OF = {"node-loss": "train-rank-node2", "node-loss-selfplay": "selfplay"}
# A node loss that strikes while a multi-game self-play job runs on SECOND_NODE (once m of its games are
# written, as a `selfplay` kill): kinds that strike only at a process on SECOND_NODE.
ON_SECOND_NODE = ("node-loss-selfplay",)
NODE_LOSS_KINDS = ("node-loss", "node-loss-selfplay")
# SIGTERM (a preemption, a time limit) instead of SIGKILL: at a multi-game self-play job, at the launcher of
# the training ranks (it passes it on to them; under Slurm srun does). A full disk strikes while a self-play
# job runs: run B's root (a tmpfs of its own) is filled at its moment, and freed when the attempt ends.
TARGET_OF.update({"selfplay-term": "selfplay", "train-term": "train", "disk-full": "selfplay"})
SIGTERM_KINDS = ("selfplay-term", "train-term")


def target(kind: str) -> str:
    """The kind of process a kill of `kind` waits for and strikes at."""
    return TARGET_OF.get(kind, kind)


def strikes(kill_kind: str, proc_kind: str, env: dict[str, str] | None) -> bool:
    """Whether a kill of `kill_kind` strikes at a process of `proc_kind` with environment `env` (None: not
    read yet, for a kill that does not care)."""
    if target(kill_kind) != proc_kind:
        return False
    return kill_kind not in ON_SECOND_NODE or (env or {}).get("SLURMD_NODENAME") == SECOND_NODE


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
