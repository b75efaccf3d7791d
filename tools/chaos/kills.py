"""The kills of the chaos run: which kinds a run starts and the seeded plan drawn from them (`kill_plan`),
and run B itself (`Chaos`): Snakemake attempts until one succeeds, each planned kill waiting for a process
of its kind and hitting it at a drawn moment of its life.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minigo_core.data import layout, schedule, storage
from tools.chaos.disk import SmallDisk
from tools.chaos.processes import (
    KINDS,
    MORE_RULES_OF,
    NODE_LOSS_KINDS,
    ON_SECOND_NODE,
    RULE_OF,
    SECOND_NODE,
    SIGTERM_KINDS,
    Proc,
    age,
    alive,
    environ,
    job_of,
    option,
    ppid,
    run_processes,
    strikes,
    summarize,
    target,
    work_clock,
)
from tools.chaos.runs import Runner, finish, node_action, wait_for_no_jobs


def plannable_kinds(cfg: Any, slurm: bool = False) -> list[str]:
    """The kinds a plan draws from: those the run of `cfg` starts (in pipeline order), ratings and plots
    left out; self-play as `selfplay` where some job plays K > 1 games, else `selfplay-single`."""
    kinds = ["bootstrap"]
    if cfg.generations >= 1:
        sizes = [len(games) for games in schedule.selfplay_jobs(cfg)]
        kinds += ["selfplay" if max(sizes) > 1 else "selfplay-single", "games_complete", "window", "train"]
        kinds += ["train-rank"] * (cfg.train.ranks > 1) + ["train-rank-node2", "node-loss"] * (
            slurm and cfg.train.ranks > 1
        )
        if cfg.storage.pack_old_generations and cfg.generations >= schedule.last_window(cfg, 0):
            kinds.append("pack")  # generation 0 is packed once its last window (W's) is built
        if any(schedule.evaluation_specs(cfg, g) for g in range(1, cfg.generations + 1)):
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


# The kinds a soak draws from beside `plannable_kinds` (a drawn plan leaves them out: its kills stay the same
# for a seed): the other signals and faults, and the jobs of ratings and the report.
SOAK_EXTRA_KINDS = ("selfplay-term", "train-term", "disk-full", "ladder", "ratings", "plots")


def soak_kinds(cfg: Any, slurm: bool = False, disk: bool = True) -> list[str]:
    """Every kind a soak of the run of `cfg` can meet: what a drawn plan draws from, the SIGTERMs, a full
    disk (`disk`: when run B's root can be a tmpfs of its own), the ladder's ratings where the run rates,
    the summary's jobs."""
    kinds = plannable_kinds(cfg, slurm)
    rates = cfg.evaluate.ladder and "evaluate" in kinds
    extra = [k for k in SOAK_EXTRA_KINDS if (k != "disk-full" or disk) and (k != "ladder" or rates)]
    return [k for k in KINDS if k in kinds or k in extra]


END_KINDS = ("ratings", "plots")  # the summary's jobs: at the end of a run


def soak_plan(kinds: list[str], kills: int, rng: np.random.Generator) -> list[str]:
    """A soak's faults: every kind once (`kills` >= their number) in a seeded order -- a bootstrap (once, at
    the start) first, the summary's jobs (at the end of the run) last -- then repeats drawn from the kinds
    between them (no Snakemake: its kill waits for those planned before it), as the run allows."""
    first = [k for k in kinds if k == "bootstrap"]
    last = [k for k in kinds if k in END_KINDS]
    middle = [k for k in kinds if k not in first and k not in last]
    if kills < len(kinds):
        raise ValueError(f"a soak of {len(kinds)} kinds needs --kills >= {len(kinds)}, got {kills}")
    repeatable = [k for k in middle if k != "snakemake"]
    repeats = [repeatable[int(rng.integers(0, len(repeatable)))] for _ in range(kills - len(kinds))]
    return first + [str(k) for k in rng.permutation(middle)] + last + repeats


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
            kinds |= {
                k for k, r in RULE_OF.items() if rule in (r, *MORE_RULES_OF.get(k, ())) and r != "selfplay"
            }
        elif rule == "selfplay" and line.startswith("wildcards:"):
            job = re.search(r"\bjob=(\d+)", line)
            size = job_sizes[int(job.group(1))] if job and int(job.group(1)) < len(job_sizes) else 1
            kinds.add("selfplay" if size > 1 else "selfplay-single")
    if counts:
        kinds.add("snakemake")
    return kinds, ", ".join(f"{r} x{n}" for r, n in counts.items()) or "nothing"


@dataclass
class Kill:
    """One planned kill and what became of it."""

    kind: str
    optional: bool = False  # a soak's repeat of a kind: made if the run allows, not a problem if not
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


def pack_stage(argv: list[str], workdir: Path, stage: int) -> tuple[Callable[[], bool], str]:
    """The moment to kill a `minigo pack` job at `stage`: 1 once its pack's temporary file exists (writing),
    2 once the pack exists (verifying, deleting the loose files)."""
    marker = workdir / (option(argv, "--out") or "")
    pack = marker.with_name(marker.name.removesuffix(layout.PACKED_SUFFIX) + layout.PACK_SUFFIX)
    if stage == 1:
        pattern = f"{storage.TMP_PREFIX}{pack.name}.*"
        return (lambda: any(pack.parent.glob(pattern))), "once its pack's temporary file existed"
    return pack.exists, "once its pack existed (verifying, deleting the loose files)"


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
        soak_repeats_from: int | None = None,
    ) -> None:
        self.workdir, self.runner, self.rng, self.lifetime = workdir, runner, rng, lifetime
        self.kills = [Kill(kind) for kind in plan]
        if soak_repeats_from is not None:  # a soak: the kills from there on are repeats
            for kill in self.kills[soak_repeats_from:]:
                kill.optional = True
        # a soak: at least this many seconds between two faults (none: a kill as soon as its moment comes)
        self.gap_s: float | None = None
        self.last_fault = -float("inf")
        self.max_attempts, self.job_sizes = max_attempts, job_sizes
        self.attempt, self.t0 = 0, time.monotonic()
        self.events: list[dict] = []
        self.misses: dict[str, int] = {}  # per kind: processes that ended before their moment
        self.jobs: dict[int, str] = {}  # pid -> job_of (cached)
        self.doomed: set[str] = set()  # jobs a kill hit: their other processes end with them
        self.lost_nodes: set[str] = set()  # nodes a node-loss took down, brought back after its attempt
        self.disk: SmallDisk | None = None  # run B's root on a tmpfs of its own, for a disk-full

    def pending(self, kind: str | None = None) -> list[Kill]:
        return [k for k in self.kills if k.status == "pending" and kind in (None, k.kind)]

    def due(self) -> list[Kill]:
        """The pending kills that may strike now: all of them, but in a soak until `gap_s` seconds have passed
        since the last fault (the summary's jobs excepted), and there each kind once before any repeat."""
        pending = self.pending()
        if self.gap_s is not None and time.monotonic() < self.last_fault + self.gap_s:
            # but the summary's jobs: seconds long, once at the end of the run, often beside each other
            return [k for k in pending if k.kind in END_KINDS and not k.optional]
        if any(not k.optional and k.kind not in END_KINDS for k in pending):  # each kind once first
            return [k for k in pending if not k.optional]
        return pending

    def pending_for(
        self, proc_kind: str, pid: int | None = None, env: dict[str, str] | None = None
    ) -> list[Kill]:
        """The due kills that strike at a process of `proc_kind` (`target`); at process `pid` (environment
        `env`, read when a kill needs it: one on SECOND_NODE only)."""
        due = [k for k in self.due() if target(k.kind) == proc_kind]
        if env is None and pid is not None and any(k.kind in ON_SECOND_NODE for k in due):
            env = environ(pid)
        return [k for k in due if pid is None and env is None or strikes(k.kind, proc_kind, env)]

    def restore_nodes(self) -> None:
        """Bring back the nodes a node-loss took down (a new slurmd, resumed)."""
        for node in sorted(self.lost_nodes):
            node_action("restore", node)
            self.events.append({"attempt": self.attempt, "node_restored": node})
            print(f"chaos: node {node} restored", flush=True)
        self.lost_nodes.clear()

    def free_disk(self) -> None:
        """Delete the filler of a disk-full (the user frees space), once the attempt it failed has ended."""
        if self.disk is not None and self.disk.free():
            self.events.append({"attempt": self.attempt, "disk_freed": str(self.disk.filler)})
            print("chaos: disk space freed", flush=True)

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
            self.restore_nodes()  # the attempt ran on without them (its retries on the nodes left)
            self.free_disk()  # the attempt failed on the full disk: space is freed before the rerun
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
            if not self.due():  # a soak's gap after a fault: nothing aimed at until it has passed
                aims.clear()
                time.sleep(0.05)
                continue
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
                aims = {
                    p: a
                    for p, a in aims.items()
                    if a.job != fired.job and self.pending_for(a.proc.kind, p, a.env)
                }
                if fired.proc.kind == "snakemake":
                    return True
        return False

    def arm(self, aims: dict[int, Aim], procs: list[Proc], timeout_pid: int) -> None:
        """Aim at each new process of a kind with a kill pending (not of a job already hit); at Snakemake,
        once the kills planned before it are done, while a job runs and nothing else is aimed at (the main
        Snakemake: the child of `timeout_pid`)."""
        for p in procs:
            if p.pid in aims or p.kind == "snakemake" or not self.pending_for(p.kind, p.pid):
                continue
            if p.pid not in self.jobs:
                self.jobs[p.pid] = job_of(p.pid, self.workdir)
            job = self.jobs[p.pid]
            if job not in self.doomed:
                aims[p.pid] = self.aim(p, job)
        main = [p for p in procs if p.kind == "snakemake" and ppid(p.pid) == timeout_pid]
        jobs_run = any(p.kind != "snakemake" for p in procs)
        due = self.due()
        if main and jobs_run and not aims and due and due[0].kind == "snakemake":
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
        elif kind == "pack" and misses < 2 and (stage := int(self.rng.integers(0, 3))) > 0:
            ready, moment = pack_stage(argv, self.workdir, stage)
            poll_s = 0.001
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
        """SIGKILL the process aimed at (a SIGTERM kind: SIGTERM; a node-loss: its whole node; a disk-full:
        fill run B's disk), and record the kill (False: it had ended meanwhile)."""
        (pid, kind, argv), env = aim.proc, aim.env
        seconds = age(pid)
        cpu = work_clock(aim.proc, aim.job, self.workdir) if kind != "snakemake" else None
        if seconds is None or not alive(pid, argv):
            return False
        kill = self.pending_for(kind, pid, env)[0]
        lost: list[str] = []
        filled, sent = None, time.monotonic()
        if kill.kind in NODE_LOSS_KINDS:  # node2's slurmd, slurmstepd and job processes, then marked down
            lost = node_action("lose", SECOND_NODE).splitlines()
            self.lost_nodes.add(SECOND_NODE)
        elif kill.kind == "disk-full":
            if self.disk is None:
                raise RuntimeError("a disk-full kill needs run B's root on a tmpfs (Chaos.disk)")
            # the victim held still while the filler grows (SIGSTOP, then SIGCONT): a job that would finish
            # its next game file within the fill (tens of ms under load) fails at that write instead
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
            try:
                filled = self.disk.fill()  # every writer of the run fails at its next write
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
        else:
            try:
                os.kill(pid, signal.SIGTERM if kill.kind in SIGTERM_KINDS else signal.SIGKILL)
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
        if lost:
            detail.update(node_lost=SECOND_NODE, processes_killed=lost)
        if filled is not None:
            detail.update(disk_filled_bytes=filled)
        if kill.kind in SIGTERM_KINDS:
            detail.update(signal="SIGTERM")
        if kind.startswith("selfplay"):
            # a signal is delivered (a node lost: its processes killed): what it wrote is what its retry
            # finds; on a full disk the job runs on until its next write fails: what the disk held then
            deadline = time.monotonic() + (0 if kill.kind == "disk-full" else 5)
            while alive(pid, argv) and time.monotonic() < deadline:
                time.sleep(0.01)
            if kill.kind in SIGTERM_KINDS:  # a self-play job stops within a write of its SIGTERM
                detail.update(exited_after_s=None if alive(pid, argv) else round(time.monotonic() - sent, 3))
            files = game_files(argv, self.workdir)
            detail.update(
                games_per_job=len(files),
                record=option(argv, "--record"),
                log=aim.log,
                game_files_at_kill=[g for g, f in files if f.exists()],
            )
        kill.status, kill.detail = "killed", detail
        self.last_fault = time.monotonic()
        self.doomed.add(aim.job)
        done = sum(k.status != "pending" for k in self.kills)
        what = f"node-loss of {SECOND_NODE} ({len(lost)} processes), at" if lost else "kill -9"
        what = "SIGTERM to" if kill.kind in SIGTERM_KINDS else what
        what = f"disk full ({filled} bytes of filler) while" if filled is not None else what
        print(
            f"chaos: {what} {kind} (pid {pid}, {detail['command']}, {detail['seconds_into_process']} s "
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
            if target(kill.kind) not in remaining:
                self.give_up(
                    [kill],
                    f"attempt {self.attempt} ended without one, and no job left to run "
                    f"starts one (a dry run plans: {planned})",
                )
