"""One `minigo run` per run root: a lock file in the root that names who holds it.

`acquire(root, command)` writes `{root}/minigo-run.lock` (JSON: host, pid, the process's start time on its
host, the wall-clock start, the command) under its final name in one atomic step, a hard link of a complete
temporary file, which fails when the name exists: no `flock`, which shared filesystems (NFS, Lustre) do not
keep across hosts. A second launcher finds the file and is refused at once (`RunLocked`, naming host, pid,
start and command of the first). A lock is stale when its holder is surely gone: the same host and no process
with that pid and start time; `acquire` then explains and takes it over. A lock of another host cannot be
checked from here: it is refused, with what to do if that run is known to be gone (`minigo run --unlock`,
`unlock`). `release` removes the lock if it is still this process's.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from minigo_core.data import layout


class RunLocked(RuntimeError):
    """The run root is held by another `minigo run`; the message names it and says what to do."""


@dataclass(frozen=True)
class Holder:
    """Who holds a run root: written into the lock file."""

    host: str
    pid: int
    started: str  # UTC, ISO 8601
    command: str
    pid_start: str = ""  # the process's start time on its host (/proc/PID/stat field 22): tells a reused pid

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}, started {self.started}: {self.command}"


def lock_path(root: str | Path) -> Path:
    return Path(root) / layout.RUN_LOCK


def process_start(pid: int) -> str:
    """The start time of process `pid` on this host, in clock ticks since boot ("" when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def this_process(command: str) -> Holder:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return Holder(socket.gethostname(), os.getpid(), started, command, process_start(os.getpid()))


def read_holder(path: Path) -> Holder | None:
    """The holder recorded in the lock file at `path`; None when there is none. A file that is not a lock
    of ours (damaged, foreign) reads as a holder of unknown host, which is never taken for stale."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        return Holder(str(data["host"]), int(data["pid"]), str(data["started"]), str(data["command"]),
                      str(data.get("pid_start", "")))  # fmt: skip
    except (ValueError, KeyError, TypeError):
        return Holder("(unreadable lock file)", 0, "?", text[:200])


def is_alive(holder: Holder) -> bool | None:
    """Whether the holder still runs: True or False on its own host; None on another host (unknowable)."""
    if holder.host != socket.gethostname():
        return None
    start = process_start(holder.pid)
    if not start:
        return False
    return not holder.pid_start or start == holder.pid_start  # another start time: the pid was reused


def _create(path: Path, holder: Holder) -> bool:
    """Write the lock under its final name in one step; False when the name exists already."""
    tmp = path.with_name(f"{_tmp_prefix(path)}{os.getpid()}")
    tmp.write_text(json.dumps(asdict(holder), indent=1) + "\n")
    try:
        os.link(tmp, path)  # atomic and exclusive, on NFS too, and the file is complete when it appears
        return True
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links: exclusive creation, then the content
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as handle:
            handle.write(tmp.read_text())
        return True
    finally:
        tmp.unlink(missing_ok=True)


def _tmp_prefix(path: Path) -> str:
    """The start of the names of this host's launchers' temporary files beside the lock (+ the pid)."""
    return f".tmp-{path.name}.{socket.gethostname()}."


def _remove_dead_temporaries(path: Path) -> None:
    """Remove the temporary files beside the lock that a launcher on this host left when it was killed
    between writing and removing one (its pid, in the name, no longer runs)."""
    prefix = _tmp_prefix(path)
    for tmp in path.parent.glob(f"{glob.escape(prefix)}*"):
        pid = tmp.name.removeprefix(prefix).split(".", 1)[0]
        if pid.isdigit() and not process_start(int(pid)):
            tmp.unlink(missing_ok=True)


def _refusal(path: Path, holder: Holder, alive: bool | None) -> str:
    if alive is None:
        return (
            f"run root {path.parent} is held by a `minigo run` on another host ({holder.describe()}); "
            f"from host {socket.gethostname()} it cannot be checked whether that run still runs. Wait for "
            f"it, or if you are sure it is gone: `minigo run --unlock` with the same --config (removes "
            f"{path} and Snakemake's lock)"
        )
    return (
        f"run root {path.parent} is in use by another `minigo run` ({holder.describe()}); wait for it to "
        f"finish or stop it (kill {holder.pid}); the lock is {path}"
    )


def acquire(root: str | Path, command: str, say=print) -> Holder:
    """Take the lock of run root `root` for this process (`command`: its command line, for the record).

    Raises RunLocked naming the holder when a live run (or one on another host) holds it; a stale lock of
    a gone run on this host is explained through `say` and taken over."""
    path = lock_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = this_process(command)
    _remove_dead_temporaries(path)
    for _ in range(3):  # a lock removed or taken over between our looks: look again
        if _create(path, me):
            return me
        holder = read_holder(path)
        if holder is None:
            continue
        alive = is_alive(holder)
        if alive is not False:
            raise RunLocked(_refusal(path, holder, alive))
        say(
            f"minigo run: {path} was left by a `minigo run` that is gone ({holder.describe()}; no such "
            "process runs on this host now); taking it over"
        )
        _take_over(path, holder)
    raise RunLocked(f"could not take the lock {path}: other launchers keep taking it; try again")


def _take_over(path: Path, stale: Holder) -> None:
    """Remove the stale lock of `stale`, unless another launcher replaced it meanwhile (then it stays)."""
    aside = path.with_name(f"{_tmp_prefix(path)}{os.getpid()}.stale")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if read_holder(aside) != stale:  # a fresh lock taken after our look: put it back
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    aside.unlink(missing_ok=True)


def release(root: str | Path, holder: Holder) -> None:
    """Remove the lock if `holder` (this process) still holds it."""
    path = lock_path(root)
    if read_holder(path) == holder:
        path.unlink(missing_ok=True)


def unlock(root: str | Path) -> str:
    """Remove the lock of `root` (`minigo run --unlock`); what was done, as a sentence. Raises RunLocked
    when a live run on this host holds it (stop that run first)."""
    path = lock_path(root)
    holder = read_holder(path)
    if holder is None:
        return f"no lock at {path}"
    alive = is_alive(holder)
    if alive:
        raise RunLocked(
            f"not unlocking: {path} is held by a `minigo run` that runs ({holder.describe()}); stop it first "
            f"(kill {holder.pid})"
        )
    path.unlink(missing_ok=True)
    state = "that is gone" if alive is False else "on another host (unchecked)"
    return f"removed {path} of a `minigo run` {state} ({holder.describe()})"
