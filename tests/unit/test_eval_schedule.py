"""The evaluation schedule: every K-th generation and the last, and the last generation's final matches."""

from __future__ import annotations

import pytest

from minigo_core.base.config import ConfigError
from minigo_core.data import schedule
from minigo_core.pipeline import workflow

# 10 generations evaluated every generation against two opponents and the target, no final matches
EVALUATE = {
    "games": 8,
    "opponents": ["previous", "gnugo:1"],
    "target": "gen0",
    "every": 1,
    "quiet_last": 0,
    "final_games": 0,
    "final_opponents": [],
}


@pytest.fixture
def eval_config(make_config):
    """`eval_config(**evaluate)`: the run config of 10 generations with `EVALUATE` and `evaluate`."""
    return lambda **evaluate: make_config(generations=10, evaluate={**EVALUATE, **evaluate})


def test_every_k_generations_and_the_last(eval_config):
    cfg = eval_config(every=4)
    evaluated = [g for g in range(11) if schedule.evaluation_specs(cfg, g)]
    assert evaluated == [4, 8, 10]
    # 3 matches, the first ladder rating and the full one (5x5 has a ladder); the last: no first rating
    assert schedule.evaluation_files(cfg, 5) == [] and len(schedule.evaluation_files(cfg, 8)) == 3 + 2
    assert len(schedule.evaluation_files(cfg, 10)) == len(schedule.evaluation_specs(cfg, 10)) + 1
    assert schedule.generation_outputs(cfg, 5) == [
        f for f in schedule.generation_outputs(cfg, 5) if "/eval/" not in f
    ]
    assert [g for g in range(11) if schedule.evaluation_specs(eval_config(), g)] == list(range(1, 11))


def test_no_mid_run_evaluation_in_the_last_quiet_generations(make_config):
    """`evaluate.quiet_last` Q: no generation fewer than Q before the last is evaluated (its rating, beside
    the loop at a share of a core, would end after the last model); the last always is."""

    def evaluated(**evaluate) -> list[int]:
        cfg = make_config(generations=48, evaluate={**EVALUATE, "every": 8, **evaluate})
        return [g for g in range(49) if schedule.is_evaluated(cfg, g)]

    assert evaluated(quiet_last=12) == [8, 16, 24, 32, 48]  # config.yaml's: 40 would end after 48
    assert evaluated(quiet_last=0) == [8, 16, 24, 32, 40, 48]
    assert evaluated(quiet_last=8) == [8, 16, 24, 32, 40, 48]  # 40 is 8 before the last: not fewer
    assert evaluated(quiet_last=17) == [8, 16, 24, 48]
    assert evaluated(quiet_last=1000) == [48]
    cfg = make_config(generations=48, evaluate={**EVALUATE, "every": 8, "quiet_last": 12})
    assert schedule.evaluation_files(cfg, 40) == [] and schedule.evaluation_files(cfg, 32)
    assert not [f for f in schedule.generation_outputs(cfg, 40) if "/eval/" in f]


def test_final_matches_play_more_games_and_more_opponents(eval_config):
    cfg = eval_config(final_games=100, final_opponents=["random", "gnugo:2", "gen0"])
    last = [s.text for s in schedule.evaluation_specs(cfg, 10)]
    assert last == ["previous", "gnugo:1", "gen0", "random", "gnugo:2"]
    assert [s.text for s in schedule.evaluation_specs(cfg, 9)] == ["previous", "gnugo:1", "gen0"]
    final = ["--games", "100", "--no-early-stop"]
    assert workflow.evaluate_options(cfg, 10) == final  # the generation has final matches (equal time's)
    # the final games go to the target and the final opponents; `opponents` keep their regular matches,
    # which would only lengthen the run's end
    by_slug = {slug: workflow.evaluate_options(cfg, 10, slug) for slug in ("previous", "gnugo-1", "gen0",
                                                                           "random", "gnugo-2")}  # fmt: skip
    assert by_slug == {"previous": [], "gnugo-1": [], "gen0": final, "random": final, "gnugo-2": final}
    assert [schedule.match_games(cfg, 10, s) for s in schedule.evaluation_specs(cfg, 10)] == [8, 8] + [
        100
    ] * 3
    assert workflow.evaluate_options(cfg, 9) == [] and workflow.evaluate_options(cfg, 9, "gen0") == []
    assert workflow.evaluate_options(eval_config(), 10) == []  # final_games 0: the usual matches
    assert workflow.evaluate_options(eval_config(), 10, "gen0") == []
    assert "random" in workflow.opponent_slugs(cfg) and "gnugo-2" in workflow.opponent_slugs(cfg)


@pytest.mark.parametrize(
    "evaluate, key",
    [
        ({"every": 0}, "evaluate.every"),
        ({"quiet_last": -1}, "evaluate.quiet_last"),
        ({"final_games": -1}, "evaluate.final_games"),
        ({"final_opponents": ["gnugo:99"]}, "evaluate.final_opponents[0]"),
    ],  # fmt: skip
)
def test_bad_schedule_keys_are_named(eval_config, evaluate, key):
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        eval_config(**evaluate)
