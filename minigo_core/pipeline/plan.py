"""The bounded plan of one Snakemake invocation (what a generation consists of: `data/schedule.py`).

The workflow (`workflow/rules/common.smk`) uses `plan()` to keep Snakemake's DAG bounded: only the
generations that are not done yet (plus at most `max_jobs` jobs' worth of future generations) are planned,
so planning costs the same at generation 100 as at generation 1. For the run's HTML report, one finished
generation's complete jobs may join them (`report_generation`), so that the report draws a whole generation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from minigo_core.base.config import ConfigError, RunConfig
from minigo_core.data import layout
from minigo_core.data.schedule import (
    evaluation_files,
    frontier,
    generation_outputs,
    jobs_per_generation,
    last_window,
    missing_files,
    selfplay_generations,
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
    generations whose files this invocation packs (`pack_generations`). `shown` is a finished generation
    whose jobs, all complete, are put in the DAG as well, with `shown_packs` (the packs its window
    allowed), so that Snakemake's report draws a whole generation (config key `report_generation`): none
    of them runs, unless one of its files was deleted.
    """

    first: int
    last: int
    generations: int
    late_evaluations: tuple[int, ...] = ()
    explicit: bool = False
    packs: tuple[int, ...] = ()  # generations this invocation packs (`storage.pack_old_generations`)
    shown: tuple[int, ...] = ()  # a finished generation in the DAG for the report (`report_generation`)
    shown_packs: tuple[int, ...] = ()  # the packs of older generations that its window allowed

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
        shown = "".join(f"; generation {g}'s finished jobs in the DAG for the report" for g in self.shown)
        if self.finished:
            return f"all {self.generations} generations are done{shown}"
        parts = []
        if self.first <= self.last:
            parts.append(f"generations {self.first}..{self.last} of {self.generations}")
        if self.late_evaluations:
            parts.append("late evaluations of generations " + ",".join(map(str, self.late_evaluations)))
        if self.packs:
            parts.append("packs of generations " + ",".join(map(str, self.packs)))
        return "; ".join(parts) + shown


def plan(
    cfg: RunConfig,
    first: int | None = None,
    last: int | None = None,
    max_jobs: int = DEFAULT_MAX_JOBS,
    report_generation: int | None = None,
) -> Plan:
    """The generations to put into the DAG.

    Defaults: from the first unfinished generation to as many generations as fit `max_jobs` jobs (at least
    one), capped at the run's last generation. `first`/`last` given explicitly (to rerun a generation) are
    taken as they are, after checking that the generations before `first` are finished. `report_generation`
    adds one finished generation's complete jobs (`with_report_generation`).
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
    bounded = Plan(
        first=start, last=end, generations=G, late_evaluations=late, explicit=first is not None, packs=packs
    )
    return bounded if report_generation is None else with_report_generation(cfg, bounded, report_generation)


def with_report_generation(cfg: RunConfig, bounded: Plan, generation: int) -> Plan:
    """`bounded` with finished generation `generation`'s jobs in the DAG as well (`Plan.shown`): window,
    training, self-play jobs, games-complete marker, evaluations and ladder ratings, and the packs its window
    allowed. Their files all exist, so nothing of theirs runs; Snakemake's report, which draws the rules of
    the jobs in its DAG, then shows a whole generation beside the summary rules, instead of the summary
    rules alone that a finished run's plan holds. One generation more, whatever the run's length: the plan
    stays bounded. A generation already planned adds nothing; one neither planned nor before the planned
    ones (all finished), or packed (its self-play job records are in the pack), is refused."""
    G = cfg.generations
    if not 1 <= generation <= G:
        raise ConfigError(f"config key 'report_generation' = {generation} is out of range; allowed: 1..{G}")
    if generation in bounded.planned:
        return bounded
    if generation >= bounded.first:  # not finished, or after a rerun's generations, which it would redo
        raise ConfigError(
            f"config key 'report_generation' = {generation}: generation {generation} is neither planned nor "
            f"finished before the planned ones ({bounded.describe()})"
        )
    if os.path.exists(layout.pack_path(cfg.root, generation)):
        raise ConfigError(
            f"config key 'report_generation' = {generation}: generation {generation} is packed "
            f"({layout.pack_path(cfg.root, generation)}); choose a generation that no window has left "
            f"behind, such as {default_report_generation(cfg)}"
        )
    shown_packs = ()
    if cfg.storage.pack_old_generations:
        shown_packs = tuple(
            h
            for h in range(generation)
            if last_window(cfg, h) == generation
            and h not in bounded.packs
            and os.path.exists(layout.packed_marker_path(cfg.root, h))
        )
    return replace(bounded, shown=(generation,), shown_packs=shown_packs)


def default_report_generation(cfg: RunConfig) -> int:
    """The generation a finished run's report draws: the latest with every rule of a generation (self-play,
    which the last generation has none of, and evaluations, which `evaluate.every` gives some) that is not
    packed; failing that, the latest with self-play that is not packed; failing that, the last one. With
    packing, the generations still loose are the last W, so the one drawn is among them."""
    candidates = [
        g
        for g in range(cfg.generations, 0, -1)
        if g in selfplay_generations(cfg) and not os.path.exists(layout.pack_path(cfg.root, g))
    ]
    evaluated = [g for g in candidates if evaluation_files(cfg, g)]
    return (evaluated or candidates or [cfg.generations])[0]


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
