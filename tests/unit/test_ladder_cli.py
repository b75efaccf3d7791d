"""`minigo ladder`: show the committed 5x5 ladder, calibrate (resumable, extendable), rate a player, errors.

The calibrations here are tiny (5x5, cheap rungs, a few games per pair) into tmp dirs; `rate` runs on the
committed `config/ladder/5x5.json`."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from minigo_core.jobs.ladder import cli_main
from minigo_core.rating import calibration as cal
from minigo_core.rating.ladder import load_ladder, read_ladder
from minigo_core.rating.ladder_check import outside_file

CHEAP = ("random", "uct:2", "uct:8")


def pair_games(ladder_dir) -> dict[str, list[dict]]:
    """Every pair file's games, timing left out (the rest is the same however the games were played)."""
    out = {}
    for path in sorted((ladder_dir / "5x5").glob("*.json")):
        games = json.loads(path.read_text())["games"]
        out[path.name] = [{k: v for k, v in g.items() if k != "cpu_seconds"} for g in games]
    return out


def test_show_json_is_the_committed_5x5_ladder(capsys):
    assert cli_main(["show", "--board-size", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == read_ladder(5).to_json()
    assert data["board_size"] == 5
    rungs = data["rungs"]
    assert len(rungs) >= 5 and rungs[0]["player"] == "random"
    assert all(set(r) == {"player", "elo", "ci95", "games", "ci95_anchor"} for r in rungs)
    # held fixed, a rung's interval is no wider than the one from the anchor (which adds up the chain)
    assert all(r["ci95"][1] - r["ci95"][0] <= r["ci95_anchor"][1] - r["ci95_anchor"][0] + 1e-9 for r in rungs)
    elos = [r["elo"] for r in rungs]
    assert elos == sorted(elos) and len(set(elos)) == len(elos)
    assert all(r["ci95"][0] <= r["elo"] <= r["ci95"][1] and r["games"] > 0 for r in rungs)
    assert cli_main(["show", "--board-size", "5"]) == 0
    table = capsys.readouterr().out
    assert "random" in table and "95% interval" in table


def test_show_a_board_size_without_ladder_exits_2(capsys):
    assert cli_main(["show", "--board-size", "7"]) == 2
    err = capsys.readouterr().err
    assert "no ladder for board size 7" in err and "calibrated sizes:" in err and "5" in err
    assert "minigo ladder calibrate --board-size 7" in err


def calibrate_args(out_dir, *extra: str) -> list[str]:
    return [
        "calibrate",
        "--board-size",
        "5",
        "--rungs",
        ",".join(CHEAP),
        "--games-per-pair",
        "4",
        "--anchor",
        "uct:8",
        "--anchor-elo",
        "0",
        "--out-dir",
        str(out_dir),
        *extra,
    ]


def test_interrupted_calibration_resumes_without_losing_or_replaying_games(tmp_path, capsys):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert cli_main(calibrate_args(whole)) == 0
    assert "written" in capsys.readouterr().out
    # "killed" after 1 game of each pair, then after 3: every finished game is kept, none is played again
    design = cal.CalibrationDesign(5, 7.5, CHEAP, 4, cal.DEFAULT_SEED, ladder_dir=str(parts))
    ladder, played = cal.calibrate(design, cal.FitSettings("uct:8", 0.0, ["t"]), max_new_games=1)
    assert ladder is None and played == 3
    assert [len(g) for g in pair_games(parts).values()] == [1, 1, 1]
    assert cal.play_pair(design, "random", "uct:2", max_new_games=2) == 2
    assert cli_main(calibrate_args(parts)) == 0  # the rest: 1 + 3 + 3 games
    assert "(7 new game(s))" in capsys.readouterr().out
    assert pair_games(parts) == pair_games(whole)
    assert all(len(g) == 4 for g in pair_games(parts).values())
    assert load_ladder(parts / "5x5.json").rungs == load_ladder(whole / "5x5.json").rungs
    # a rerun plays nothing; --fit-only refits the same table; the stored settings are the defaults now
    assert cli_main(["calibrate", "--board-size", "5", "--anchor", "uct:8", "--out-dir", str(parts)]) == 0
    assert "(0 new game(s))" in capsys.readouterr().out
    assert cli_main(calibrate_args(parts, "--fit-only")) == 0
    assert load_ladder(parts / "5x5.json").rungs == load_ladder(whole / "5x5.json").rungs


def test_calibration_settings_must_match_unless_extended(tmp_path, capsys):
    out = tmp_path / "lad"
    assert cli_main(calibrate_args(out)) == 0
    capsys.readouterr()
    more = [a if a != "4" else "6" for a in calibrate_args(out)]
    assert cli_main(more) == 2
    assert "--extend" in capsys.readouterr().err
    assert cli_main([*more, "--extend"]) == 0
    assert "(6 new game(s))" in capsys.readouterr().out
    assert all(len(g) == 6 for g in pair_games(out).values())
    prov = load_ladder(out / "5x5.json").provenance
    assert prov["games_per_pair"] == 6 and prov["rungs"] == list(CHEAP) and prov["games"] == 18
    assert prov["cpu"] and prov["cpu_seconds"] >= 0 and prov["command"].startswith("minigo ladder calibrate")


def test_rate_uct16_on_the_committed_ladder(tmp_path, capsys):
    out = tmp_path / "rating.json"
    args = ["rate", "uct:16", "--board-size", "5", "--target-half-width", "150", "--max-games", "80"]
    assert cli_main([*args, "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("Elo ")
    result = json.loads(out.read_text())
    assert math.isfinite(result["elo"]) and result["ci95"][0] < result["elo"] < result["ci95"][1]
    assert sum(r["games"] for r in result["rungs"].values()) == result["games"] <= 80
    assert result["player"] == "uct:16" and result["komi"] == read_ladder(5).provenance["komi"]


@pytest.mark.parametrize("spec", ["uct:0", "uct:abc", "uct:-5", "gnugo:11"])
def test_bad_specs_exit_2_naming_the_spec(spec, tmp_path, capsys):
    assert cli_main(["rate", spec, "--board-size", "5"]) == 2
    assert repr(spec) in capsys.readouterr().err
    assert (
        cli_main(["calibrate", "--board-size", "5", "--rungs", f"random,{spec}", "--out-dir", str(tmp_path)])
        == 2
    )
    assert repr(spec) in capsys.readouterr().err


def test_rate_with_no_ladder_for_the_size_exits_2(capsys):
    assert cli_main(["rate", "uct:16", "--board-size", "7"]) == 2
    assert "no ladder for board size 7" in capsys.readouterr().err


def test_pairs_in_parallel_processes_play_the_same_games(tmp_path, capsys):
    assert cli_main(calibrate_args(tmp_path / "one")) == 0
    assert cli_main(calibrate_args(tmp_path / "two", "--jobs", "2")) == 0
    assert pair_games(tmp_path / "two") == pair_games(tmp_path / "one")
    assert (
        load_ladder(tmp_path / "two" / "5x5.json").rungs == load_ladder(tmp_path / "one" / "5x5.json").rungs
    )


def test_a_damaged_pair_file_is_named(tmp_path, capsys):
    (tmp_path / "5x5").mkdir()
    (tmp_path / "5x5" / "random_vs_uct-2.json").write_text("{ half a fi")
    assert cli_main(calibrate_args(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "random_vs_uct-2.json" in err and "delete it to replay the pair" in err


def test_the_committed_9x9_ladder_meets_its_targets_and_refits_from_its_games(tmp_path, capsys):
    """The table `make run` rates with: >= 8 rungs from random to past GNU Go 10 (the top rung >= 2000, so a
    model near GNU Go 10 is bracketed from above), increasing, neighbours <= 250 apart, each rung within +-50
    (the others held fixed), GNU Go 10 = 1800 the anchor, no mixture with random moves between uct:8192 and
    the top (they misplace searching players there); and it is what one fit of its committed pair files gives
    (the games are the table's evidence)."""
    assert cli_main(["show", "--board-size", "9", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rungs = data["rungs"]
    names = [r["player"] for r in rungs]
    assert len(rungs) >= 8 and {"random", "gnugo:1", "gnugo:10"} <= set(names) and names[0] == "random"
    elos = [r["elo"] for r in rungs]
    assert all(b - a > 0 for a, b in zip(elos, elos[1:], strict=False))
    assert max(b - a for a, b in zip(elos, elos[1:], strict=False)) <= 250.0
    assert all((r["ci95"][1] - r["ci95"][0]) / 2 <= 50.0 for r in rungs)
    assert data["anchor"] == "gnugo:10" and {r["player"]: r["elo"] for r in rungs}["gnugo:10"] == 1800.0
    assert rungs[-1]["elo"] >= 2000.0
    assert not [n for n in names[names.index("uct:8192") :] if "+r" in n]
    prov = data["provenance"]
    assert sorted(prov["rungs"]) == sorted(names) and prov["games"] == sum(r["games"] for r in rungs) // 2
    # refit from the committed games into a copy: the same ratings and intervals
    copy = tmp_path / "ladder"
    (copy / "9x9").mkdir(parents=True)
    for path in (cal.REPO / cal.LADDER_DIR / "9x9").glob("*.json"):
        (copy / "9x9" / path.name).write_text(path.read_text())
    argv = [
        "calibrate",
        "--board-size",
        "9",
        "--fit-only",
        "--out-dir",
        str(copy),
        "--rungs",
        ",".join(prov["rungs"]),
    ]
    assert cli_main(argv) == 0
    refit = load_ladder(copy / "9x9.json")
    assert [r.player for r in refit.rungs] == names
    for mine, theirs in zip(refit.rungs, rungs, strict=True):
        assert mine.elo == pytest.approx(theirs["elo"], abs=1e-6)
        assert list(mine.ci95) == pytest.approx(theirs["ci95"], abs=1e-6)
        assert list(mine.ci95_anchor) == pytest.approx(theirs["ci95_anchor"], abs=1e-6)


def test_committed_pair_files_are_named_by_their_players_slugs():
    """Each committed pair file sits where `CalibrationDesign.pair_file` looks for it (`PlayerSpec.slug` of
    its two players): a changed slug would orphan the games and replay them. A `gtp:` rung's slug is a file
    name too."""
    files = sorted((cal.REPO / cal.LADDER_DIR).rglob("*_vs_*.json"))
    pairs = [(p, json.loads(p.read_text())) for p in files]
    pairs = [(p, d) for p, d in pairs if isinstance(d, dict) and d.get("format") == cal.PAIR_FORMAT]
    assert len(pairs) >= 20
    for path, data in pairs:
        if path.parent.name == "outside":  # an outside player's check (`ladder check --rating`)
            out_dir, size = str(path.parents[2]), data["board_size"]
            assert outside_file(out_dir, size, data["spec"], data["opponent"]) == str(path)
            continue
        where = dataclasses.replace(cal.default_design(data["board_size"]), ladder_dir=str(path.parents[1]))
        assert where.pair_file(data["player"], data["opponent"]) == str(path)
    gtp = "gtp:/usr/games/gnugo --mode gtp --level 3"
    name = cal.CalibrationDesign(9, 7.5, ("random", gtp), 1, 1).pair_file("random", gtp)
    assert name.endswith("/9x9/random_vs_gtp-_usr_games_gnugo_--mode_gtp_--level_3.json")


def test_rate_without_rungs_leaves_them_off_the_table(tmp_path, capsys):
    from minigo_core.rating.ladder import LadderError
    from minigo_core.rating.ladder_rate import without_rungs

    ladder = read_ladder(5)
    table, dropped = without_rungs(ladder, ["uct:064", "gnugo:10", "uct:64"])
    assert dropped == ["uct:64", "gnugo:10"]
    assert table.names == [n for n in ladder.names if n not in dropped]
    assert table.rung("uct:16") == ladder.rung("uct:16") and table.anchor_elo == ladder.anchor_elo
    with pytest.raises(LadderError, match="leaves no rung"):
        without_rungs(ladder, ladder.names)
    # the command line: a name that is not a rung, a bad spec
    for without, says in (("uct:3", "'uct:3' is not a rung of the 5x5 ladder; rungs: random"),
                          ("uct:16,uct:0", "uct:N with N a positive integer")):  # fmt: skip
        assert cli_main(["rate", "uct:16", "--board-size", "5", "--without", without]) == 2
        assert says in capsys.readouterr().err
    # a rating without its nearest rungs plays only the others and says so
    out = tmp_path / "rating.json"
    argv = ["rate", "uct:16", "--board-size", "5", "--without", "uct:16,uct:4", "--max-games", "12",
            "--min-games-per-rung", "4", "--batch", "4", "--out", str(out)]  # fmt: skip
    assert cli_main(argv) == 0
    result = json.loads(out.read_text())
    assert result["without"] == ["uct:16", "uct:4"] and not {"uct:16", "uct:4"} & set(result["rungs"])
    assert set(result["rungs"]) <= set(result["table_rungs"]) and "uct:16" not in result["table_rungs"]
    assert result["games"] <= 12 and isinstance(result["bracketed"], bool)
