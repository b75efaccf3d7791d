"""Shared fixtures."""

from __future__ import annotations

import os

import pytest

from minigo_core.search.gtp_client import find_gnugo


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of GNU Go. `make test` installs it; a bare `pytest` without it skips (CI=true fails instead)."""
    try:
        return find_gnugo()
    except FileNotFoundError as e:
        if os.environ.get("CI"):
            pytest.fail(f"{e} (CI must run the GNU Go tests)")
        pytest.skip(f"{e}")


@pytest.fixture(scope="session")
def cluster():
    """A real Slurm of 2 nodes (tests/slurm_cluster.py), shared by every Slurm test module of the session and
    stopped at its end. Skipped, with the reason, where Slurm/munge are missing or we are not root; CI=true
    fails instead."""
    from slurm_cluster import SlurmCluster, SlurmUnavailable

    try:
        c = SlurmCluster.start(nodes=2)
    except SlurmUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no test Slurm cluster: {exc} (CI must run the Slurm tests)")
        pytest.skip(f"no test Slurm cluster: {exc}")
    yield c
    c.stop()
