"""The local rank launcher: start N processes on this machine, one per rank, and watch them.

`minigo train --ranks N` starts its ranks here: it picks a free port on 127.0.0.1 for the TCP store that
rank 0 hosts, runs the command line the caller gives for each rank and that address, and watches them; if
one dies it stops the others and the launch fails naming the rank. The launcher knows nothing of what the
ranks do: the caller passes the command line of each rank.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from minigo_core.base import native
from minigo_core.cluster.slurm import Master, free_port

log = logging.getLogger(__name__)

SECONDARY_GRACE_S = 2.0  # how long a secondary failure (a lost peer) waits for the failure that caused it


@dataclass(frozen=True)
class Launch:
    """How the ranks of a launch ended: every rank's exit code, and the first rank that failed (or None)."""

    codes: list[int]
    failed: int | None = None


def die_with_parent() -> None:
    """In a child: get SIGKILL when the launching parent dies (Linux), so no rank outlives its job."""
    with contextlib.suppress(Exception):
        native.libc().prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def launch_local(
    rank_command: Callable[[int, Master], list[str]],
    ranks: int,
    ok_codes: Collection[int] = (0,),
    poll_s: float = 0.2,
    secondary_codes: Collection[int] = (),
) -> Launch:
    """Run `rank_command(r, master)` for r = 0 .. ranks-1, one process each, until all have exited.

    The ranks meet at a TCP store that rank 0 hosts on a port of 127.0.0.1 free at the launch (`master`). If
    a rank exits with a code not in `ok_codes` (or is killed) the others are stopped and the failure is
    logged naming the rank. A code in `secondary_codes` says a rank failed because another did (its peer was
    lost): the rank named is one that failed otherwise, when one does within `SECONDARY_GRACE_S`.
    """
    master = Master("127.0.0.1", free_port("127.0.0.1"))
    procs: list[subprocess.Popen] = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        # A scheduler stops jobs with SIGTERM: turn it into SystemExit so the cleanup below still runs.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        for r in range(ranks):
            procs.append(subprocess.Popen(rank_command(r, master)))
        failed = _wait_for_ranks(procs, ok_codes, poll_s, secondary_codes)
    finally:
        _stop_ranks(procs)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if failed is not None:
        _report_failure(*failed, ranks)
        return Launch([p.returncode for p in procs], failed[0])
    return Launch([p.returncode for p in procs])


def _wait_for_ranks(
    procs: list[subprocess.Popen], ok_codes: Collection[int], poll_s: float, secondary: Collection[int] = ()
) -> tuple[int, int] | None:
    """Wait until every rank has exited, or one failed: then (its rank, its exit code). A failure with a
    code in `secondary` waits up to SECONDARY_GRACE_S for the failure that caused it."""
    first_secondary = None
    while True:
        codes = [p.poll() for p in procs]
        bad = [(r, c) for r, c in enumerate(codes) if c is not None and c not in ok_codes]
        primary = [(r, c) for r, c in bad if c not in secondary]
        if primary:
            return primary[0]
        if bad:
            first_secondary = first_secondary or (bad[0], time.monotonic())
            waited = time.monotonic() - first_secondary[1]
            if waited >= SECONDARY_GRACE_S or all(c is not None for c in codes):
                return first_secondary[0]
        elif all(c is not None for c in codes):
            return None
        time.sleep(poll_s)


def _stop_ranks(procs: list[subprocess.Popen]) -> None:
    """Terminate the ranks still running; kill those that do not exit within 10 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _report_failure(rank: int, code: int, ranks: int) -> None:
    """Say which rank failed and how."""
    how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    log.error(
        f"rank {rank} of {ranks} {how}; the other ranks were stopped (see rank {rank}'s messages above)"
    )
