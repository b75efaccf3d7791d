"""Strength on one scale, early: the first, quick ladder rating of each evaluated generation
(`eval/genGGGG/ladder_first.json`) in the schedule, the workflow's arguments and rule, and the fixed-scale
Elo leading the live line, `minigo status` and the summary `minigo run` ends with (synthetic run folders)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from minigo_core.data import layout, schedule
from minigo_core.jobs.ladder import cli_main as ladder_cli
from minigo_core.pipeline import runner, workflow
from minigo_core.report import fixed_scale, progress, status

REPO = Path(__file__).resolve().parents[2]


def write_rating(root: str, g: int, elo: float, half: float, first: bool = False, bracket=None) -> None:
    path = layout.ladder_first_rating_path(root, g) if first else layout.ladder_rating_path(root, g)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    rungs = {"uct:64": {"rung_elo": 810.0, "games": 10, "score": 4.0}}
    data = {"elo": elo, "ci95": [elo - half, elo + half], "bracket": bracket, "rungs": rungs}
    Path(path).write_text(json.dumps(data))


def test_every_evaluated_generation_but_the_last_gets_a_first_rating(make_config):
    cfg = make_config(generations=9, evaluate={"every": 3, "ladder_first_games": 12})
    firsts = {g: schedule.first_rating_file(cfg, g) for g in range(10)}
    assert {g for g, f in firsts.items() if f} == {3, 6}  # 9 is the last: its full rating comes at once
    assert (
        firsts[3]
        == layout.ladder_first_rating_path(cfg.root, 3)
        == f"{cfg.root}/eval/gen0003/ladder_first.json"
    )
    assert schedule.evaluation_files(cfg, 3)[-2:] == [firsts[3], layout.ladder_rating_path(cfg.root, 3)]
    assert schedule.evaluation_files(cfg, 9)[-1] == layout.ladder_rating_path(cfg.root, 9)
    assert firsts[3] in schedule.generation_outputs(cfg, 3)  # a run is not done without it
    off = make_config(generations=9, evaluate={"every": 3, "ladder_first_games": 0})
    assert not any(schedule.first_rating_file(off, g) for g in range(10))
    assert schedule.jobs_per_generation(cfg) == schedule.jobs_per_generation(off) + 1
    no_ladder = make_config(generations=9, evaluate={"every": 3, "ladder": False})
    assert not any(schedule.first_rating_file(no_ladder, g) for g in range(10))


def test_the_first_rating_is_cheap_seeded_and_waits_for_no_full_rating(make_config):
    cfg = make_config(generations=9, evaluate={"every": 3, "ladder_first_games": 12, "ladder_max_games": 200})
    first, full = workflow.first_rating_options(cfg, 6), workflow.ladder_options(cfg, 6)
    assert first[:3] == full[:3] == ["gen6", "--board-size", "5"]
    assert first[first.index("--max-games") + 1] == "12" and full[full.index("--max-games") + 1] == "200"
    seed = first[first.index("--seed") + 1]
    assert seed == str(schedule.first_rating_seed(cfg, 6)) != full[full.index("--seed") + 1]
    assert seed == workflow.first_rating_options(cfg, 6)[first.index("--seed") + 1]  # derived, not drawn
    # it starts from the ladder's middle, never from another generation's rating (first or full)
    for g in (3, 6, 9):
        assert workflow.first_rating_start(cfg, g) == []
        assert "--start-from" not in workflow.first_rating_options(cfg, g)
    assert first[first.index("--min-games-per-rung") + 1] == "4" and "--min-games-per-rung" not in full


def test_a_quick_search_moves_on_after_a_few_games_a_rung(tmp_path):
    """`--min-games-per-rung 4` (the first rating's): 8 games reach two rungs (10, the default: one)."""
    out = tmp_path / "rating.json"
    args = ["rate", "uct:16", "--board-size", "5", "--max-games", "8", "--seed", "3", "--out", str(out)]
    assert ladder_cli([*args, "--min-games-per-rung", "4", "--batch", "4"]) == 0
    quick = json.loads(out.read_text())["rungs"]
    assert sum(r["games"] for r in quick.values()) == 8 and len(quick) == 2
    assert ladder_cli(args) == 0
    assert len(json.loads(out.read_text())["rungs"]) == 1
    assert ladder_cli([*args, "--min-games-per-rung", "0"]) == 2


def test_the_rule_runs_the_first_rating_beside_the_loop_not_behind_it():
    """The workflow's rule: at the evaluations' held share (EVAL_NICE, not 19), under its own resource
    (not `evaluations`, which the matches and full ratings hold), its inputs the model and the config (its
    `start` input is empty: `first_rating_start`); the local profile counts it against no core, one at a
    time."""
    rules = (REPO / "workflow/rules/evaluate.smk").read_text()
    rule = rules[rules.index("rule ladder_first_rating:") :]
    assert '"nice -n {params.nice:q} {params.minigo} ladder rate {params.options:q}' in rule
    assert "nice=eval_nice" in rule  # EVAL_NICE; the last generation's at 0
    assert "first_ratings=1" in rule and "evaluations=" not in rule
    inputs = rule[rule.index("input:") : rule.index("output:")]
    assert "model=MODEL" in inputs and "start=first_rating_start" in inputs and "ladder_start" not in inputs
    profile = yaml.safe_load((REPO / "profiles/local/config.yaml").read_text())
    assert profile["set-threads"]["ladder_first_rating"] == 0 and profile["resources"]["first_ratings"] == 1
    assert (
        "rating=FIRST_RATING" in rule
        and "FIRST_RATING = layout.ladder_first_rating_path"
        in (REPO / "workflow/rules/common.smk").read_text()
    )


def test_the_live_line_shows_a_first_rating_until_the_full_one_is_written(tmp_path):
    root = str(tmp_path)
    write_rating(root, 3, 700.0, 60.0, bracket=["uct:512", "gnugo:1+r20"])
    write_rating(root, 6, 900.0, 250.0, first=True)
    state = progress.RunProgress(root, 9, 0.0)
    state.see_evaluations(progress.eval_file_times(root))
    assert state.strength == ["Elo 900 [650, 1150], above uct:64 (gen 6, first rating)",
                              "Elo 900 [650, 1150] (gen 6, first rating)"]  # fmt: skip
    write_rating(root, 6, 950.0, 90.0, bracket=["uct:1024", "gnugo:1+r20"])
    state.see_evaluations(progress.eval_file_times(root))
    assert state.strength[0] == "Elo 950 [860, 1040], between uct:1024 and gnugo:1+r20 (gen 6)"


def test_status_leads_with_the_fixed_scale_and_labels_the_opponents_rungs(make_config, tmp_path):
    cfg = make_config(
        root=str(tmp_path), generations=6, evaluate={"every": 3, "opponents": ["previous", "gnugo:1"]}
    )
    write_rating(cfg.root, 3, 700.0, 60.0, bracket=["uct:256", "uct:1024"])
    write_rating(cfg.root, 6, 900.0, 250.0, first=True)
    rows = status.collect(cfg)
    assert rows[3].ladder == (700.0, 60.0) and not rows[3].ladder_first
    assert rows[6].ladder == (900.0, 250.0) and rows[6].ladder_first
    table = status.format_table(cfg, rows).splitlines()
    head = table[1].split()
    assert head[5:7] == ["elo", "(fixed)"] and "elo" not in head[7:]  # no run-relative column
    assert "vs gnugo:1 (1555)" in table[1]  # GNU Go 1's Elo on the 5x5 ladder
    assert "700 +-60" in table[5] and "uct:256 - uct:1024" in table[5]
    assert "900 +-250~" in table[8]


def test_the_run_summary_shows_the_fixed_scale_first(make_config, tmp_path):
    cfg = make_config(
        root=str(tmp_path), generations=6, evaluate={"every": 3, "opponents": ["previous", "gnugo:1"]}
    )
    write_rating(cfg.root, 3, 700.0, 60.0, bracket=["uct:256", "uct:1024"])
    write_rating(cfg.root, 6, 1160.0, 97.0, bracket=["uct:1024", "gnugo:1"])
    Path(layout.ratings_path(cfg.root)).parent.mkdir(parents=True, exist_ok=True)
    Path(layout.ratings_path(cfg.root)).write_text(json.dumps({"anchor": "gen0000", "players": []}))
    lines: list[str] = []
    runner.print_results(cfg, echo=lines.append)
    text = "\n".join(lines)
    assert "strength on the fixed Elo ladder (5x5 table, gnugo:10 = 1800" in text
    assert "     6   1160     [1063, 1257]     10  between uct:1024 and gnugo:1" in text
    assert "GNU Go 1: 1555 on the table; generation 6: 1160 [1063, 1257]" in text
    assert "run-relative Bradley-Terry fit, anchor gen0000 = 0" in text
    assert "ratings (Elo, anchor" not in text
    assert text.index("strength on the fixed Elo ladder") < text.index("elo (fixed)")  # then the status table
    assert fixed_scale.format_summary({}, None, 7) == (
        "strength on the fixed Elo ladder: no ladder for 7x7 (config/ladder/7x7.json)"
    )


def test_a_rating_without_a_start_begins_at_the_tables_middle_rung(tmp_path):
    """No `--start-elo`/`--start-from` (a first rating, the last generation's full one): the first batch is
    against the table's middle rung, not its bottom one, so 16 games can reach a strong model's level."""
    from minigo_core.rating import calibration, ladder_walk

    table = calibration.read_ladder_at(5, None)
    middle = table.rungs[len(table.rungs) // 2]
    assert ladder_walk.middle_elo(table) == middle.elo > table.rungs[0].elo
    out = tmp_path / "rating.json"
    args = ["rate", "uct:16", "--board-size", "5", "--max-games", "4", "--seed", "3", "--out", str(out)]
    assert ladder_cli([*args, "--min-games-per-rung", "4", "--batch", "4"]) == 0
    result = json.loads(out.read_text())
    assert list(result["rungs"]) == [middle.player] and result["start_elo"] == middle.elo
    assert ladder_cli([*args, "--start-elo", str(table.rungs[0].elo)]) == 0  # a given start is kept
    result = json.loads(out.read_text())
    assert list(result["rungs"]) == [table.rungs[0].player] and result["start_elo"] == table.rungs[0].elo
