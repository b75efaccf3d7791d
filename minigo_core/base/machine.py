"""The machine a measurement ran on, named once for every benchmark, calibration and cost plan."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name: `lscpu`'s "Model name", else /proc/cpuinfo's "model name", else
    `platform.processor()`, else "unknown"."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model name")) and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
