"""The Slurm tests' fixture: a real 2-node test cluster. slurm_cluster.py, beside this file, starts it (and
runs by hand too); pytest puts this folder on sys.path (its default "prepend" import mode), so it imports as
`slurm_cluster` here and only here: no test module imports it."""

from __future__ import annotations

import os

import pytest
from slurm_cluster import SlurmCluster, SlurmUnavailable


@pytest.fixture(scope="session")
def cluster():
    """A real Slurm of 2 nodes (slurm_cluster.py), shared by every Slurm test module of the session and
    stopped at its end. Skipped, with the reason, where Slurm/munge are missing or we are not root; CI=true
    fails instead."""
    try:
        c = SlurmCluster.start(nodes=2)
    except SlurmUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no test Slurm cluster: {exc} (CI must run the Slurm tests)")
        pytest.skip(f"no test Slurm cluster: {exc}")
    yield c
    c.stop()
