"""Where the tasks of an `srun` step meet: their ranks from Slurm's environment, the rendezvous address, port.

Under `srun`, each task is one rank (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`) and every task derives
the same address and port without talking (`slurm_master`): `MASTER_ADDR` / `MASTER_PORT` if the user set
them, else the first host of the step's node list (`SLURM_STEP_NODELIST`, else `SLURM_JOB_NODELIST`; the task
of rank 0 runs there under srun's block and cyclic distributions), resolved by the resolver or else by
`scontrol show node` (its NodeAddr), and the port `master_port(job id, step id, restart count)`, so a retry
(a new job id) or a requeued job never meets a stale store.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Step ids of the batch script, extern and interactive steps (Slurm >= 20.11, then older): not srun tasks.
SLURM_NON_TASK_STEPS = (
    *("batch", "extern", "interactive"),
    *("4294967290", "4294967291", "4294967292", "4294967294", "4294967295"),
)

# Ports of srun steps' stores: 20000 + (7 * job id + step id + 1009 * restart count) mod 12000, i.e. 20000 ..
# 31999: above the registered ports most daemons use, below Linux's ephemeral range (32768 ..), so an outgoing
# connection never holds it; consecutive jobs and the steps of a job get different ports.
MASTER_PORT_BASE = 20000
MASTER_PORT_SPAN = 12000


class ClusterError(RuntimeError):
    """The ranks cannot find where to meet; the message says what to set."""


@dataclass(frozen=True)
class Master:
    """Where the ranks meet: rank 0 hosts the TCP store at `port`; the others connect to `addr:port`."""

    addr: str
    port: int


def slurm_rank_env(env: Mapping[str, str] | None = None) -> tuple[int, int, int] | None:
    """(rank, world size, local rank) when running as a task of an `srun` step, else None."""
    env = os.environ if env is None else env
    keys = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID", "SLURM_JOB_ID")
    if not all(k in env for k in keys):
        return None
    if env["SLURM_STEP_ID"] in SLURM_NON_TASK_STEPS:  # the batch script itself, not a task of an srun step
        return None
    return int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"]), int(env.get("SLURM_LOCALID", "0"))


def expand_hostlist(hostlist: str) -> list[str]:
    """The host names of a Slurm hostlist: `node[1-3,5],gpu07` -> node1, node2, node3, node5, gpu07.

    Ranges keep their zero padding (`n[08-10]` -> n08, n09, n10) and several bracket groups multiply
    (`r[1-2]n[1-2]` -> r1n1, r1n2, r2n1, r2n2), as `scontrol show hostnames` does.
    """
    hosts: list[str] = []
    for item in _split_top_level(hostlist.strip()):
        hosts.extend(_expand_item(item))
    return hosts


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if depth < 0:
            raise ValueError(f"unbalanced ']' in hostlist {text!r}")
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced '[' in hostlist {text!r}")
    items.append(text[start:])
    return [item for item in (x.strip() for x in items) if item]


def _expand_item(item: str) -> list[str]:
    """One hostlist item (no top-level comma): its first bracket group expanded, the rest recursively."""
    if "[" not in item:
        return [item]
    head, rest = item.split("[", 1)
    body, tail = rest.split("]", 1)
    names = []
    for part in body.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f"bad range {part!r} in hostlist item {item!r}")
        width = len(lo) if lo.startswith("0") else 0
        names += [f"{n:0{width}d}" for n in range(int(lo), int(hi or lo) + 1)]
    return [head + n + t for n in names for t in _expand_item(tail)]


def master_port(job_id: int, step_id: int, restart_count: int = 0) -> int:
    """The store's port of an srun step: a function of its job, step and requeue count (see above)."""
    return MASTER_PORT_BASE + (7 * job_id + step_id + 1009 * restart_count) % MASTER_PORT_SPAN


def resolve_host(name: str, scontrol: Callable[[str], str] | None = None) -> str:
    """The address of host `name`: the resolver's, else Slurm's NodeAddr (node names need not resolve)."""
    try:
        return socket.gethostbyname(name)
    except OSError:
        pass
    text = (scontrol or _scontrol_show_node)(name)
    addr = next((f.split("=", 1)[1] for f in text.split() if f.startswith("NodeAddr=")), "")
    try:
        if addr and addr != name:
            return socket.gethostbyname(addr)
    except OSError:
        pass
    raise ClusterError(
        f"cannot resolve the master host {name!r}, neither by the resolver nor by `scontrol show node` "
        f"(NodeAddr {addr or 'unknown'!r}); set MASTER_ADDR to the address of the first node of the job step"
    )


def _scontrol_show_node(name: str) -> str:
    try:
        out = subprocess.run(["scontrol", "show", "node", name], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout if out.returncode == 0 else ""


def slurm_master(
    env: Mapping[str, str] | None = None, resolve: Callable[[str], str] = resolve_host
) -> Master:
    """The store's address and port for the tasks of an srun step, the same on every task (see above)."""
    env = os.environ if env is None else env
    addr = env.get("MASTER_ADDR", "").strip()
    if not addr:
        nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
        hosts = expand_hostlist(nodelist)
        if not hosts:
            raise ClusterError(
                "neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST names a node; set MASTER_ADDR (and "
                "MASTER_PORT) to where rank 0 runs"
            )
        addr = resolve(hosts[0])
    port_text = env.get("MASTER_PORT", "").strip()
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ClusterError(f"MASTER_PORT={port_text!r} is not a port number")
        return Master(addr, int(port_text))
    restart = int(env.get("SLURM_RESTART_COUNT", "0") or 0)
    return Master(addr, master_port(int(env["SLURM_JOB_ID"]), int(env["SLURM_STEP_ID"]), restart))


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on `host` now (for the store of a local launch)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def node_name(env: Mapping[str, str] | None = None) -> str:
    """The node this rank runs on: Slurm's name for it under srun, else the host name."""
    env = os.environ if env is None else env
    return env.get("SLURMD_NODENAME") or socket.gethostname()
