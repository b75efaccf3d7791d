"""The bounded plan of a run (`minigo_core.pipeline.plan`), without Snakemake: which generations an
invocation plans over a half-finished run, under a job budget, and the evaluation matches of each generation.
The same plans as Snakemake dry runs: tests/e2e/test_workflow.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minigo_core.base.config import ConfigError, load_config
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import layout, schedule
from minigo_core.pipeline import plan as planning
from minigo_core.pipeline import targets


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


def test_report_generation_adds_one_finished_generations_jobs_and_refuses_others(finished_run):
    cfg, _ = finished_run(done=3)  # generations 0..2 finished, 3..6 to run
    bounded = planning.plan(cfg)
    shown = planning.plan(cfg, report_generation=2)
    assert shown.shown == (2,) and shown.shown_packs == ()
    assert (shown.first, shown.last, shown.packs) == (bounded.first, bounded.last, bounded.packs)  # bounded
    assert "generation 2's finished jobs in the DAG for the report" in shown.describe()
    assert planning.plan(cfg, report_generation=4).shown == ()  # planned already: nothing to add
    for generation, message in ((0, "out of range"), (7, "out of range")):
        with pytest.raises(ConfigError, match=f"report_generation' = {generation}.*{message}"):
            planning.plan(cfg, report_generation=generation)
    cfg, _ = finished_run(done=7)  # every generation finished
    assert planning.plan(cfg, report_generation=6).shown == (6,)
    with pytest.raises(ConfigError, match="report_generation' = 3: generation 3 is neither planned"):
        planning.plan(cfg, first=2, last=2, report_generation=3)  # after a rerun's generation: refused


def test_the_reports_default_generation_has_self_play_and_matches_and_is_not_packed(finished_run):
    cfg, _ = finished_run(done=7)  # 6 generations; evaluate.every 1 (config/tiny.yaml)
    assert planning.default_report_generation(cfg) == 5  # the last, 6, plays no self-play
    every_4th = load_config({**cfg.to_dict(), "evaluate": {**cfg.to_dict()["evaluate"], "every": 4}})
    assert planning.default_report_generation(every_4th) == 4
    Path(layout.pack_path(cfg.root, 4)).touch()  # packed: its job records are in the pack
    assert planning.default_report_generation(every_4th) == 5  # self-play, though no matches
    with pytest.raises(ConfigError, match="generation 4 is packed"):
        planning.plan(every_4th, report_generation=4)


def test_report_generation_with_packing_adds_the_pack_its_window_allowed(tmp_path, write_config):
    from minigo_core.bench.dag import build_run

    config = write_config(tmp_path, window={"generations": 2}, storage={"pack_old_generations": True})
    cfg = load_config(str(build_run(str(tmp_path / "run"), config, done=5, games=3, generations=4)))
    assert planning.default_report_generation(cfg) == 3  # 0..2 are packed, 4 plays no self-play
    shown = planning.plan(cfg, report_generation=3)
    assert shown.shown == (3,) and shown.shown_packs == (1,)  # window 3 was the last to read generation 1
    got = targets.generation_targets(cfg, shown)
    assert set(schedule.generation_outputs(cfg, 3)) <= set(got)
    assert got[-1] == layout.packed_marker_path(cfg.root, 1)


def test_the_report_command_asks_for_the_default_generation_in_the_last_config_option(finished_run):
    from minigo_core.pipeline import runner

    cfg, _ = finished_run(done=7)
    report = ["--report", layout.summary_path(cfg.root, layout.REPORT_FILE)]
    assert runner.report_command(["snakemake", "-n"], cfg) == [
        "snakemake", "-n", "--config", "report_generation=5", *report
    ]  # fmt: skip
    # Snakemake keeps only the last --config option's values: the key joins it, the budget's and the user's
    # keys stay
    cmd = ["snakemake", "--config", "plan_max_jobs=9", "--cores", "2", "--config", "generations=4"]
    assert runner.report_command(cmd, cfg) == [*cmd[:6], "report_generation=5", cmd[6], *report]
