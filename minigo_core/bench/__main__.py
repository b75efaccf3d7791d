"""`python -m minigo_core.bench NAME [options]`: run the benchmark `minigo_core.bench.NAME`.

A benchmark is a module with `main(argv) -> int`, or a sub-package (`ablation/`) whose `__main__` module has
that `main` (a package's `__init__` holds only its docstring)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def available() -> list[str]:
    """Names of the benchmark modules and sub-packages in this package (each has `main(argv) -> int`, a
    sub-package in its `__main__`; those whose name starts with `_` are their helpers)."""
    return sorted(
        m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_")
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m minigo_core.bench NAME [options]   (NAME --help for its options)\n")
        print("benchmarks: " + ", ".join(names))
        return 0
    name, rest = argv[0], argv[1:]
    if name not in names:
        print(f"unknown benchmark {name!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"minigo_core.bench.{name}")
    if hasattr(module, "__path__"):  # a sub-package: its command is its __main__ module's
        module = importlib.import_module(f"minigo_core.bench.{name}.__main__")
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
