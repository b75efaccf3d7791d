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
