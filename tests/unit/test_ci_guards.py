"""The guards of the tests of compiled code: without the build a test skips, but under CI=true it fails, so
CI cannot pass with the engine broken. Run on the test files whose guards once skipped under CI too, in a
pytest subprocess where every compiled library is missing (`native.library_path` raises)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARDED = ["tests/unit/test_replay.py", "tests/unit/test_engine_memory.py"]
PLUGIN = """
from minigo_core.base import native


def _not_built(lib):
    raise native.NativeUnavailable(f"the compiled library {lib.description} is not built (simulated)")


native.library_path = _not_built
"""


def _pytest_without_the_build(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "no_native_build.py").write_text(PLUGIN)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MINIGO_ENGINE_LIB")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    if ci is not None:
        env["CI"] = ci
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no_native_build", "-p", "no:cacheprovider", *GUARDED]
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("ci", [None, "true"])
def test_a_missing_compiled_library_skips_but_fails_under_ci(tmp_path, ci):
    out = _pytest_without_the_build(tmp_path, ci)
    summary = out.stdout.strip().splitlines()[-1]
    if ci is None:
        assert out.returncode == 0 and "skipped" in summary and "error" not in summary, out.stdout[-2000:]
    else:
        assert out.returncode == 1 and "skipped" not in summary, out.stdout[-2000:]
        assert "CI must test the compiled libraries" in out.stdout
