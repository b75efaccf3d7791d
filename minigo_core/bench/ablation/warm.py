"""The ablation's warm start (a spec with `warm_start:`): every row goes on from one base run.

A run's first generations are the same whatever the lever: generation 0 is a random net, and with
`selfplay.model_lag` 1 the games of generation 1 are its games too, so on two cores the first ~4 minutes of
every row would be the same random games. With `warm_start`, the base (`{root}/{warm_start.name}`: the spec's
base file with its `common` and the base's own `set`, run for `warm_start.budget_minutes` like a row) is run
once; every row's run directory then starts as a copy of the base's finished generations 0..G (models, games,
windows, training files and job records; G: the newest generation with both its model and its games'
completion marker), and the row's budget starts there. Its wall time is the base's plus its own, the same
for every row.

A row with `from_scratch: true` (a net of another shape, which cannot go on from the base's weights) runs
from nothing for the base's wall time plus the budget instead: the same total wall time.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from minigo_core.data import layout

_GENERATION = re.compile(r"gen(\d{4})")
# what a copy leaves out: the base's lock, its config (the row writes its own), Snakemake's logs and summary
_TOP_LEVEL_SKIPPED = {"minigo-run.lock", "config.yaml", "summary"}


def last_finished(run_root: Path) -> int | None:
    """The newest generation with its model and its games' completion marker (None: none yet): the row
    trains generation G+1 on the windows these games form, and plays it with model G."""
    found, g = None, 0
    while Path(layout.model_path(str(run_root), g)).exists() and (
        g == 0 or Path(layout.complete_marker_path(str(run_root), g)).exists()
    ):
        found, g = g, g + 1
    return found


def copy_generations(base_run: Path, row_run: Path, last: int) -> None:
    """The base run's files of generations 0..`last` copied to `row_run` (which must not exist yet)."""

    def skipped(folder: str, names: list[str]) -> set[str]:
        out = {n for n in names if (m := _GENERATION.search(n)) and int(m.group(1)) > last}
        if Path(folder) == base_run:
            out |= _TOP_LEVEL_SKIPPED & set(names)
        if Path(folder) == base_run / "logs":
            out |= {"snakemake"} & set(names)
        return out

    shutil.copytree(base_run, row_run, ignore=skipped)
