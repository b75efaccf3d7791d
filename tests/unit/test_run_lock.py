"""One `minigo run` per run root (`minigo_core.pipeline.run_lock`): acquire, refuse a live holder naming its
host and pid, recognise and take over a stale lock of this host, refuse one of another host (unknowable),
unlock, release only one's own lock. The two real launchers on one root: tests/e2e/test_second_launcher.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import asdict, replace

import pytest

from minigo_core.pipeline import run_lock
from minigo_core.pipeline.run_lock import Holder, RunLocked


def write_lock(root, holder: Holder) -> None:
    run_lock.lock_path(root).write_text(json.dumps(asdict(holder)))


@pytest.fixture()
def other_process():
    """A live process of this host that is not this one (the holder of a lock)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def holder_of(pid: int, host: str | None = None) -> Holder:
    start = run_lock.process_start(pid)
    command = "minigo run --config a.yaml"
    return Holder(host or socket.gethostname(), pid, "2026-01-01T00:00:00Z", command, start)


def test_acquire_writes_who_holds_the_root_and_release_removes_it(tmp_path):
    holder = run_lock.acquire(tmp_path, "minigo run --config c.yaml")
    data = json.loads(run_lock.lock_path(tmp_path).read_text())
    assert data["host"] == socket.gethostname() and data["pid"] == os.getpid()
    assert data["command"] == "minigo run --config c.yaml" and data["started"].endswith("Z")
    assert data["pid_start"] == run_lock.process_start(os.getpid()) != ""
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]  # no temporary left
    run_lock.release(tmp_path, holder)
    assert not run_lock.lock_path(tmp_path).exists()


def test_a_second_launcher_is_refused_naming_host_pid_and_command_of_the_first(tmp_path, other_process):
    first = holder_of(other_process.pid)
    write_lock(tmp_path, first)
    with pytest.raises(RunLocked) as err:
        run_lock.acquire(tmp_path, "minigo run --config b.yaml")
    message = str(err.value)
    assert f"pid {other_process.pid} on host {socket.gethostname()}" in message
    assert "minigo run --config a.yaml" in message and "in use" in message
    assert run_lock.read_holder(run_lock.lock_path(tmp_path)) == first  # left as it was
    with pytest.raises(RunLocked, match="not unlocking"):  # nor does --unlock remove a live run's lock
        run_lock.unlock(tmp_path)
    assert run_lock.lock_path(tmp_path).exists()


def test_a_stale_lock_of_a_gone_run_on_this_host_is_explained_and_taken_over(tmp_path):
    argv = [sys.executable, "-c", "import os; print(os.getpid())"]
    gone = subprocess.run(argv, capture_output=True, text=True)
    dead = holder_of(int(gone.stdout))
    write_lock(tmp_path, replace(dead, pid_start="1"))
    said: list[str] = []
    me = run_lock.acquire(tmp_path, "minigo run --config c.yaml", say=said.append)
    assert me.pid == os.getpid() and run_lock.read_holder(run_lock.lock_path(tmp_path)) == me
    assert len(said) == 1 and "is gone" in said[0] and f"pid {dead.pid}" in said[0]
    assert "taking it over" in said[0]


def test_a_reused_pid_is_not_taken_for_the_holder(tmp_path, other_process):
    # the recorded pid runs, but as a process started at another moment: the holder is gone
    write_lock(tmp_path, replace(holder_of(other_process.pid), pid_start="1"))
    said: list[str] = []
    run_lock.acquire(tmp_path, "minigo run", say=said.append)
    assert said and "taking it over" in said[0]


def test_a_lock_of_another_host_is_refused_with_unlock_advice_and_unlock_removes_it(tmp_path):
    write_lock(tmp_path, holder_of(4242, host="login-other-7"))
    with pytest.raises(RunLocked) as err:
        run_lock.acquire(tmp_path, "minigo run")
    message = str(err.value)
    assert "pid 4242 on host login-other-7" in message and "another host" in message
    assert "cannot be checked" in message and "minigo run --unlock" in message
    said = run_lock.unlock(tmp_path)
    assert said.startswith("removed") and "another host" in said and "login-other-7" in said
    assert not run_lock.lock_path(tmp_path).exists()
    assert run_lock.unlock(tmp_path).startswith("no lock")


def test_an_unreadable_lock_file_is_refused_not_taken_over(tmp_path):
    run_lock.lock_path(tmp_path).write_text("not json")
    with pytest.raises(RunLocked, match="unreadable lock file"):
        run_lock.acquire(tmp_path, "minigo run")


def test_release_leaves_a_lock_that_another_launcher_took(tmp_path, other_process):
    mine = run_lock.acquire(tmp_path, "minigo run")
    theirs = holder_of(other_process.pid)
    write_lock(tmp_path, theirs)
    run_lock.release(tmp_path, mine)
    assert run_lock.read_holder(run_lock.lock_path(tmp_path)) == theirs


def test_a_launcher_killed_while_writing_the_lock_leaves_nothing_for_the_next(tmp_path, other_process):
    # the temporary files of a killed launcher of this host go; a live one's (writing now) and another
    # host's stay
    host = socket.gethostname()
    dead = tmp_path / f".tmp-{run_lock.lock_path(tmp_path).name}.{host}.4000001"
    aside = tmp_path / f".tmp-{run_lock.lock_path(tmp_path).name}.{host}.4000002.stale"
    live = tmp_path / f".tmp-{run_lock.lock_path(tmp_path).name}.{host}.{other_process.pid}"
    foreign = tmp_path / f".tmp-{run_lock.lock_path(tmp_path).name}.elsewhere.4000001"
    for path in (dead, aside, live, foreign):
        path.write_text("{")
    me = run_lock.acquire(tmp_path, "minigo run", say=lambda _: None)
    assert not dead.exists() and not aside.exists() and live.exists() and foreign.exists()
    run_lock.release(tmp_path, me)
