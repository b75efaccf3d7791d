"""The bounded plan of a run (`minigo_core.pipeline.plan`), without Snakemake: which generations an
invocation plans over a half-finished run, under a job budget, and the evaluation matches of each generation.
The same plans as Snakemake dry runs: tests/e2e/test_workflow.py.
"""

from __future__ import annotations

import os

import pytest

from minigo_core.base.config import ConfigError, load_config
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import layout, schedule
from minigo_core.pipeline import plan as planning


def test_plan_starts_at_first_unfinished_generation_and_respects_the_job_budget(finished_run):
    cfg, _ = finished_run(done=3)
    plan = planning.plan(cfg)
    assert (plan.first, plan.last, plan.late_evaluations) == (3, 6, ())
    per_generation = planning.plan_cost_per_generation(cfg)  # each self-play job counts as one
    # self-play jobs, games-complete, window, train; 2 matches, the ladder rating and its first rating (5x5
    # has a ladder)
    assert per_generation == schedule.selfplay_job_count(cfg) + 3 + 2 + 2 == schedule.jobs_per_generation(cfg)
    assert planning.plan(cfg, max_jobs=2 * per_generation).planned == range(3, 5)
    assert planning.plan(cfg, max_jobs=1).planned == range(3, 4)  # at least one generation


def test_plan_keeps_a_missing_old_evaluation_without_replanning_its_generation(finished_run):
    cfg, _ = finished_run(done=3)
    os.remove(layout.eval_path(cfg.root, 1, "gen0"))
    plan = planning.plan(cfg)
    assert plan.first == 3 and plan.late_evaluations == (1,)


def test_plan_missing_model_moves_the_frontier_back(finished_run):
    cfg, _ = finished_run(done=3)
    os.remove(layout.model_path(cfg.root, 2))
    assert planning.plan(cfg).first == 2


def test_plan_explicit_range_for_a_rerun_and_its_errors(finished_run):
    cfg, _ = finished_run(done=3)
    plan = planning.plan(cfg, first=1, last=1)
    assert plan.planned == range(1, 2) and plan.explicit
    with pytest.raises(ConfigError, match="first_generation.*generation 3 is not finished"):
        planning.plan(cfg, first=5)
    with pytest.raises(ConfigError, match="last_generation"):
        planning.plan(cfg, first=2, last=1)


def test_evaluation_matches_are_one_per_distinct_opponent(tmp_path, write_config):
    cfg = load_config(str(write_config(tmp_path, evaluate={"opponents": ["gen0", "previous", "gnugo:1"]})))
    assert schedule.evaluation_specs(cfg, 0) == []
    assert [s.text for s in schedule.evaluation_specs(cfg, 1)] == ["gen0", "gnugo:1"]  # previous is gen0 here
    assert [s.text for s in schedule.evaluation_specs(cfg, 2)] == ["gen0", "previous", "gnugo:1"]
    assert schedule.evaluation_file(cfg, 1, PlayerSpec.parse("previous")) == layout.eval_path(
        cfg.root, 1, "gen0"
    )
    assert layout.eval_path(cfg.root, 2, PlayerSpec.parse("gnugo:1").slug).endswith(
        "eval/gen0002/vs_gnugo-1.json"
    )
