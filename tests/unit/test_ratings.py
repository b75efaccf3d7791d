"""Ratings: the Bradley-Terry fit recovers known strengths; intervals; time to target from file timestamps."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from minigo_core.base.elo import elo_difference, expected_score, wilson_interval
from minigo_core.data import layout, storage
from minigo_core.jobs import ratings as ratings_command
from minigo_core.rating.bradley_terry import fit_bradley_terry, sorted_players
from minigo_core.report import fixed_scale, plots, run_elo


def synthetic_games(true_elo: dict[str, float], games_per_pair: int, seed: int, pairs=None):
    rng = np.random.default_rng(seed)
    names = list(true_elo)
    pairs = pairs or [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    out = []
    for a, b in pairs:
        p = expected_score(true_elo[a], true_elo[b])
        for k in range(games_per_pair):
            win = rng.random() < p
            out.append((a, b, 1.0 if win else 0.0) if k % 2 == 0 else (b, a, 0.0 if win else 1.0))
    return out


def test_fit_recovers_known_strengths():
    true = {
        "gen0000": 0.0,
        "gen0001": 120.0,
        "gen0002": 310.0,
        "gen0003": 520.0,
        "gnugo:1": 400.0,
        "random": -250.0,
    }
    games = synthetic_games(true, 300, seed=7)
    fit = fit_bradley_terry(games, prior_draws=1.0)
    assert fit.anchor == "gen0000" and fit.elo["gen0000"] == 0.0 and fit.stderr["gen0000"] == 0.0
    for name, elo in true.items():
        if name == "gen0000":
            continue
        se = fit.stderr[name]
        assert 5 < se < 40, (name, se)
        # 4 standard errors: a bound that a correct fit fails with probability ~1e-4 per player.
        assert abs(fit.elo[name] - elo) < 4 * se, (name, fit.elo[name], elo, se)
    # The ordering of every pair more than 100 Elo apart is right.
    for a in true:
        for b in true:
            if true[a] > true[b] + 100:
                assert fit.elo[a] > fit.elo[b]


def test_fit_on_a_chain_of_generations_and_gnugo():
    """Only the pairings a run plays (g vs g-1, gen0, GNU Go): everything still lands on one scale."""
    true = {f"gen{g:04d}": 90.0 * g for g in range(6)} | {"gnugo:1": 300.0}
    pairs = [(f"gen{g:04d}", f"gen{g - 1:04d}") for g in range(1, 6)]
    pairs += [(f"gen{g:04d}", "gen0000") for g in range(2, 6)]
    pairs += [(f"gen{g:04d}", "gnugo:1") for g in range(1, 6)]
    fit = fit_bradley_terry(synthetic_games(true, 200, seed=3, pairs=pairs))
    for name, elo in true.items():
        assert abs(fit.elo[name] - elo) < 4 * max(fit.stderr[name], 1e-9) + 1e-6, (name, fit.elo[name], elo)


def test_all_wins_stay_finite_and_prior_is_bounded():
    fit = fit_bradley_terry([("gen0001", "gen0000", 1.0)] * 20)
    # One virtual draw: 20.5 of 21 points -> exactly the Elo difference of that win rate.
    assert fit.elo["gen0001"] == pytest.approx(elo_difference(20.5 / 21), abs=1e-6)
    more = fit_bradley_terry([("gen0001", "gen0000", 1.0)] * 200)
    assert math.isfinite(more.elo["gen0001"]) and more.elo["gen0001"] > fit.elo["gen0001"]
    no_prior = fit_bradley_terry(
        [("gen0001", "gen0000", 1.0)] * 15 + [("gen0001", "gen0000", 0.0)] * 5, prior_draws=0.0
    )
    assert no_prior.elo["gen0001"] == pytest.approx(elo_difference(0.75), abs=1e-6)


def test_draws_count_half_and_unconnected_players_are_unrated():
    fit = fit_bradley_terry([("gen0000", "gen0001", 0.5)] * 10 + [("x", "y", 1.0)] * 3)
    assert fit.elo["gen0001"] == pytest.approx(0.0, abs=1e-9)
    assert sorted(fit.unrated) == ["x", "y"]
    with pytest.raises(ValueError, match="score must be in"):
        fit_bradley_terry([("a", "b", 2.0)])


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


# ------------------------------------------------------------------------------------- a synthetic run


@pytest.fixture()
def synthetic_run(tmp_path, write_match):
    root = str(tmp_path / "run")
    start = 1_700_000_000.0
    for g in range(5):
        path = layout.model_path(root, g)
        storage.write_bytes(path, b"not a real model: ratings only reads timestamps")
        os.utime(path, (start + 3600 * g, start + 3600 * g))
    # Win rates against gen0: 0.5 (gen1, not above), 0.4, 0.7 (gen3: the first above 50%), 0.9.
    write_match(root, 1, "gen0000", ["player"] * 5 + ["opponent"] * 5, start + 3600 * 1 + 600)
    write_match(root, 2, "gen0000", ["player"] * 4 + ["opponent"] * 6, start + 3600 * 2 + 600)
    write_match(root, 3, "gen0000", ["player"] * 7 + ["opponent"] * 3, start + 3600 * 3 + 900)
    write_match(root, 4, "gen0000", ["player"] * 9 + ["draw"] * 1, start + 3600 * 4 + 600)
    write_match(root, 4, "gnugo:1", ["player"] * 3 + ["opponent"] * 7, start + 3600 * 4 + 700)
    write_match(root, 4, "gen0003", ["player"] * 6 + ["opponent"] * 4, start + 3600 * 4 + 800)
    storage.write_text(storage.join(layout.eval_dir(root, 4), "vs_broken.json"), "{not json")
    return root, start


def test_time_to_target_from_timestamps(synthetic_run):
    root, start = synthetic_run
    fit, rows, ttt = run_elo.summarise_run(root, "gen0")
    assert ttt["reached"] and ttt["generation"] == 3
    assert ttt["seconds"] == pytest.approx(3 * 3600, abs=1)
    assert ttt["evaluated_seconds"] == pytest.approx(3 * 3600 + 900, abs=1)
    assert ttt["win_rate"] == pytest.approx(0.7)
    assert [p["generation"] for p in ttt["per_generation"]] == [1, 2, 3, 4]
    assert ttt["per_generation"][3]["win_rate"] == pytest.approx(0.95)  # a draw counts half
    assert len(ttt["skipped_files"]) == 1 and "vs_broken.json" in ttt["skipped_files"][0]
    names = [r["player"] for r in rows]
    assert names == ["gen0000", "gen0001", "gen0002", "gen0003", "gen0004", "gnugo:1"]
    elo = {r["player"]: r["elo"] for r in rows}
    assert elo["gen0000"] == 0.0 and elo["gnugo:1"] > elo["gen0004"] > elo["gen0001"]
    assert elo["gen0003"] > elo["gen0002"]
    # A target never passed.
    _, _, never = run_elo.summarise_run(root, "gnugo:1")
    assert not never["reached"] and never["seconds"] is None


def test_ratings_command_writes_table_and_plots(synthetic_run, tmp_path, capsys):
    root, _ = synthetic_run
    config = tmp_path / "config.yaml"
    config.write_text(f"root: {root}\nevaluate:\n  target: gen0\n")
    out = tmp_path / "summary"
    assert ratings_command.cli_main(["--config", str(config), "--out-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "gnugo:1" in printed and "time to target (gen0): 10800 s" in printed
    lines = (out / layout.RATINGS_CSV).read_text().splitlines()
    assert lines[0].startswith("player,kind,generation,elo") and len(lines) == 7
    assert json.loads((out / layout.TIME_TO_TARGET_FILE).read_text())["generation"] == 3
    assert json.loads((out / layout.RATINGS_FILE).read_text())["anchor"] == "gen0000"
    for png in (layout.ELO_PLOT, layout.WINRATE_PLOT, layout.LEARNING_CURVE_PLOT):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_the_learning_curve_is_the_fixed_scale_and_the_summary_leads_with_it(synthetic_run, tmp_path, capsys):
    """`learning_curve.png` is the fixed ladder's curve (the same figure as `plot_learning_curve` of the
    run's `ladder.json` files), and the printed summary puts the fixed scale first, the run-relative fit
    after it, labelled."""
    root, _ = synthetic_run
    for g, elo in ((2, 300.0), (4, 650.0)):
        path = layout.ladder_rating_path(root, g)
        rating = {"elo": elo, "ci95": [elo - 90, elo + 90], "bracket": ["uct:91", "uct:128"], "rungs": {}}
        storage.write_text(path, json.dumps(rating))
    config = tmp_path / "config.yaml"
    config.write_text(f"root: {root}\nboard_size: 9\nevaluate:\n  target: gen0\n")
    out = tmp_path / "summary"
    assert ratings_command.cli_main(["--config", str(config), "--out-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    fixed = printed.index("strength on the fixed Elo ladder (9x9 table")
    assert fixed < printed.index("run-relative Bradley-Terry fit (anchor gen0000 = 0)")
    assert "650       [560, 740]" in printed and "between uct:91 and uct:128" in printed
    points = fixed_scale.curve(root, run_elo.model_times(root))
    assert [p["elo"] for p in points] == [300.0, 650.0]
    expected = plots.plot_learning_curve(points, fixed_scale.ladder_rungs(9), 9)
    assert (out / layout.LEARNING_CURVE_PLOT).read_bytes() == expected
    assert layout.SUMMARY_FILES.count(layout.LEARNING_CURVE_PLOT) == 1
    assert not any("ladder_curve" in name for name in layout.SUMMARY_FILES)


def test_players_sort_by_kind_and_strength():
    names = ["uct:1024", "random", "gnugo:10", "gen0002", "uct:64", "gnugo:1", "gen0000", "gtp:x"]
    assert sorted_players(names) == [
        "gen0000", "gen0002", "gnugo:1", "gnugo:10", "uct:64", "uct:1024", "gtp:x", "random",
    ]  # fmt: skip
    kinds = [run_elo.player_kind(n) for n in ("gen0003", "gnugo:1", "random", "uct:64", "gtp:x")]
    assert kinds == ["generation", "gnugo", "random", "uct", "other"]
