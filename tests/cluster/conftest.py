"""The Slurm tests' fixtures: a real 2-node test cluster, a run under the Slurm profile beside the same run
undisturbed, and the minigo processes Slurm runs. slurm_cluster.py, beside this file, starts the cluster (and
runs by hand too); pytest puts this folder on sys.path (its default "prepend" import mode), so it imports as
`slurm_cluster` here and only here: no test module imports it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from slurm_cluster import SlurmCluster, SlurmUnavailable

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
# the test cluster's settings: a fast first status check, a local disk, one retry of a failed job; on the
# command line --set-resources replaces the profile's, so mpi is repeated
SLURM_OPTIONS = ("--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5", "--retries", "1",
                 "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=1000", "runtime=30",
                 "--set-resources", "train:mpi='srun'")  # fmt: skip


@pytest.fixture(scope="session")
def cluster():
    """A real Slurm of 2 nodes (slurm_cluster.py), shared by every Slurm test module of the session and
    stopped at its end. Skipped, with the reason, where Slurm/munge are missing or we are not root; CI=true
    fails instead."""
    try:
        c = SlurmCluster.start(nodes=2)
    except SlurmUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no test Slurm cluster: {exc} (CI must run the Slurm tests)")
        pytest.skip(f"no test Slurm cluster: {exc}")
    yield c
    c.stop()


def _snakemake(profile: str, config: Path, workdir: Path, *extra: str) -> list[str]:
    return ["timeout", "-k", "10", "900", SNAKEMAKE, "--profile", str(REPO / "profiles" / profile),
            "--snakefile", str(REPO / "Snakefile"), "--configfile", str(config), "--directory", str(workdir),
            *extra]  # fmt: skip


class RunPair:
    """One config run twice: in `A` undisturbed (the local profile, 2 cores) and in `B` through
    `profiles/slurm` on the test cluster, where a test disturbs it. Both use the same relative run root `run`,
    so they record the same paths and `tools.compare_runs` tells whether B is still the same run as A."""

    ROOT = "run"

    def __init__(self, cluster: SlurmCluster, directory: Path) -> None:
        self.cluster = cluster
        self.config = directory / "config.yaml"
        self.a, self.b = directory / "A", directory / "B"
        self.a.mkdir()
        self.b.mkdir()
        self.b_root = self.b / self.ROOT
        self.slurm_returncode: int | None = None

    def write_config(self, **sections: dict) -> None:
        """config/tiny.yaml with one generation and the root `run`, each named section updated by its
        mapping (`train={"replay_ratio": 100.0}`)."""
        data = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
        data.update(root=self.ROOT, generations=1)
        for section, values in sections.items():
            data[section].update(values)
        self.config.write_text(yaml.safe_dump(data, sort_keys=False))

    def run_reference(self) -> None:
        """Run A to its end; it must succeed."""
        reference = subprocess.run(_snakemake("local", self.config, self.a, "--cores", "2"), cwd=self.a,
                                   capture_output=True, text=True)  # fmt: skip
        assert reference.returncode == 0, (reference.stdout + reference.stderr)[-4000:]

    @contextlib.contextmanager
    def slurm_run(self, train_nodes: str, set_resources: tuple[str, ...] = ()) -> Iterator[subprocess.Popen]:
        """Run B, started in the background with `train:nodes=<train_nodes>` and the further
        `--set-resources` entries `set_resources` (`RULE:RESOURCE=VALUE`; its output in B/snakemake.log);
        the body disturbs it and waits for it. A run still going when the body ends is killed."""
        log = open(self.b / "snakemake.log", "w")  # noqa: SIM115 (closed below)
        argv = _snakemake("slurm", self.config, self.b, *SLURM_OPTIONS, f"train:nodes={train_nodes}",
                          *set_resources)  # fmt: skip
        run = subprocess.Popen(argv, cwd=self.b, stdout=log, stderr=subprocess.STDOUT, env=self.cluster.env)
        try:
            yield run
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
            log.close()
            self.slurm_returncode = run.returncode

    def slurm_log(self) -> str:
        """B's Snakemake log, once B has ended; B must have succeeded."""
        text = (self.b / "snakemake.log").read_text()
        assert self.slurm_returncode == 0, text[-6000:] + "\n" + self.cluster.log_tail()
        return text

    def assert_same_run(self) -> None:
        compare = subprocess.run([sys.executable, "-m", "tools.compare_runs", str(self.a / self.ROOT),
                                  str(self.b_root)], cwd=REPO, capture_output=True, text=True)  # fmt: skip
        assert compare.returncode == 0, compare.stdout + compare.stderr


@pytest.fixture()
def run_pair(cluster, tmp_path) -> RunPair:
    """A `RunPair` in `tmp_path` on the test cluster."""
    return RunPair(cluster, tmp_path)


def _minigo_processes(command: str) -> dict[int, dict[bytes, bytes]]:
    """pid -> environment of every `minigo COMMAND` process (python -m minigo_core.cli COMMAND; not the srun
    that starts one) on this host."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"minigo_core.cli" not in argv or command.encode() not in argv or argv[0].endswith(b"srun"):
            continue
        found[int(proc.name)] = dict(e.split(b"=", 1) for e in environ if b"=" in e)
    return found


@pytest.fixture(scope="session")
def minigo_processes():
    """`minigo_processes(command) -> {pid: environment (bytes: bytes)}` of every `minigo COMMAND` process on
    this host, srun excepted."""
    return _minigo_processes
