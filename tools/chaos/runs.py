"""Running the workflow for the chaos run: the run config, Snakemake calls (local profile or the Slurm test
cluster), the undisturbed reference run, and waiting for or stopping what a run leaves behind (its
processes, its Slurm jobs).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from tools.chaos.processes import SECOND_NODE, Lifetimes, Proc, run_processes

REPO = Path(__file__).resolve().parents[2]
ROOT = "run"  # the run root, relative to each run's working directory
# Slurm job states in which a job still holds (or will hold) processes; squeue lists finished jobs for
# MinJobAge seconds after their end, in the other states.
SLURM_ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}  # fmt: skip


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


# ------------------------------------------------------------------------------------- a node of the cluster
SLURM_CONF = Path("/etc/slurm/slurm.conf")
CLUSTER_SCRIPT = REPO / "tests" / "cluster" / "slurm_cluster.py"
CLUSTER_MARKER = "; state in "  # the first line of the test cluster's slurm.conf ends with its directory


def test_cluster_dir() -> Path | None:
    """The state directory of the running test cluster (tests/cluster/slurm_cluster.py), from the first
    line of the slurm.conf it wrote; None when the Slurm there is not a test cluster."""
    try:
        first = SLURM_CONF.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("#") or CLUSTER_MARKER not in first:
        return None
    return Path(first.rsplit(CLUSTER_MARKER, 1)[1].strip())


def node_action(action: str, node: str) -> str:
    """`lose` or `restore` node `node` of the test cluster (slurm_cluster.py's command line); its output."""
    directory = test_cluster_dir()
    if directory is None:
        raise RuntimeError(f"no test cluster's slurm.conf at {SLURM_CONF}: cannot {action} {node}")
    out = subprocess.run([sys.executable, str(CLUSTER_SCRIPT), action, str(directory), node],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"slurm_cluster.py {action} {node} failed: {(out.stdout + out.stderr)[-1000:]}")
    return out.stdout


def stop_all(workdir: Path, slurm: bool = False) -> None:
    """SIGKILL every process of the run, cancel its Slurm jobs (when the driver itself is stopped)."""
    if slurm:
        cancel_slurm_jobs(workdir)
    for pid, _, _ in run_processes(workdir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------------ snakemake
# A Slurm run on the test cluster (tests/cluster/test_slurm.py): a fast first status check, a local disk, the
# test partition; the ranks on 2 nodes (on the command line --set-resources replaces the profile's, so mpi is
# repeated).
SLURM_OPTIONS = ("--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5",
                 "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=1000", "runtime=30",
                 "--set-resources", "train:mpi='srun'")  # fmt: skip
# the ranks on 2 nodes; a retry after a node loss runs them on the node left (profiles/slurm: train nodes)
TRAIN_NODES = "train:nodes=2 if attempt == 1 else 1"


@dataclass
class Runner:
    """How to call Snakemake on a run: the config, the profile (local or slurm) and its options."""

    config: Path
    cores: int = 2
    timeout_s: int = 1800
    profile: str = "local"
    retries: int | None = None  # None: the profile's
    # Slurm: every self-play job's first attempt on node2 (a retry anywhere: node1 once node2 is lost), so
    # that a node-loss-selfplay finds one there; the training ranks then on one node
    selfplay_on_second_node: bool = False

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
        if self.slurm and self.selfplay_on_second_node:  # more values of SLURM_OPTIONS' --set-resources
            # training on one node: its first attempt may come while node2 is down (until the attempt ends)
            argv += [
                f"selfplay:slurm_extra='--nodelist={SECOND_NODE}' if attempt == 1 else ''",
                "train:nodes=1",
            ]
        elif self.slurm:
            argv.append(TRAIN_NODES)
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
