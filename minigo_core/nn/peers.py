"""A training rank that loses a peer: what it says, its exit code, and how it leaves.

A collective fails when a peer's connections close (its process or its node is gone) or when no answer
comes within the process group's timeout. The rank then says who it is, who its peers are and where, and
the timeout (`lost_peer_message`), and leaves with `PEER_LOST` at once (`leave_at_once`): the process
group's transport threads still wait on the lost peer, and an interpreter that tears them down at its exit
can abort ("terminate called without an active exception", SIGABRT) instead of exiting with the code.
A local launch names the rank that failed first: a rank that exits with `PEER_LOST` failed because another
did (`minigo_core.cluster.launch`, `secondary_codes`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Protocol

from minigo_core.base.runtime import TRAIN_TIMEOUT_ENV
from minigo_core.cluster.slurm import node_name
from minigo_core.data import layout, storage

PEER_LOST = 4  # the exit code of a rank whose collective failed: a peer is gone or did not answer in time


class Rank(Protocol):
    """What the message needs of a rank's job (a `train_job.TrainJob`)."""

    rank: int
    work_dir: str
    timeout_s: float


class PeerLost(RuntimeError):
    """A collective of the ranks failed; the message names this rank, its peers, their nodes, the timeout."""


@contextlib.contextmanager
def collective(job: Rank, world: int, nodes: list[str], what: str) -> Iterator[None]:
    """A collective of `world` ranks: torch's error when it fails becomes PeerLost (lost_peer_message)."""
    try:
        yield
    except RuntimeError as exc:
        if world <= 1:
            raise
        raise PeerLost(lost_peer_message(job, world, nodes, what, exc)) from None


def lost_peer_message(job: Rank, world: int, nodes: list[str], what: str, exc: BaseException) -> str:
    """What a rank says when a collective fails: who it is, who its peers are (and where), the timeout."""
    first_line = (str(exc).strip().splitlines() or [repr(exc)])[0]
    me = nodes[job.rank] if job.rank < len(nodes) else node_name()
    peers = [f"rank {r}" + (f" on node {nodes[r]}" if r < len(nodes) else "") for r in range(world)]
    peers = [p for r, p in enumerate(peers) if r != job.rank]
    checkpoint = storage.join(job.work_dir, layout.CHECKPOINT)
    return (
        f"rank {job.rank} of {world} (node {me}): {what} failed ({type(exc).__name__}: {first_line}): a peer "
        f"({', '.join(peers)}) is gone, its process or its node lost, or did not answer within the process "
        f"group's timeout of {job.timeout_s:g} s (--timeout, {TRAIN_TIMEOUT_ENV}, train.timeout_s); this "
        f"rank stops. A retry of the job resumes from its last checkpoint ({checkpoint}, every "
        "train.checkpoint_every steps)"
    )


def in_group() -> bool:
    """Whether this process has a process group up (torch.distributed imported and initialised)."""
    dist = sys.modules.get("torch.distributed")
    return dist is not None and dist.is_available() and dist.is_initialized()


def leave_at_once(code: int = PEER_LOST) -> None:
    """Exit the process with `code` now, its messages flushed, without the interpreter's teardown (see the
    module's docstring). Only for a process of its own (a rank), never a library call in another program."""
    for handler in (*logging.getLogger().handlers, *logging.getLogger("minigo_core").handlers):
        with contextlib.suppress(Exception):
            handler.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
