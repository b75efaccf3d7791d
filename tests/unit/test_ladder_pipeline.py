"""The fixed Elo ladder in the pipeline: the schedule's `ladder.json` per evaluated generation (only with a
ladder for the board size and `evaluate.ladder`), the workflow's `minigo ladder rate` arguments (the chain of
`--start-from`), `--start-from` itself, the fixed-scale curve, the live line and the config keys.

The tiny run that produces the files is tests/e2e/test_workflow.py's."""

from __future__ import annotations

import json
import math

import pytest

from minigo_core.base.config import ConfigError
from minigo_core.data import compare, layout, schedule
from minigo_core.jobs.ladder import cli_main
from minigo_core.pipeline import workflow
from minigo_core.rating import ladder_rate
from minigo_core.rating.ladder import calibrated_sizes, ladder_path
from minigo_core.report import fixed_scale, plots, progress

NO_LADDER_SIZE = 7  # config/ladder/ has no 7x7 table


def ladder_files(cfg, g: int) -> list[str]:
    return [f for f in schedule.evaluation_files(cfg, g) if f.endswith("/" + layout.LADDER_RATING)]


def test_the_ladder_path_is_repository_data_in_the_layout():
    assert ladder_path(5) == layout.ladder_path(5) and layout.has_ladder(5)
    assert 5 in calibrated_sizes() and NO_LADDER_SIZE not in calibrated_sizes()
    assert not layout.has_ladder(NO_LADDER_SIZE)
    assert layout.ladder_rating_path("r", 8) == "r/eval/gen0008/ladder.json"
    assert layout.ladder_log_path("r", 8) == "r/logs/evaluate/gen0008/ladder.log"


def test_schedule_lists_ladder_json_for_every_evaluated_generation(make_config):
    cfg = make_config(generations=6, evaluate={"every": 2})  # config/tiny.yaml: 5x5, which has a ladder
    assert schedule.ladder_rated(cfg)
    assert {g: ladder_files(cfg, g) for g in range(7)} == {
        0: [],
        1: [],
        2: [layout.ladder_rating_path(cfg.root, 2)],
        3: [],
        4: [layout.ladder_rating_path(cfg.root, 4)],
        5: [],
        6: [layout.ladder_rating_path(cfg.root, 6)],
    }
    assert schedule.evaluation_files(cfg, 4)[-1] == layout.ladder_rating_path(cfg.root, 4)
    per = schedule.selfplay_job_count(cfg) + 3 + len(schedule.opponent_specs(cfg)) + 2  # + the first rating
    assert schedule.jobs_per_generation(cfg) == per


@pytest.mark.parametrize(
    "override",
    [{"evaluate": {"ladder": False}}, {"board_size": NO_LADDER_SIZE}, {"evaluate": {"games": 0}}],
    ids=["evaluate.ladder false", "no ladder for the board size", "evaluation off"],
)
def test_schedule_lists_no_ladder_json_without_a_ladder_or_when_off(make_config, override):
    cfg = make_config(override, generations=4)
    assert not schedule.ladder_rated(cfg)
    assert all(ladder_files(cfg, g) == [] for g in range(5))
    assert schedule.jobs_per_generation(cfg) == schedule.selfplay_job_count(cfg) + 3 + len(
        schedule.opponent_specs(cfg)
    )


def test_a_rating_never_starts_from_another_generations_result(make_config):
    """Each full rating starts from its own model's first rating (or the ladder's middle when the run makes
    none), never from another generation's: no rating waits for another, none inherits its error."""
    evaluate = {"every": 2, "ladder_half_width": 80, "ladder_half_width_mid": 120, "ladder_max_games": 50}
    cfg = make_config(generations=6, evaluate=evaluate)
    for g in (2, 4, 6):  # the last generation has no first rating: its full rating comes at once
        own = [layout.ladder_first_rating_path(cfg.root, g)] if g < 6 else []
        assert workflow.ladder_start(cfg, g) == own
        options = workflow.ladder_options(cfg, g)
        assert options[:3] == [f"gen{g}", "--board-size", "5"]
        assert [options[i + 1] for i, o in enumerate(options) if o == "--continue-from"] == own
        assert options[options.index("--max-games") + 1] == "50"
        # the curve's points to the mid half-width, the last model to the full one
        assert options[options.index("--target-half-width") + 1] == ("80.0" if g == 6 else "120.0")
    none = make_config(generations=6, evaluate={**evaluate, "ladder_first_games": 0})
    assert all(workflow.ladder_start(none, g) == [] for g in (2, 4, 6))
    assert all("--continue-from" not in workflow.ladder_options(none, g) for g in (2, 4, 6))
    seeds = {g: schedule.ladder_seed(cfg, g) for g in (2, 4, 6)}
    assert len(set(seeds.values())) == 3 and seeds == {g: schedule.ladder_seed(cfg, g) for g in (2, 4, 6)}
    assert schedule.ladder_seed(make_config(seed=8, generations=6), 2) != seeds[2]
    assert all(0 <= s < 2**31 for s in seeds.values())


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"ladder_half_width": 0}, "evaluate.ladder_half_width"),
        ({"ladder_half_width": -5.0}, "evaluate.ladder_half_width"),
        ({"ladder_max_games": 0}, "evaluate.ladder_max_games"),
    ],
)
def test_config_rejects_bad_ladder_settings(make_config, override, key):
    with pytest.raises(ConfigError, match=key):
        make_config(evaluate=override)


def test_start_from_reads_a_previous_rating(tmp_path, capsys):
    previous = tmp_path / "previous.json"
    previous.write_text(json.dumps({"elo": 612.5, "ci95": [500.0, 700.0]}))
    assert ladder_rate.start_from(str(previous)) == 612.5
    out = tmp_path / "rating.json"
    args = ["rate", "uct:4", "--board-size", "5", "--max-games", "12", "--target-half-width", "400"]
    assert cli_main([*args, "--start-from", str(previous), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["start_elo"] == 612.5 and math.isfinite(result["elo"])
    assert "--start-from" in result["command"]
    capsys.readouterr()
    for text in ("not json", json.dumps({"elo": "high"}), json.dumps([1, 2])):
        previous.write_text(text)
        with pytest.raises(ValueError, match="previous.json"):
            ladder_rate.start_from(str(previous))
        assert cli_main([*args, "--start-from", str(previous)]) == 2
        assert "--start-from" in capsys.readouterr().err
    with pytest.raises(ValueError, match="cannot read"):
        ladder_rate.start_from(str(tmp_path / "missing.json"))


def test_a_rating_goes_on_from_its_own_first_rating(tmp_path, capsys):
    """`--continue-from` the same player's rating file: its games count (per rung, in the budget), it starts
    at its Elo, and plays only the games it still needs; another player's file, or one with games against a
    rung the ladder does not play, is refused naming the option."""
    args = ["rate", "uct:4", "--board-size", "5", "--seed", "3", "--target-half-width", "150"]
    first, full = tmp_path / "first.json", tmp_path / "full.json"
    assert (
        cli_main(
            [*args, "--max-games", "8", "--batch", "2", "--min-games-per-rung", "2", "--out", str(first)]
        )
        == 0
    )
    before = json.loads(first.read_text())
    assert cli_main([*args, "--max-games", "30", "--continue-from", str(first), "--out", str(full)]) == 0
    after = json.loads(full.read_text())
    assert after["start_elo"] == before["elo"] and after["continued_from"] == {"file": str(first), "games": 8}
    assert 8 < after["games"] <= 30  # the budget counts the carried games
    for rung, entry in before["rungs"].items():  # every carried game is in the rating's totals
        assert after["rungs"][rung]["games"] >= entry["games"]
    capsys.readouterr()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**before, "player": "uct:8"}))
    assert cli_main([*args, "--continue-from", str(other)]) == 2
    assert "--continue-from" in capsys.readouterr().err
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({**before, "rungs": {"nope:1": {"games": 2, "score": 1}}}))
    assert cli_main([*args, "--continue-from", str(foreign)]) == 2
    assert "not a rung this rating plays" in capsys.readouterr().err
    rung = next(iter(before["rungs"]))
    malformed = tmp_path / "malformed.json"
    malformed.write_text(json.dumps({**before, "rungs": {rung: {"games": 2}}}))  # no score
    assert cli_main([*args, "--continue-from", str(malformed)]) == 2
    assert f"rung {rung}: expected its games and score" in capsys.readouterr().err


def write_rating(root, g: int, elo: float, half: float, bracket=None, rungs=None) -> None:
    path = layout.ladder_rating_path(str(root), g)
    data = {"elo": elo, "ci95": [elo - half, elo + half], "bracket": bracket, "rungs": rungs or {}}
    (root / "eval" / f"gen{g:04d}").mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        json.dump(data, handle)


def write_marker(root, g: int, positions: int) -> None:
    (root / "games").mkdir(parents=True, exist_ok=True)
    with open(layout.complete_marker_path(str(root), g), "w") as handle:
        json.dump({"generation": g, "positions": positions}, handle)


def test_fixed_scale_curve_reads_every_rating_with_times_and_positions(tmp_path):
    for g, positions in enumerate([100, 150, 200]):
        write_marker(tmp_path, g, positions)
    write_rating(tmp_path, 1, 300.0, 80.0, ["random", "uct:4"])
    write_rating(tmp_path, 3, 500.0, 60.0)
    (tmp_path / "eval" / "gen0002").mkdir()  # an evaluated folder without a rating
    (tmp_path / "eval" / "gen0002" / "ladder.json").write_text("{broken")
    points = fixed_scale.curve(str(tmp_path), {0: 1000.0, 1: 1060.0, 3: 1240.0})
    assert [(p["generation"], p["elo"], p["minutes"], p["positions"]) for p in points] == [
        (1, 300.0, 1.0, 100),
        (3, 500.0, 4.0, 450),
    ]
    assert points[0]["ci95"] == [220.0, 380.0]
    png = plots.plot_learning_curve(points, fixed_scale.ladder_rungs(5), 5)
    assert png.startswith(b"\x89PNG")
    empty = plots.plot_learning_curve([], fixed_scale.ladder_rungs(NO_LADDER_SIZE), NO_LADDER_SIZE)
    assert fixed_scale.ladder_rungs(NO_LADDER_SIZE) is None and empty.startswith(b"\x89PNG")


def test_rung_labels_join_near_equal_rungs_so_that_they_do_not_overlap():
    rungs = [("uct:2896", 1083.0), ("gnugo:1+r14", 1206.0), ("uct:4096", 1212.0), ("uct:8192", 1367.0)]
    assert fixed_scale.rung_labels(rungs, 40.0) == [
        ("uct:2896", 1083.0), ("gnugo:1+r14 / uct:4096", 1206.0), ("uct:8192", 1367.0)
    ]  # fmt: skip
    assert fixed_scale.rung_labels(rungs, 1.0) == rungs
    assert fixed_scale.rung_labels([], 10.0) == []


def test_rungs_around_keep_the_range_and_the_nearest_on_each_side():
    rungs = [("random", -100.0), ("uct:4", 300.0), ("uct:16", 450.0), ("uct:64", 800.0), ("uct:256", 1100.0)]
    assert fixed_scale.rungs_around(rungs, 320.0, 500.0) == rungs[1:4]
    assert fixed_scale.rungs_around(rungs, 2000.0, 2100.0) == rungs[-1:]
    assert fixed_scale.rungs_around(rungs, -500.0, -400.0) == rungs[:1]


def test_the_live_line_shows_the_newest_fixed_scale_rating():
    rungs = {"uct:4": {"rung_elo": 300.0}, "uct:16": {"rung_elo": 450.0}, "random": {"rung_elo": -100.0}}
    bracketed = {"elo": 1230.4, "ci95": [1180.2, 1280.0], "bracket": ["uct:4096", "gnugo:1"], "rungs": {}}
    older = {"elo": 380.0, "ci95": [300.0, 460.0], "bracket": None, "rungs": rungs}
    assert progress.ladder_texts({}) == []
    texts = progress.ladder_texts({12: older, 40: bracketed})
    assert texts[0] == "Elo 1230 [1180, 1280], between uct:4096 and gnugo:1 (gen 40)"
    assert texts[1] == "Elo 1230 [1180, 1280] (gen 40)"
    assert fixed_scale.rating_text(older, 12) == "Elo 380 [300, 460], between uct:4 and uct:16 (gen 12)"
    above = {**older, "elo": 900.0}
    assert fixed_scale.between(above) == "above uct:16"


def test_the_live_line_prefers_the_ladder_rating(tmp_path):
    write_rating(tmp_path, 2, 207.0, 98.0, ["random", "uct:4"])
    state = progress.RunProgress(str(tmp_path), 2, 0.0)
    state.see_evaluations(progress.eval_file_times(str(tmp_path)))
    assert state.strength[0] == "Elo 207 [109, 305], between random and uct:4 (gen 2)"


def test_the_run_comparison_ignores_the_ladder_ratings_wall_clock():
    rel = layout.ladder_rating_path("", 2).lstrip("/")
    assert compare.wall_clock_fields(rel) >= {"date", "wall_seconds"}
    assert layout.LEARNING_CURVE_PLOT in layout.SUMMARY_FILES
    assert any(p.endswith(layout.LEARNING_CURVE_PLOT) for p in compare.SKIPPED)
    first = layout.ladder_first_rating_path("", 2).lstrip("/")
    assert compare.wall_clock_fields(first) >= {"date", "wall_seconds", "cpu_seconds"}
