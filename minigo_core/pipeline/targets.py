"""The files one Snakemake invocation produces and those the run summary reads: the targets of
`workflow/rules/common.smk`, as functions of the run config and the invocation's plan."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from minigo_core.base.config import RunConfig
from minigo_core.data import layout
from minigo_core.data.schedule import evaluation_files, generation_outputs
from minigo_core.pipeline.plan import Plan


def generation_targets(cfg: RunConfig, plan: Plan) -> list[str]:
    """The per-generation files this invocation produces: every output of the planned generations, the
    late evaluations of older ones and the packed markers of the generations it packs; and those of the
    finished generation shown in the report (`plan.shown`, `plan.shown_packs`: files that exist, asked for
    so that their complete jobs enter the DAG).

    When the plan stops short of the run's last generation, the evaluations of its last generation are left
    to the next invocation (which finds them missing and plans them as late evaluations): they then run
    alongside the next generation's training and self-play instead of holding it up.
    """
    root = cfg.root.rstrip("/")
    targets = []
    for g in plan.late_evaluations:
        targets += generation_outputs(cfg, g)
    defer = plan.last < cfg.generations and not plan.explicit
    for g in plan.planned:
        outputs = generation_outputs(cfg, g)
        if defer and g == plan.last:
            outputs = [f for f in outputs if f not in evaluation_files(cfg, g)]
        targets += outputs
    for g in plan.shown:
        targets += [f for f in generation_outputs(cfg, g) if f not in targets]
    return targets + [layout.packed_marker_path(root, h) for h in (*plan.packs, *plan.shown_packs)]


def summary_inputs(
    cfg: RunConfig,
    plan: Plan,
    produced: Iterable[str],
    exists: Callable[[str], bool] = os.path.exists,
) -> list[str]:
    """The results the summary reads (a few files per generation: its evaluations, ladder rating and
    training metrics): those that exist or that this invocation produces (`produced`: its generation
    targets), so the summary is brought up to date at the end of every invocation."""
    root = cfg.root.rstrip("/")
    produced = set(produced)
    produced.update(layout.train_metrics_path(root, g) for g in plan.planned if g >= 1)
    files = []
    for g in range(0, plan.last + 1):
        candidates = generation_outputs(cfg, g)[1:]
        if g >= 1:
            candidates.append(layout.train_metrics_path(root, g))
        files += [f for f in candidates if f in produced or exists(f)]
    return files
