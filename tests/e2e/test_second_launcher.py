"""Two real `minigo run` on one root (the tiny config): the second is refused at once, naming the host and
pid of the first, which runs on undisturbed and ends as the same run as an undisturbed one
(`python -m tools.compare_runs`); a launcher killed (-9) leaves a stale lock, which `minigo run --unlock`
removes with Snakemake's lock.

The second launcher must meet a held lock whatever the machine's speed: the first run is stopped (SIGSTOP,
its whole process group) from the moment its lock exists until the second launcher has exited, so it cannot
finish and release the lock first; it is then continued (SIGCONT) and still ends as the reference run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from minigo_core.data import layout

REPO = Path(__file__).resolve().parents[2]
REFUSAL_LIMIT_S = 30  # "at once": the second launcher reads the config and the lock, nothing more


def minigo_run(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "minigo_core.cli", "run", "--profile", "profiles/local", "--config",
            str(config), "--progress", "none", "--no-report", *extra, "--", "--cores", "1"]  # fmt: skip


def test_a_second_minigo_run_on_a_held_root_is_refused_at_once_naming_the_first(tmp_path, write_config):
    config = write_config(tmp_path, generations=1)
    root = tmp_path / "run"
    lock = root / layout.RUN_LOCK
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    reference = subprocess.run(minigo_run(config), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stdout[-3000:] + reference.stderr[-3000:]
    root.rename(tmp_path / "reference")  # the same root path for both runs: it is part of every seed record
    first = subprocess.Popen(minigo_run(config), cwd=REPO, start_new_session=True, **quiet)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None and not lock.exists():
            time.sleep(0.05)
        # Hold the first run where it is (its launcher, Snakemake and jobs: one process group) while the
        # second launcher looks: a stopped run cannot finish and release its lock first, however slowly the
        # second one starts on a loaded machine. Then it goes on, and must end as the undisturbed reference.
        with contextlib.suppress(ProcessLookupError):  # a run already gone fails the assertion below
            os.killpg(first.pid, signal.SIGSTOP)
        try:
            assert first.poll() is None and lock.exists(), "the first minigo run did not hold the root's lock"
            assert json.loads(lock.read_text())["pid"] == first.pid
            t0 = time.monotonic()
            second = subprocess.run(minigo_run(config), cwd=REPO, capture_output=True, text=True, timeout=300)
            took = time.monotonic() - t0
            assert lock.exists() and json.loads(lock.read_text())["pid"] == first.pid  # the first's, still
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(first.pid, signal.SIGCONT)
        err = second.stderr
        assert second.returncode == 1, f"a second minigo run ran on a held root:\n{second.stdout}\n{err}"
        assert f"pid {first.pid} on host {socket.gethostname()}" in err and "in use" in err, err
        assert took < REFUSAL_LIMIT_S, f"refused only after {took:.0f} s"
        assert "invocation" not in second.stdout  # it started no Snakemake
        assert first.wait(timeout=600) == 0, "the first minigo run failed after the refusal"
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert not lock.exists()  # released at the end of the run
    compare = [sys.executable, "-m", "tools.compare_runs", str(tmp_path / "reference"), str(root)]
    compared = subprocess.run(compare, cwd=REPO, capture_output=True, text=True)
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-3000:]

    stale = write_config(tmp_path / "stale", generations=1)
    lock = tmp_path / "stale" / "run" / layout.RUN_LOCK
    killed = subprocess.Popen(minigo_run(stale), cwd=REPO, start_new_session=True, **quiet)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and killed.poll() is None and not lock.exists():
        time.sleep(0.05)
    assert killed.poll() is None and lock.exists(), "the minigo run to kill never took the root's lock"
    time.sleep(1.0)  # into the run
    os.killpg(killed.pid, signal.SIGKILL)  # the launcher and its Snakemake: nothing cleans up
    killed.wait()
    assert json.loads(lock.read_text())["pid"] == killed.pid  # a killed launcher leaves its lock: stale now
    unlock = subprocess.run(minigo_run(stale, "--unlock"), cwd=REPO, capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    assert f"removed {lock}" in unlock.stdout and "that is gone" in unlock.stdout, unlock.stdout
    assert "Snakemake's lock removed" in unlock.stdout
    assert not lock.exists()
