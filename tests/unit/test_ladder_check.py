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
