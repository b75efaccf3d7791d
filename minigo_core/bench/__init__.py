"""Benchmark scripts (not tests): `python -m minigo_core.bench NAME [options]` runs `minigo_core.bench.NAME`.

Each module has `main(argv) -> int` and prints its numbers, with ratios against a baseline measured in the
same run so the figures mean something on any machine.
"""

from __future__ import annotations

import pkgutil


def available() -> list[str]:
    """Names of the benchmark modules in this package."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
