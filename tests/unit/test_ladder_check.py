"""`minigo ladder check`: does the table predict a new match between two of its rungs? The binomial band, the
prediction from the table, a real check on the committed 5x5 ladder, and its errors."""

from __future__ import annotations

import json
import math

import pytest

from minigo_core.base.elo import expected_score
from minigo_core.jobs.ladder import cli_main
from minigo_core.rating import ladder_check as cal
from minigo_core.rating.ladder import Ladder, LadderError, Rung, read_ladder


def _pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


@pytest.mark.parametrize(("n", "p"), [(60, 0.5), (60, 0.06), (60, 0.94), (20, 0.3), (1, 0.5), (60, 1e-9)])
def test_the_binomial_band_is_the_central_95_percent(n, p):
    lo, hi = cal.binomial_band(n, p)
    pmf = _pmf(n, p)
    assert 0 <= lo <= hi <= n
    # each tail outside the band holds at most 2.5%, and one more point would take it past
    assert sum(pmf[:lo]) <= 0.025 + 1e-12 and sum(pmf[hi + 1 :]) <= 0.025 + 1e-12
    assert sum(pmf[: lo + 1]) > 0.025 or lo == n
    assert sum(pmf[hi:]) > 0.025 or hi == 0
    assert cal.binomial_band(60, 0.5) == (22, 38)  # P(X <= 21) = 1.3%, P(X <= 22) = 2.6%


def test_the_prediction_follows_the_table():
    rungs = [Rung("uct:8192", 1200.0, (1150.0, 1250.0), 400), Rung("gnugo:1", 1700.0, (1660.0, 1740.0), 500),
             Rung("gnugo:10", 1800.0, (1800.0, 1800.0), 300)]  # fmt: skip
    ladder = Ladder(9, "gnugo:10", 1800.0, rungs)
    out = cal.predict(ladder, "uct:8192", "gnugo:1", 60)
    p = expected_score(1200.0, 1700.0)
    assert out["expected_score"] == pytest.approx(p) and out["expected_points"] == pytest.approx(60 * p)
    assert out["elo_gap"] == -500.0 and tuple(out["band95"]) == cal.binomial_band(60, p)
    wide = out["band95_with_table_uncertainty"]
    assert wide[0] <= out["band95"][0] and wide[1] >= out["band95"][1] and wide[1] > out["band95"][1]
    with pytest.raises(LadderError, match="not a rung"):
        cal.predict(ladder, "uct:4096", "gnugo:1", 60)


def test_a_check_on_the_5x5_ladder_plays_new_games_and_keeps_them(tmp_path, capsys):
    out = tmp_path / "check.json"
    argv = ["check", "random", "uct:16", "--board-size", "5", "--seed", "2026", "--games", "20"]
    argv += ["--out-dir", str(tmp_path / "checks"), "--out", str(out)]
    assert cli_main(argv) == 0
    line = capsys.readouterr().out
    assert line.startswith("random vs uct:16: ") and "the table predicts" in line
    result = json.loads(out.read_text())
    ladder = read_ladder(5)
    p = expected_score(ladder.rung("random").elo, ladder.rung("uct:16").elo)
    assert result["games"] == 20 and result["expected_points"] == pytest.approx(20 * p)
    lo, hi = result["band95"]
    assert result["inside_band95"] == (lo <= result["points"] <= hi)
    pair = json.loads((tmp_path / "checks" / "5x5" / "random_vs_uct-16.json").read_text())
    assert pair["calibration_seed"] == 2026 and len(pair["games"]) == 20
    # resumable: a rerun plays nothing new and says the same
    assert cli_main(argv) == 0
    again = json.loads(out.read_text())
    assert again["points"] == result["points"] and again["cpu_seconds"] == result["cpu_seconds"]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["random", "uct:16", "--seed", "1"], "seed 1 is the calibration's own"),
        (["random", "uct:3", "--seed", "5"], "'uct:3' is not a rung of the 5x5 ladder"),
        (["random", "uct:0", "--seed", "5"], "uct:N with N a positive integer"),
        (["random", "uct:16", "--seed", "5", "--games", "0"], "--games must be >= 1"),
    ],
)
def test_check_errors_name_what_to_do(extra, says, tmp_path, capsys):
    argv = ["check", *extra, "--board-size", "5", "--out-dir", str(tmp_path)]
    assert cli_main(argv) == 2
    assert says in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.json"))


# ------------------------------------------------------------------------------------------ outside checks


def test_an_outside_player_rated_without_a_rung_is_checked_against_it(tmp_path, capsys):
    """uct:48 (not a rung) rated on the 5x5 table without uct:64, then 20 new games against uct:64: the
    prediction is the rating's, the bands are coherent, the games are kept and a rerun plays none."""
    ladder = read_ladder(5)
    rating_file, out = tmp_path / "rating.json", tmp_path / "check.json"
    rate = ["rate", "uct:48", "--board-size", "5", "--without", "uct:064", "--max-games", "24",
            "--min-games-per-rung", "4", "--batch", "4", "--out", str(rating_file)]  # fmt: skip
    assert cli_main(rate) == 0
    capsys.readouterr()
    rating = json.loads(rating_file.read_text())
    assert rating["without"] == ["uct:64"] and "uct:64" not in rating["rungs"]
    assert rating["table_rungs"] == [name for name in ladder.names if name != "uct:64"]

    def check_argv(opponent: str = "uct:64", seed: int = 5) -> list[str]:
        return ["check", "--board-size", "5", "--rating", str(rating_file), opponent, "--games", "20",
                "--seed", str(seed), "--out-dir", str(tmp_path / "checks"), "--out", str(out)]  # fmt: skip

    argv = check_argv()
    assert cli_main(argv) == 0
    line = capsys.readouterr().out
    assert line.startswith("uct:48 (rated Elo ") and "vs uct:64" in line and "99% band" in line
    result = json.loads(out.read_text())
    p = expected_score(rating["elo"], ladder.rung("uct:64").elo)
    assert result["kind"] == "outside" and result["player"] == "uct:48" and result["opponent"] == "uct:64"
    assert result["games"] == 20 and result["seed"] == 5 and result["rating_seed"] == rating["seed"]
    assert result["expected_score"] == pytest.approx(p) and result["expected_points"] == pytest.approx(20 * p)
    assert result["elo_gap"] == pytest.approx(rating["elo"] - ladder.rung("uct:64").elo)
    b95, b99 = result["band95"], result["band99"]
    assert b95 == list(cal.binomial_band(20, p)) and b99 == list(cal.binomial_band(20, p, coverage=0.99))
    assert b95[0] <= result["expected_points"] <= b95[1]
    assert b99[0] <= b95[0] <= b95[1] <= b99[1]
    w95, w99 = result["band95_with_uncertainty"], result["band99_with_uncertainty"]
    assert w95[0] <= b95[0] and w95[1] >= b95[1] and w99[0] <= b99[0] and w99[1] >= b99[1]
    assert w95[1] - w95[0] > b95[1] - b95[0]  # the rating's interval (+-100 or more) widens it
    points = result["points"]
    assert 0 <= points <= 20
    assert result["inside_band95"] == (b95[0] <= points <= b95[1])
    assert result["inside_band99"] == (b99[0] <= points <= b99[1])
    assert result["inside_band95_with_uncertainty"] == (w95[0] <= points <= w95[1])
    pair = json.loads((tmp_path / "checks" / "5x5" / "outside" / "uct-48_vs_uct-64.json").read_text())
    assert pair["kind"] == "outside" and pair["check_seed"] == 5 and pair["spec"] == "uct:48"
    assert [g["index"] for g in pair["games"]] == list(range(20))
    assert [g["black"] for g in pair["games"][:2]] == ["uct:48", "uct:64"]  # colours alternate
    assert sum(g["score"] for g in pair["games"]) == points
    # resumable: a rerun plays nothing new and says the same
    assert cli_main(argv) == 0
    again = json.loads(out.read_text())
    assert again["points"] == points and again["cpu_seconds"] == result["cpu_seconds"]
    # refused: a rung the rating played, the rating's own seed
    assert cli_main(check_argv("uct:16")) == 2
    err = capsys.readouterr().err
    assert "the rating played uct:16" in err and "--without uct:16" in err and "uct:64" in err
    assert cli_main(check_argv(seed=rating["seed"])) == 2
    assert f"seed {rating['seed']} is the rating's own" in capsys.readouterr().err
    assert len(list((tmp_path / "checks").rglob("*.json"))) == 1


def _rating(tmp_path, **changes) -> str:
    played = {"uct:16": {"rung_elo": 453.9, "games": 10, "score": 7}}
    data = {"player": "uct:48", "spec": "uct:48", "board_size": 5, "komi": 7.5, "elo": 600.0,
            "ci95": [500.0, 700.0], "seed": 1, "rungs": played, "without": ["uct:64"]} | changes  # fmt: skip
    path = tmp_path / "rating.json"
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    return str(path)


@pytest.mark.parametrize(
    ("changes", "args", "says"),
    [
        ({}, ["uct:16"], "the rating played uct:16 (its 'rungs')"),
        ({}, ["uct:64", "--seed", "1"], "seed 1 is the rating's own"),
        ({}, ["uct:3"], "'uct:3' is not a rung of the 5x5 ladder"),
        ({}, ["uct:64", "uct:16"], "with --rating, give one opponent"),
        ({"player": "uct:64", "spec": "uct:64"}, ["uct:64"], "uct:64 is the rated player itself"),
        ({"board_size": 9}, ["uct:64"], "a 9x9 rating, not one on the 5x5 ladder"),
        ({"komi": 6.5}, ["uct:64"], "rated at komi 6.5, the 5x5 ladder is at komi 7.5"),
        ({"elo": None}, ["uct:64"], "missing or bad 'elo'"),
        ({"ci95": [650.0, 700.0]}, ["uct:64"], "does not contain elo 600"),
    ],
)
def test_outside_check_refusals_name_what_to_do(changes, args, says, tmp_path, capsys):
    rating = _rating(tmp_path, **changes)
    argv = ["check", "--board-size", "5", "--rating", rating, *args, "--out-dir", str(tmp_path / "checks")]
    if "--seed" not in args:
        argv += ["--seed", "5"]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert says in err
    assert not (tmp_path / "checks").exists()


def test_a_rating_file_that_is_not_one_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{ half")
    argv = ["check", "--board-size", "5", "--rating", str(bad), "uct:64", "--seed", "5"]
    assert cli_main(argv) == 2
    assert f"{bad}: not JSON" in capsys.readouterr().err
    assert cli_main(["check", "--board-size", "5", "--rating", str(tmp_path / "none.json"), "uct:64",
                     "--seed", "5"]) == 2  # fmt: skip
    assert "cannot read the rating" in capsys.readouterr().err
    assert cli_main(["check", "--board-size", "5", "uct:64", "--seed", "5"]) == 2  # one rung, no --rating
    assert "give two rungs" in capsys.readouterr().err
