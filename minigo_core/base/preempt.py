"""SIGTERM as a scheduler sends it (a preemption, or a job at its time limit; SIGKILL follows after a grace
time): what a job that can keep its work does with it.

- `with exit_on_sigterm(lock, say):`, a self-play job: the process exits at once with `TERMINATED`, even
  while its main thread is inside the compiled engine (a C call that may last minutes): a watcher thread,
  woken through `signal.set_wakeup_fd`, waits for the file write in progress (the writer holds `lock` while
  it writes a file and notes it), calls `say` (what is kept) and ends the process. The files written are
  whole; the job's retry keeps them.
- `with StopFlag().installed() as flag:`, a training rank: SIGTERM sets the flag, which the rank reads at
  its next step boundary (there it writes a checkpoint and stops; `nn.train_job`), then exits with
  `TERMINATED`.

A non-zero exit is what makes Snakemake (`retries` in the profile) or Slurm resubmit the job.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

TERMINATED = 128 + signal.SIGTERM  # the exit code of a job stopped by SIGTERM, as a shell reports it


class StopFlag:
    """Set when the process receives SIGTERM (while `installed`); call it to ask whether it was."""

    def __init__(self) -> None:
        self._event = threading.Event()

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """While inside: SIGTERM sets the flag (the previous handler is restored after; outside the main
        thread, where Python cannot handle signals, nothing is installed)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: self._event.set())
        try:
            yield self
        finally:
            signal.signal(signal.SIGTERM, previous)

    def set(self) -> None:
        self._event.set()

    def __call__(self) -> bool:
        return self._event.is_set()


@contextlib.contextmanager
def exit_on_sigterm(lock: Any, say: Callable[[], None]) -> Iterator[None]:
    """While inside (from the main thread): on SIGTERM, wait for `lock` (a write in progress), call `say`,
    exit with `TERMINATED` -- within the time the write takes, whatever the main thread is doing. The
    previous handler and wakeup fd are restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)

    def watch() -> None:
        while True:
            data = os.read(read_fd, 64)
            if not data:  # the block was left: the write end is closed
                return
            if int(signal.SIGTERM) in data:
                break
        lock.acquire()  # held for good: no other write starts
        try:
            say()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(TERMINATED)

    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)  # the watcher acts
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watcher = threading.Thread(target=watch, name="sigterm-watcher", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGTERM, previous)
        os.close(write_fd)
        watcher.join(timeout=5)
        os.close(read_fd)


def end_with_parent(poll: float = 0.5) -> threading.Thread:
    """End this process (SIGTERM to itself) once its parent has ended: a daemon thread notices that the
    parent process changed (the process was handed to another). For servers a GUI starts through a shell
    (KaTrain's `altcommand` runs under /bin/sh, which may not exec it): when the GUI ends the shell, the
    server ends with it instead of keeping the GUI's pipes open. Returns the watching thread."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="minigo-parent-watch", daemon=True)
    thread.start()
    return thread
