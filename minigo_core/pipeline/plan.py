"""The bounded plan of one Snakemake invocation (what a generation consists of: `data/schedule.py`).

The workflow (`workflow/rules/common.smk`) uses `plan()` to keep Snakemake's DAG bounded: only the
generations that are not done yet (plus at most `max_jobs` jobs' worth of future generations) are planned,
so planning costs the same at generation 100 as at generation 1.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from minigo_core.base.config import ConfigError, RunConfig
from minigo_core.data import layout
from minigo_core.data.schedule import (
    frontier,
    generation_outputs,
    jobs_per_generation,
    last_window,
    missing_files,
)

DEFAULT_MAX_JOBS = (
    1000  # jobs of the generations planned at once: keeps `snakemake -n` to seconds (docs/BENCHMARKS.md)
)


def plan_cost_per_generation(cfg: RunConfig) -> int:
    """What one generation counts against the plan's `max_jobs`: its jobs (`jobs_per_generation`). The
    workflow resolves one file per self-play job (its record), not one per game, so planning time grows
    with the jobs, not with the games they play; with `storage.pack_old_generations` one more, the pack of
    the generation its window leaves behind."""
    return jobs_per_generation(cfg) + int(cfg.storage.pack_old_generations)


# ---------------------------------------------------------------------------------------------------------
# The bounded plan.
@dataclass(frozen=True)
class Plan:
    """Generations one Snakemake invocation works on.

    `first..last` get every rule (bootstrap/window/train/self-play/games-complete/evaluate); generations
    below `first` are finished and appear only as existing input files, so the DAG never reaches into
    them. `late_evaluations` are older generations that are done except for some evaluation files (an
    evaluation that failed while the run went on): only their evaluate jobs are planned. `packs` are the
    generations whose files this invocation packs (`pack_generations`).
    """

    first: int
    last: int
    generations: int
    late_evaluations: tuple[int, ...] = ()
    explicit: bool = False
    packs: tuple[int, ...] = ()  # generations this invocation packs (`storage.pack_old_generations`)

    @property
    def planned(self) -> range:
        return range(self.first, self.last + 1)

    @property
    def finished(self) -> bool:
        return self.first > self.generations and not self.late_evaluations and not self.packs

    @property
    def complete_run(self) -> bool:
        """True when this plan reaches the run's last generation (no further invocation is needed)."""
        return self.last >= self.generations

    def describe(self) -> str:
        if self.finished:
            return f"all {self.generations} generations are done"
        parts = []
        if self.first <= self.last:
            parts.append(f"generations {self.first}..{self.last} of {self.generations}")
        if self.late_evaluations:
            parts.append("late evaluations of generations " + ",".join(map(str, self.late_evaluations)))
        if self.packs:
            parts.append("packs of generations " + ",".join(map(str, self.packs)))
        return "; ".join(parts)


def plan(
    cfg: RunConfig, first: int | None = None, last: int | None = None, max_jobs: int = DEFAULT_MAX_JOBS
) -> Plan:
    """The generations to put into the DAG.

    Defaults: from the first unfinished generation to as many generations as fit `max_jobs` jobs (at least
    one), capped at the run's last generation. `first`/`last` given explicitly (to rerun a generation) are
    taken as they are, after checking that the generations before `first` are finished.
    """
    G = cfg.generations
    auto_first, late = frontier(cfg)
    if first is None:
        start = auto_first
    else:
        if not 0 <= first <= G:
            raise ConfigError(f"config key 'first_generation' = {first} is out of range; allowed: 0..{G}")
        if first > auto_first:
            raise ConfigError(
                f"config key 'first_generation' = {first}, but generation {auto_first} is not finished "
                f"(missing: {', '.join(missing_files(generation_outputs(cfg, auto_first))[:3])}); "
                f"run generations from {auto_first} first"
            )
        start = first
    horizon = max(1, max_jobs // max(1, plan_cost_per_generation(cfg)))
    end = min(G, start + horizon - 1)
    if last is not None:
        if not start <= last <= G:
            raise ConfigError(f"config key 'last_generation' = {last} is out of range; allowed: {start}..{G}")
        end = last if first is not None else min(end, last)
    late = tuple(g for g in late if g < start)
    if first is not None:
        _refuse_packed(cfg, start, end)
    packs = pack_generations(cfg, start, end)
    return Plan(
        first=start, last=end, generations=G, late_evaluations=late, explicit=first is not None, packs=packs
    )


def pack_generations(cfg: RunConfig, first: int, last: int) -> tuple[int, ...]:
    """The generations to pack (`storage.pack_old_generations`): generation h once the last window that
    reads it (`last_window`: h + W's, or with `window.generations_schedule` the last that a growing window
    reaches back to h) is built: those whose last window is planned, and older ones whose last window is
    built but that are not packed yet (a run killed before their pack). Two `stat` calls per older one."""
    if not cfg.storage.pack_old_generations:
        return ()
    late, planned = [], []
    for h in range(0, last):  # a generation's last window is a later one
        g = last_window(cfg, h)
        if first <= g <= last:
            planned.append(h)
        elif g < first and not os.path.exists(layout.packed_marker_path(cfg.root, h)):
            if os.path.exists(layout.window_manifest_path(cfg.root, g)):
                late.append(h)
    return tuple(late + planned)


def _refuse_packed(cfg: RunConfig, first: int, last: int) -> None:
    """A rerun of generations first..last replays their self-play: none of them may be packed."""
    packed = [h for h in range(first, last + 1) if os.path.exists(layout.pack_path(cfg.root, h))]
    if packed:
        raise ConfigError(
            f"config key 'first_generation' = {first}: the rerun would replay the self-play of generations "
            f"{', '.join(map(str, packed))}, which are packed ({layout.pack_path(cfg.root, packed[0])}); "
            "unpack each first: minigo unpack --config "
            f"{layout.effective_config_path(cfg.root)} --generation {packed[0]}"
        )
