"""The workflow's targets (`minigo_core.pipeline.targets`), without Snakemake: what one invocation produces
(the last planned generation's evaluations deferred when the plan stops short) and what the run summary reads.
The same targets in Snakemake dry runs: tests/e2e/test_workflow.py."""

from __future__ import annotations

import os

from minigo_core.data import layout, schedule
from minigo_core.pipeline import plan as planning
from minigo_core.pipeline import targets


def test_generation_targets_defer_the_last_planned_generations_evaluations(finished_run):
    cfg, _ = finished_run(done=3)
    plan = planning.Plan(first=3, last=4, generations=cfg.generations, late_evaluations=(1,), packs=(0,))
    got = targets.generation_targets(cfg, plan)
    assert set(schedule.evaluation_files(cfg, 1)) <= set(got)  # the late evaluations
    assert set(schedule.generation_outputs(cfg, 3)) <= set(got)
    assert layout.model_path(cfg.root, 4) in got
    assert schedule.evaluation_files(cfg, 4) and not set(schedule.evaluation_files(cfg, 4)) & set(got)
    assert got[-1] == layout.packed_marker_path(cfg.root, 0)
    assert schedule.generation_outputs(cfg, 2)[0] not in got  # finished before the plan


def test_generation_targets_keep_the_evaluations_of_an_explicit_or_final_plan(finished_run):
    cfg, _ = finished_run(done=3)
    last = cfg.generations
    for plan in (
        planning.Plan(first=3, last=4, generations=last, explicit=True),
        planning.Plan(first=3, last=last, generations=last),
    ):
        assert set(schedule.evaluation_files(cfg, plan.last)) <= set(targets.generation_targets(cfg, plan))


def test_summary_inputs_are_the_results_that_exist_or_are_produced(finished_run):
    cfg, _ = finished_run(done=3)
    plan = planning.Plan(first=3, last=4, generations=cfg.generations)
    produced = targets.generation_targets(cfg, plan)
    os.remove(schedule.evaluation_files(cfg, 1)[0])  # a result that is neither there nor produced
    got = targets.summary_inputs(cfg, plan, produced)
    assert schedule.evaluation_files(cfg, 1)[0] not in got
    assert set(schedule.evaluation_files(cfg, 2)) <= set(got)  # on disk
    assert set(schedule.evaluation_files(cfg, 3)) <= set(got)  # produced by this invocation
    assert not set(schedule.evaluation_files(cfg, 4)) & set(got)  # deferred: neither there nor produced
    # training metrics: on disk for 1-2, produced for the planned 3-4; never for generation 0
    metrics = [layout.train_metrics_path(cfg.root.rstrip("/"), g) for g in range(5)]
    assert [m in got for m in metrics] == [False, True, True, True, True]
    assert layout.model_path(cfg.root, 3) not in got  # results only, no models
    assert targets.summary_inputs(cfg, plan, [], exists=lambda f: False) == metrics[3:]
