"""SIGTERM handling (`base.preempt`): a flag read at step boundaries; an exit that waits for the write in
progress. The jobs under SIGTERM: tests/e2e/test_preemption.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from minigo_core.base import preempt

CHILD = textwrap.dedent(
    """
    import sys, threading, time
    from minigo_core.base import preempt

    lock = threading.Lock()
    with preempt.exit_on_sigterm(lock, lambda: print("stopping: kept", open(sys.argv[1]).read(), flush=True)):
        with lock:  # a file being written when SIGTERM comes
            print("writing", flush=True)
            time.sleep(1.0)
            open(sys.argv[1], "w").write("game 0")
        time.sleep(60)  # then a long game: SIGTERM ends the process here at the latest
    print("not stopped", flush=True)
    """
)


def test_stop_flag_is_set_by_sigterm_and_the_handler_restored():
    previous = signal.getsignal(signal.SIGTERM)
    with preempt.StopFlag().installed() as flag:
        assert not flag()
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not flag() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert flag()
    assert signal.getsignal(signal.SIGTERM) is previous


def test_exit_on_sigterm_leaves_nothing_behind_after_its_block():
    previous = signal.getsignal(signal.SIGTERM)
    with preempt.exit_on_sigterm(threading.Lock(), lambda: None):
        assert any(t.name == "sigterm-watcher" for t in threading.enumerate())
    assert signal.getsignal(signal.SIGTERM) is previous and signal.set_wakeup_fd(-1) == -1
    assert not any(t.name == "sigterm-watcher" for t in threading.enumerate())


def test_exit_on_sigterm_waits_for_the_write_in_progress_then_exits_143(tmp_path):
    out = tmp_path / "game00000.arrow"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == preempt.TERMINATED == 143
    assert rest.strip() == "stopping: kept game 0", rest  # the write ended first, then `say`
    assert time.monotonic() - t0 < 10, "the process did not exit promptly after the write"


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in f)  # a zombie
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_server_ends_with_the_shell_that_started_it():
    """KaTrain's custom command runs under /bin/sh, which need not exec it: ending the shell ends it."""
    script = (
        "import os, time; from minigo_core.base import preempt; preempt.end_with_parent(0.05); "
        "print(os.getpid(), flush=True); time.sleep(120)"
    )
    shell = subprocess.Popen(
        ["/bin/sh", "-c", f'{sys.executable} -c "{script}"; true'], stdout=subprocess.PIPE, text=True
    )
    try:
        pid = int(shell.stdout.readline())
        assert not _gone(pid)
        shell.terminate()
        shell.wait(timeout=30)
        deadline = time.monotonic() + 60  # generous: the watcher polls every 0.05 s
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(pid), "the process outlived the shell that started it"
    finally:
        shell.kill()
