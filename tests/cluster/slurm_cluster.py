"""A real Slurm of several nodes on this one machine for the Slurm-profile tests: munged, slurmctld and one
`slurmd -N nodeI` per node (2 by default).

    cluster = SlurmCluster.start()        # ~5-10 s; raises SlurmUnavailable with the reason if it cannot
    cluster = SlurmCluster.start(nodes=1) # node1 only
    subprocess.run([...], env=cluster.env)  # SLURM_CONF points at this cluster's slurm.conf
    cluster.lose_node("node2")            # node2 dies: its slurmd, slurmstepd and job processes kill -9'd,
                                          # the node marked down (as SlurmdTimeout would); see lose_node
    cluster.restore_node("node2")         # a new slurmd for node2, the node resumed and idle again
    cluster.stop()                        # cancels its jobs, then stops exactly the daemons it started

Everything lives in one private directory (config, state, spool, logs, the munge socket), and the daemons use
free ports, so the cluster touches nothing system-wide but /etc/slurm/slurm.conf (SLURM_CONF below, while it
runs) and is invisible to processes that do not get `env`:
in particular Snakemake runs of the other tests never see a slurm.conf, so the Slurm executor plugin's probes
fail at once instead of waiting for a controller. Daemon pids are recorded in `pids.json` in that directory;
`stop()` signals only those pids. The starting process's pid is in `owner.pid`: a later `start` that finds
the daemons of a cluster whose owner is gone (a test run killed before its `stop`) stops them first, where
before every later Slurm test errored with "another test cluster is running".

Slurm facts this relies on (Slurm 22.05 from Debian 12): munged runs as the munge user with the system key;
`proctrack/linuxproc` and `task/none` need no cgroups. Debian's slurmd is built with multiple-slurmd support,
so several slurmd daemons run on one host: each node is `NodeName=nodeI NodeHostname=localhost
NodeAddr=127.0.0.1 Port=<its own free port>`, started as `slurmd -N nodeI`, and `%n` (the node name) in
SlurmdSpoolDir, SlurmdPidFile and SlurmdLogFile gives each its own spool directory, pid and log file. The node
names do not resolve (`scontrol show node nodeI` gives NodeAddr 127.0.0.1): what a job on them needs of a
node's address must come from Slurm. Every node claims all of the machine's CPUs (`slurmd -C`): this is a test
cluster, so N nodes oversubscribe the machine N times; the memory (less 1 GiB for the system) is split
between them, as slurmd refuses a node that claims more memory than the machine has.

Job status and MinJobAge. There is no slurmdbd (`accounting_storage/none`), so the Snakemake Slurm plugin
must use `squeue` (`slurm-status-command: squeue`; `sacct` is installed but has no accounting to read), and
squeue only sees a finished job until slurmctld purges it, MinJobAge seconds after it ended. What the plugin
(snakemake-executor-plugin-slurm 2.8.0, `__init__.py`) does:
- `Executor.check_active_jobs` runs one status query per cycle (up to `status_attempts` = 5 tries, each
  `query_job_status` with a 60 s timeout, job_status_query.py), then sleeps: the first sleep is
  `init_seconds_before_status_checks` (default 40), and every cycle in which no job finished adds 10 s,
  capped at `max_sleep_time = 180`; a finished job resets it to the initial interval.
- a job that the query no longer lists (`status_lookup_id is None`) is taken for "not yet visible" and
  yielded as still running; so a job purged from squeue before a query saw it finished is never reported
  and the workflow waits for it for ever (no error, no timeout).
- with status command squeue, if MinJobAge < `3 * init_seconds_before_status_checks` (120 s at the
  default 40) and `sacct` is on the PATH, it switches itself to sacct ("Falling back to 'sacct'"), which
  here has no accounting storage; `validate_status_command_settings` warns at the same threshold.
So a finished job must stay in squeue longer than the longest gap between its end and the next successful
query: one sleep (<= 180 s) plus one cycle whose tries time out (<= 5 x 60 s), 480 s in all. MinJobAge=600
covers that with margin (and is far above the 120 s switch to sacct, so squeue is kept).

A lost node (`lose_node`): a node that dies takes its slurmd, the slurmstepd of every job step on it and
the jobs' processes with it, and slurmctld marks it down once it has not heard from it for SlurmdTimeout.
Here the node's processes are the slurmd recorded for it, every process whose environment says
SLURMD_NODENAME=nodeI (the jobs' processes: slurmstepd sets it), every process with the node's slurmd log
open (its slurmstepd daemons, which log there), and the descendants of all of them; they are SIGKILLed,
then the node is set down at once (`scontrol update ... state=down`) instead of waiting SlurmdTimeout.
`restore_node` starts a new slurmd for it (recorded in pids.json) and resumes it.

Run by hand: `python tests/cluster/slurm_cluster.py start DIR [NODES]`, `... lose DIR NODE`,
`... restore DIR NODE` and `python tests/cluster/slurm_cluster.py stop DIR`.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MUNGE_KEY = Path("/etc/munge/munge.key")
# The jobs' own `srun` calls cannot be pointed elsewhere: the Snakemake Slurm jobstep plugin drops every
# SLURM_* variable (SLURM_CONF included) before it runs a job. So the test cluster's slurm.conf goes to the
# default path for as long as the cluster runs, marked as ours; stop() removes it again (and start() removes
# a stale one of ours whose daemons are gone). A slurm.conf that is not ours means a real Slurm: left alone.
SLURM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# written by tests/slurm_cluster.py for a temporary test cluster; state in "
DAEMONS = ("munged", "slurmctld", "slurmd")
# > the plugin's longest gap between a job's end and a status query that sees it (180 s sleep + 5 x 60 s
# query timeouts = 480 s), with margin; see the docstring.
MIN_JOB_AGE_S = 600


class SlurmUnavailable(RuntimeError):
    """Slurm or munge is not installed, or this process may not start the daemons (the reason is given)."""


def _which(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )


def _free_ports(n: int) -> list[int]:
    """`n` distinct free ports on 127.0.0.1 (all held open while choosing, so they differ)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_names(nodes: int) -> list[str]:
    return [f"node{i}" for i in range(1, nodes + 1)]


def _node_lines(nodes: int, ports: list[int]) -> list[str]:
    """One `NodeName=nodeI ... Port=...` line per node: every node claims all CPUs of `slurmd -C` (a test
    cluster), the memory less 1 GiB for the system is split between the nodes."""
    out = subprocess.run(
        [_which("slurmd") or "slurmd", "-C"], capture_output=True, text=True, timeout=30
    ).stdout
    first = out.splitlines()[0].split() if out.strip() else []
    fields = dict(f.split("=", 1) for f in first if "=" in f)
    cpus = fields.get("CPUs", str(os.cpu_count() or 1))
    memory = max(512, (int(fields.get("RealMemory", "2048")) - 1024) // nodes)
    return [
        f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs={cpus} "
        f"RealMemory={memory} State=UNKNOWN"
        for name, port in zip(node_names(nodes), ports, strict=True)
    ]


def check_available() -> None:
    """Raise SlurmUnavailable unless the binaries, the munge key and root rights are present."""
    missing = [
        name for name in (*DAEMONS, "sbatch", "squeue", "sinfo", "scancel", "srun") if not _which(name)
    ]
    if missing:
        raise SlurmUnavailable(
            f"not installed: {', '.join(missing)} (`make test-cluster` installs them; without root, ask for "
            "`sudo apt-get install -y slurm-wlm munge`)"
        )
    if not MUNGE_KEY.exists():
        raise SlurmUnavailable(f"{MUNGE_KEY} is missing (the munge package creates it)")
    if os.geteuid() != 0:
        raise SlurmUnavailable("starting slurmctld/slurmd needs root (this test cluster runs them as root)")
    try:
        pwd.getpwnam("munge")
    except KeyError:
        raise SlurmUnavailable("there is no 'munge' user (the munge package creates it)") from None


def _conf_text(base: Path, socket_path: Path, nodes: int) -> str:
    """slurm.conf of the test cluster: `nodes` nodes on this host, each slurmd on its own port."""
    ctld_port, default_slurmd_port, *node_ports = _free_ports(2 + nodes)
    return "\n".join(
        [
            "ClusterName=minigotest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={default_slurmd_port}",  # each node overrides it with its own Port=
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={socket_path}",
            f"StateSaveLocation={base / 'state'}",
            f"SlurmdSpoolDir={base / 'spool' / '%n'}",  # %n: the node name (multiple-slurmd)
            f"SlurmctldPidFile={base / 'slurmctld.pid'}",
            f"SlurmdPidFile={base / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={base / 'slurmctld.log'}",
            f"SlurmdLogFile={base / 'slurmd-%n.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SchedulerType=sched/backfill",
            "ReturnToService=2",
            # finished jobs stay visible to squeue (the plugin's status command) for 10 min: see the docstring
            f"MinJobAge={MIN_JOB_AGE_S}",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=5",
            *_node_lines(nodes, node_ports),
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@dataclass
class SlurmCluster:
    directory: Path
    env: dict[str, str]
    nodes: list[str] = field(default_factory=list)  # node1, node2, ...
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return SLURM_CONF

    @classmethod
    def start(
        cls, directory: str | Path | None = None, timeout: float = 60.0, nodes: int = 2
    ) -> SlurmCluster:
        """Start munged, slurmctld and `nodes` slurmd daemons; return once every node is idle."""
        check_available()
        if nodes < 1:
            raise ValueError(f"nodes must be >= 1, not {nodes}")
        # short: the munge socket path is limited
        base = Path(directory or tempfile.mkdtemp(prefix="mgslurm-"))
        base.mkdir(parents=True, exist_ok=True)
        os.chmod(base, 0o755)
        munge_dir = base / "munge"
        munge_dir.mkdir(exist_ok=True)
        munge = pwd.getpwnam("munge")
        os.chown(munge_dir, munge.pw_uid, munge.pw_gid)
        os.chmod(munge_dir, 0o755)  # munged wants its socket directory searchable by all
        socket_path = munge_dir / "munge.socket"
        (base / "state").mkdir(exist_ok=True)
        for name in node_names(nodes):
            (base / "spool" / name).mkdir(parents=True, exist_ok=True)
        conf = _conf_text(base, socket_path, nodes)
        _claim_default_conf(base)
        (base / "slurm.conf").write_text(conf)
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SLURM_CONF.write_text(f"{MARKER}{base}\n{conf}")
        env = {**os.environ, "SLURM_CONF": str(SLURM_CONF)}
        for key in [k for k in env if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            env.pop(key)
        cluster = cls(base, env, nodes=node_names(nodes))
        try:
            cluster._spawn(
                "munged",
                [
                    _which("munged"),
                    "--foreground",
                    f"--socket={socket_path}",
                    f"--key-file={MUNGE_KEY}",
                    f"--pid-file={munge_dir / 'munged.pid'}",
                    f"--log-file={munge_dir / 'munged.log'}",
                    f"--seed-file={munge_dir / 'munged.seed'}",
                ],
                user=munge,
            )
            cluster._wait(lambda: socket_path.exists(), timeout, "munged to create its socket")
            cluster._spawn("slurmctld", [_which("slurmctld"), "-D", "-c", "-i", "-f", str(cluster.conf)])
            cluster._wait(lambda: cluster._ok(["scontrol", "ping"], "UP"), timeout, "slurmctld to answer")
            for name in cluster.nodes:
                cluster._spawn(f"slurmd-{name}", _slurmd_argv(name))
            cluster._wait(cluster._nodes_idle, timeout, f"nodes {', '.join(cluster.nodes)} to become idle")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    # --------------------------------------------------------------------------------------------- helpers
    def _spawn(self, name: str, argv: list[str], user: pwd.struct_passwd | None = None) -> None:
        log = open(self.directory / f"{name}.out", "ab")  # noqa: SIM115 (closed with the process)
        ids = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True, **ids
        )
        log.close()
        self.processes[name] = proc
        self._record()

    def _record(self) -> None:
        pids = {name: p.pid for name, p in self.processes.items()}
        (self.directory / "pids.json").write_text(json.dumps(pids))
        (self.directory / "owner.pid").write_text(f"{os.getpid()}\n")  # the process that started them

    def _ok(self, argv: list[str], needle: str = "") -> bool:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return out.returncode == 0 and needle in out.stdout

    def _nodes_idle(self) -> bool:
        """Every node of this cluster is up (idle, or running jobs already)."""
        try:
            out = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%N %T"], capture_output=True, text=True, env=self.env, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
        return sorted(states) == sorted(self.nodes) and all(
            s in ("idle", "mixed", "allocated") for s in states.values()
        )

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.processes.items():
                if proc.poll() is not None:
                    raise SlurmUnavailable(
                        f"{name} exited with {proc.returncode} while waiting for {what}; "
                        f"see {self.log_tail()}"
                    )
            if ready():
                return
            time.sleep(0.2)
        raise SlurmUnavailable(f"timed out after {timeout:.0f} s waiting for {what}; see {self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the daemons' logs (for error messages)."""
        parts = []
        for path in sorted(self.directory.glob("*.log")) + sorted(self.directory.glob("*.out")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path}\n" + "\n".join(text))
        return "\n".join(parts)

    def lose_node(self, name: str, reason: str = "lost (test)") -> list[tuple[int, str]]:
        """Node `name` dies (see the docstring): its processes SIGKILLed, the node marked down. The
        processes killed, (pid, command)."""
        killed = lose_node(self.directory, name, self.env, reason)
        proc = self.processes.get(f"slurmd-{name}")
        if proc is not None:
            proc.wait(timeout=10)
        return killed

    def restore_node(self, name: str, timeout: float = 60.0) -> None:
        """Bring a lost node back: a new slurmd for it, the node resumed; return once every node is up."""
        self._spawn(f"slurmd-{name}", _slurmd_argv(name))
        _resume(name, self.env)
        self._wait(self._nodes_idle, timeout, f"node {name} to come back")

    def stop(self) -> None:
        """Cancel this cluster's jobs, then stop the daemons it started (by their recorded pids only)."""
        if "slurmctld" in self.processes and self.processes["slurmctld"].poll() is None:
            subprocess.run(
                ["scancel", "--full", "--user", pwd.getpwuid(os.getuid()).pw_name],
                capture_output=True,
                env=self.env,
                timeout=30,
            )
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                out = subprocess.run(
                    ["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=self.env, timeout=10
                )
                if out.returncode != 0 or not out.stdout.strip():
                    break
                time.sleep(0.5)
        for name in _stop_order(self.processes):
            proc = self.processes[name]
            if proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self.processes.clear()
        self._record()
        _release_default_conf(self.directory)


def _slurmd_argv(name: str) -> list[str]:
    return [_which("slurmd") or "slurmd", "-D", "-N", name, "-f", str(SLURM_CONF)]


def _environ(pid: int) -> dict[str, str]:
    try:
        items = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in items if "=" in item)


def _has_open(pid: int, path: Path) -> bool:
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(fd) == str(path):
                return True
    return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live process of the machine (zombies left out: they are gone)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                state, parent = stat[stat.rfind(")") + 2 :].split()[:2]
                if state != "Z":
                    out[int(entry.name)] = int(parent)
    return out


def node_processes(directory: str | Path, name: str) -> list[int]:
    """The processes of node `name` of the test cluster in `directory` (see the docstring: its slurmd, its
    slurmstepd daemons, its jobs' processes and all their descendants)."""
    pids_file = Path(directory) / "pids.json"
    recorded = json.loads(pids_file.read_text()) if pids_file.exists() else {}
    log = Path(directory) / f"slurmd-{name}.log"
    parents = _parents()
    roots = {p for p in parents if _environ(p).get("SLURMD_NODENAME") == name or _has_open(p, log)}
    roots.add(recorded.get(f"slurmd-{name}", 0))
    found, todo = set(), [p for p in roots if p in parents]
    while todo:
        pid = todo.pop()
        if pid not in found and pid != os.getpid():
            found.add(pid)
            todo += [child for child, parent in parents.items() if parent == pid]
    return sorted(found)


def lose_node(
    directory: str | Path, name: str, env: dict[str, str] | None = None, reason: str = "lost (test)"
) -> list[tuple[int, str]]:
    """Node `name` dies: SIGKILL its processes (`node_processes`, looked for again until none is left, as a
    job step may start one meanwhile), then mark it down. The processes killed, (pid, command)."""
    killed: list[tuple[int, str]] = []
    for _ in range(5):
        victims = node_processes(directory, name)
        if not victims:
            break
        for pid in victims:
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, argv[:160]))
        time.sleep(0.2)
    subprocess.run(
        ["scontrol", "update", f"nodename={name}", "state=down", f"reason={reason}"],
        capture_output=True, env=env, timeout=30, check=True,
    )  # fmt: skip
    return killed


def _resume(name: str, env: dict[str, str] | None) -> None:
    # ReturnToService=2 returns a down node once its slurmd registers; resume it too, in case it registered
    # before the down state was set (an error if it is already up: ignored)
    subprocess.run(["scontrol", "update", f"nodename={name}", "state=resume"], capture_output=True, env=env,
                   timeout=30)  # fmt: skip


def restore_recorded(directory: str | Path, name: str, timeout: float = 60.0) -> None:
    """Start a new slurmd for the lost node `name` of the cluster in `directory` (recorded in pids.json,
    so `stop` stops it) and resume it; return once it is up (for use from a shell)."""
    path = Path(directory) / "pids.json"
    pids = json.loads(path.read_text()) if path.exists() else {}
    log = open(Path(directory) / f"slurmd-{name}.out", "ab")  # noqa: SIM115 (the daemon's stdout)
    proc = subprocess.Popen(_slurmd_argv(name), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    path.write_text(json.dumps({**pids, f"slurmd-{name}": proc.pid}))
    _resume(name, None)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        argv = ["sinfo", "-h", "-n", name, "-o", "%T"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        if out.stdout.strip() in ("idle", "mixed", "allocated"):
            return
        time.sleep(0.5)
    raise SlurmUnavailable(f"node {name} did not come back within {timeout:.0f} s; see {directory}")


def _stop_order(names) -> list[str]:
    """The daemons in the order to stop them: every slurmd, then slurmctld, then munged."""
    rank = {"slurmctld": 1, "munged": 2}
    return sorted(names, key=lambda n: (rank.get(n, 0), n))


def _owner_of_default_conf() -> Path | None:
    """The state directory of the test cluster that wrote /etc/slurm/slurm.conf (None if it is not ours)."""
    try:
        first = SLURM_CONF.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return Path(first[len(MARKER) :].strip()) if first.startswith(MARKER) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _claim_default_conf(base: Path) -> None:
    if not SLURM_CONF.exists():
        return
    owner = _owner_of_default_conf()
    if owner is None:
        raise SlurmUnavailable(
            f"{SLURM_CONF} exists and was not written by this test: a real Slurm; left alone"
        )
    pids_file = owner / "pids.json"
    pids = json.loads(pids_file.read_text()) if pids_file.exists() else {}
    if any(_alive(pid) for pid in pids.values()):
        if _orphaned(owner):  # its test run was killed before it could stop them: stop them now
            stop_recorded(owner)
            return _claim_default_conf(base) if SLURM_CONF.exists() else None
        raise SlurmUnavailable(f"another test cluster is running (state in {owner}); stop it first")
    SLURM_CONF.unlink()


def _orphaned(owner: Path) -> bool:
    """Whether the test run that started the cluster in `owner` is gone (killed before its `stop`). A cluster
    of a test run still going is not; nor one started by hand (`python tests/cluster/slurm_cluster.py
    start`, which removes owner.pid as it leaves the daemons running)."""
    try:
        pid = int((owner / "owner.pid").read_text().strip())
    except (OSError, ValueError):
        return False
    try:  # a killed owner not yet reaped by its parent is a zombie: gone all the same
        zombie = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        zombie = False
    return zombie or not _alive(pid)


def _release_default_conf(base: Path) -> None:
    if _owner_of_default_conf() == base:
        SLURM_CONF.unlink()


def stop_recorded(directory: str | Path) -> None:
    """Stop the daemons recorded in DIR/pids.json by an earlier `start` (for use from a shell)."""
    path = Path(directory) / "pids.json"
    pids = json.loads(path.read_text()) if path.exists() else {}
    for name in _stop_order(pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pids[name], signal.SIGTERM)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids.values()):
        time.sleep(0.2)
    path.write_text("{}")
    _release_default_conf(Path(directory))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("start", "stop", "lose", "restore"):
        print(
            "usage: python tests/cluster/slurm_cluster.py start DIR [NODES] | lose DIR NODE"
            " | restore DIR NODE | stop DIR",
            file=sys.stderr,
        )
        sys.exit(2)
    if sys.argv[1] == "lose":
        for pid, command in lose_node(sys.argv[2], sys.argv[3]):
            print(f"killed {pid}: {command}")
        sys.exit(0)
    if sys.argv[1] == "restore":
        restore_recorded(sys.argv[2], sys.argv[3])
        os._exit(0)  # leave the new slurmd running
    if sys.argv[1] == "start":
        c = SlurmCluster.start(sys.argv[2], nodes=int(sys.argv[3]) if len(sys.argv) == 4 else 2)
        pids = {n: p.pid for n, p in c.processes.items()}
        stop = "python tests/cluster/slurm_cluster.py stop DIR"
        print(f"export SLURM_CONF={c.conf}  # daemons {pids}; stop: {stop}")
        (c.directory / "owner.pid").unlink()  # never taken for an orphan of a killed test run
        os._exit(0)  # leave the daemons running
    stop_recorded(sys.argv[2])
