"""`python -m minigo_core.bench ablation` (or `python -m minigo_core.bench.ablation`): the driver's command.

`minigo_core.bench`'s dispatcher runs a benchmark that is a package through this module's `main`."""

from __future__ import annotations

import sys

from minigo_core.bench.ablation.driver import main  # the command; its ArgumentParser is the driver's

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
