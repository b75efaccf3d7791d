"""The set-up without root: `workflow/scripts/install_system_deps.sh PURPOSE...` run as an unprivileged user
whose package manager refuses names what is missing with the command that installs it, exits 0, and asks
for nothing its purpose does not need; the Makefile asks each target's purposes only.

The unprivileged runs need root to create the user (CI runs as root); elsewhere they skip with the reason.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "workflow" / "scripts" / "install_system_deps.sh"
ORDINARY_PATH = "/usr/local/bin:/usr/bin:/bin"  # no /usr/sbin, /sbin or /usr/games


@pytest.fixture(scope="module")
def unprivileged_user(unavailable):
    """(uid, gid) of a fresh unprivileged user, removed again at the end of the module."""
    if os.geteuid() != 0:
        unavailable("creating the unprivileged test user needs root")
    useradd, userdel = (
        shutil.which("useradd", path=ORDINARY_PATH + ":/usr/sbin:/sbin"),
        shutil.which("userdel", path=ORDINARY_PATH + ":/usr/sbin:/sbin"),
    )
    if useradd is None or userdel is None:
        unavailable("useradd/userdel not installed")
    name = f"minigo-t{uuid.uuid4().hex[:8]}"
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/bin/sh", name], check=True, capture_output=True
    )
    try:
        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run([userdel, name], capture_output=True)


@pytest.fixture
def refusing_bin():
    """A folder readable by every user with a `sudo` and an `apt-get` that refuse (exit 1)."""
    folder = Path(tempfile.mkdtemp(prefix="minigo-deps-"))
    try:
        folder.chmod(0o755)
        for name in ("sudo", "apt-get"):
            tool = folder / name
            tool.write_text(f"#!/bin/sh\necho '{name}: refused by the test' >&2\nexit 1\n")
            tool.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder)


def run_script(purposes: list[str], env: dict, user: tuple[int, int] | None = None):
    """The script read from stdin (so the user needs no access to the checkout), run with `env` only."""
    with open(SCRIPT, "rb") as script:
        return subprocess.run(
            ["/bin/bash", "-s", "--", *purposes],
            stdin=script,
            env=env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
            user=user[0] if user else None,
            group=user[1] if user else None,
            extra_groups=[] if user else None,
        )


def test_unprivileged_run_names_missing_gnugo_and_goes_on(unprivileged_user, refusing_bin):
    # the commands are searched only in the refusing folder: all are missing, and sudo refuses
    env = {"PATH": f"{refusing_bin}:{ORDINARY_PATH}", "MINIGO_DEPS_PATH": str(refusing_bin), "HOME": "/"}
    result = run_script(["run"], env, unprivileged_user)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sudo apt-get install -y gnugo" in result.stdout
    assert not re.search(r"slurm|munge|clang-format|chromium", result.stdout + result.stderr), result.stdout
    assert "installing" not in result.stdout  # it tried no install


def test_unprivileged_test_and_cluster_name_each_package(unprivileged_user, refusing_bin):
    env = {"PATH": f"{refusing_bin}:{ORDINARY_PATH}", "MINIGO_DEPS_PATH": str(refusing_bin), "HOME": "/"}
    result = run_script(["test", "cluster", "lint"], env, unprivileged_user)
    assert result.returncode == 0, result.stdout + result.stderr
    for package in ("gnugo", "chromium", "slurm-wlm", "munge", "clang-format"):
        assert f"sudo apt-get install -y {package}" in result.stdout
    assert "sudo apt-get install -y gnugo chromium slurm-wlm munge clang-format" in result.stdout


def test_unprivileged_without_sudo_at_all(unprivileged_user):
    empty = Path(tempfile.mkdtemp(prefix="minigo-deps-"))
    try:
        empty.chmod(0o755)
        env = {"PATH": ORDINARY_PATH, "MINIGO_DEPS_PATH": str(empty), "HOME": "/"}
        result = run_script(["cluster"], env, unprivileged_user)
    finally:
        empty.rmdir()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sudo apt-get install -y slurm-wlm" in result.stdout
    assert "gnugo" not in result.stdout


def test_unprivileged_finds_daemons_outside_an_ordinary_path(unprivileged_user, unavailable):
    """slurmctld and munged live in /usr/sbin: found with an ordinary user's PATH."""
    if not (Path("/usr/sbin/slurmctld").exists() and Path("/usr/sbin/munged").exists()):
        unavailable("Slurm and munge are not installed in /usr/sbin here")
    result = run_script(["cluster"], {"PATH": ORDINARY_PATH, "HOME": "/"}, unprivileged_user)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "", result.stdout


def test_root_with_a_failing_apt_get_goes_on_except_under_ci(refusing_bin, unavailable):
    if os.geteuid() != 0:
        unavailable("the root path of the script needs root")
    env = {"PATH": f"{refusing_bin}:{ORDINARY_PATH}", "MINIGO_DEPS_PATH": str(refusing_bin), "HOME": "/"}
    result = run_script(["run"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "apt-get failed" in result.stdout and "sudo apt-get install -y gnugo" in result.stdout
    assert run_script(["run"], {**env, "CI": "true"}).returncode == 1


def test_unknown_purpose_is_a_usage_error():
    result = run_script(["slurm"], {"PATH": ORDINARY_PATH})
    assert result.returncode == 2 and "unknown purpose 'slurm'" in result.stderr


def _install_line(target: str) -> str:
    """The purposes `make TARGET` passes to the script (`make -n`: nothing runs)."""
    out = subprocess.run(
        ["make", "-n", "-C", str(REPO), target], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    lines = [line for line in out.splitlines() if "install_system_deps.sh" in line]
    assert len(lines) == 1, out
    return lines[0].split("install_system_deps.sh", 1)[1].split(";")[0].strip()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_each_make_target_asks_only_for_its_purposes():
    assert _install_line("run") == "run"  # never Slurm
    assert _install_line("test").split() == ["test", "cluster", "lint"]
    assert _install_line("test-e2e") == "test"
    assert _install_line("lint") == "lint"
    assert _install_line("setup") == ""  # the Python environment only
