"""The adaptive calibration (`minigo ladder calibrate --target-ci`): its variance model, its choice of pairs,
the rungs it adds, and a real run on cheap 5x5 rungs."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from minigo_core.base.elo import NATS_PER_ELO, Z95
from minigo_core.cli import main
from minigo_core.rating import adaptive_calibration as adaptive
from minigo_core.rating import calibration as cal
from minigo_core.rating.ladder import calibrate_fit, load_ladder

RUNGS = ("random", "uct:2", "uct:8", "uct:32", "gnugo:10")
DESIGN = cal.CalibrationDesign(9, 7.5, RUNGS, 20, cal.DEFAULT_SEED)
TRUE = {"random": 0.0, "uct:2": 200.0, "uct:8": 400.0, "uct:32": 600.0, "gnugo:10": 800.0}


def synthetic(counts: dict[tuple[str, str], int], seed: int = 0) -> list[tuple[str, str, float]]:
    rng = np.random.default_rng(seed)
    games = []
    for (a, b), n in counts.items():
        p = 1.0 / (1.0 + 10 ** (-(TRUE[a] - TRUE[b]) / 400))
        games += [(a, b, float(rng.random() < p)) for _ in range(n)]
    return games


def test_half_widths_are_the_fits_intervals():
    counts = {("random", "uct:2"): 200, ("uct:2", "uct:8"): 100, ("uct:8", "uct:32"): 60,
              ("uct:32", "gnugo:10"): 40, ("uct:2", "uct:32"): 30}  # fmt: skip
    rungs = calibrate_fit(synthetic(counts), anchor="gnugo:10", anchor_elo=1800.0)
    elos = {r.player: r.elo for r in rungs}
    widths = adaptive.half_widths(RUNGS, elos, counts, "gnugo:10")
    for r in rungs:
        if r.player != "gnugo:10":
            assert widths[r.player] == pytest.approx((r.ci95_anchor[1] - r.ci95_anchor[0]) / 2, rel=1e-6)


def test_held_information_gives_the_fits_own_intervals():
    counts = {("random", "uct:2"): 200, ("uct:2", "uct:8"): 100, ("uct:8", "uct:32"): 60,
              ("uct:32", "gnugo:10"): 40, ("uct:2", "uct:32"): 30}  # fmt: skip
    rungs = calibrate_fit(synthetic(counts), anchor="gnugo:10", anchor_elo=1800.0)
    elos = {r.player: r.elo for r in rungs}
    own = adaptive.held_information(RUNGS, elos, counts, 1.0)
    for r in rungs:
        if r.player != "gnugo:10":
            half = Z95 / np.sqrt(own[r.player]) / NATS_PER_ELO
            assert half == pytest.approx((r.ci95[1] - r.ci95[0]) / 2, rel=1e-6)
            # a rung's own games place it more tightly than the chain down from the anchor
            assert (r.ci95[1] - r.ci95[0]) <= (r.ci95_anchor[1] - r.ci95_anchor[0]) + 1e-9


def test_held_intervals_choose_the_rung_with_the_fewest_games():
    counts = {("random", "uct:2"): 400, ("uct:2", "uct:8"): 400, ("uct:8", "uct:32"): 400,
              ("uct:32", "gnugo:10"): 400, ("random", "uct:8"): 5}  # fmt: skip
    elos = {k: v + 1000 for k, v in TRUE.items()}
    costs = dict.fromkeys(counts, 0.01)
    # held fixed, the end rungs (one neighbour each) are the widest, and the anchor needs nothing: the pair
    # that narrows most is one of random's
    chosen = adaptive.best_pairs(
        DESIGN, elos, counts, costs, "gnugo:10", adaptive.AdaptiveSettings(25, 20), 1
    )
    assert chosen and "random" in chosen[0]
    # nothing to gain once every rung is within the target
    assert (
        adaptive.best_pairs(DESIGN, elos, counts, costs, "gnugo:10", adaptive.AdaptiveSettings(200, 20), 3)
        == []
    )


def test_the_chosen_pair_narrows_the_widest_rung_cheaply():
    counts = {("random", "uct:2"): 400, ("uct:2", "uct:8"): 400, ("uct:8", "uct:32"): 400,
              ("uct:32", "gnugo:10"): 20}  # fmt: skip
    elos = {k: v + 1000 for k, v in TRUE.items()}
    costs = dict.fromkeys(counts, 0.01)
    # every rung hangs on the one thin link to the anchor: that is the pair to play
    aim = adaptive.AdaptiveSettings(50, 20)
    chosen = adaptive.best_pairs(DESIGN, elos, counts, costs, "gnugo:10", aim, 1, anchor_relative=True)
    assert chosen == [("uct:32", "gnugo:10")]
    # unless its games cost so much more that the links below buy more per CPU-second
    costs[("uct:32", "gnugo:10")] = 1e6
    chosen = adaptive.best_pairs(DESIGN, elos, counts, costs, "gnugo:10", aim, 3, anchor_relative=True)
    assert ("uct:32", "gnugo:10") not in chosen


def test_pairs_far_apart_are_never_chosen():
    elos = {"random": 0.0, "uct:2": 100.0, "uct:8": 1500.0, "uct:32": 1600.0, "gnugo:10": 1700.0}
    counts = {("random", "uct:2"): 10, ("uct:2", "uct:8"): 10, ("uct:8", "uct:32"): 10,
              ("uct:32", "gnugo:10"): 10}  # fmt: skip
    chosen = adaptive.best_pairs(DESIGN, elos, counts, {}, "gnugo:10", adaptive.AdaptiveSettings(50, 20), 10)
    assert chosen and all(abs(elos[b] - elos[a]) <= adaptive.MAX_PAIR_GAP for a, b in chosen)


def test_a_rung_is_added_only_where_the_gap_is_wide_beyond_doubt():
    rungs = ("uct:8", "uct:128", "gnugo:10")
    elos = {"uct:8": 1000.0, "uct:128": 1400.0, "gnugo:10": 1600.0}
    few = {("uct:8", "uct:128"): 10, ("uct:128", "gnugo:10"): 200}
    many = {("uct:8", "uct:128"): 400, ("uct:128", "gnugo:10"): 200}
    assert adaptive.split_wide_gaps(rungs, elos, few, "gnugo:10") == rungs
    assert adaptive.split_wide_gaps(rungs, elos, many, "gnugo:10") == (
        "uct:8",
        "uct:32",
        "uct:128",
        "gnugo:10",
    )
    # never between a uct rung and GNU Go
    elos = {"uct:8": 1000.0, "uct:128": 1100.0, "gnugo:10": 1600.0}
    assert adaptive.split_wide_gaps(rungs, elos, many, "gnugo:10") == rungs


def test_round_games_gives_cheap_pairs_more_games():
    assert adaptive.round_games(10.0, 20) == 20
    assert adaptive.round_games(0.1, 20, 60.0) == 600
    assert adaptive.round_games(1e-9, 20) == adaptive.MAX_ROUND_GAMES


def test_adaptive_calibration_reaches_its_target_on_cheap_rungs(tmp_path, capsys):
    argv = ["ladder", "calibrate", "--board-size", "5", "--rungs", "random,uct:2,uct:8", "--anchor", "uct:8",
            "--anchor-elo", "1000", "--target-ci", "250", "--round-cpu-seconds", "0.2",
            "--out-dir", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "+-250 reached" in out
    ladder = load_ladder(tmp_path / "5x5.json")
    assert [r.player for r in ladder.rungs] == ["random", "uct:2", "uct:8"]
    assert all((r.ci95[1] - r.ci95[0]) / 2 <= 250 for r in ladder.rungs)
    assert ladder.provenance["design"] == "adaptive" and ladder.provenance["target_ci"] == 250
    # resumable: the same command again plays nothing more
    pair = tmp_path / "5x5" / "random_vs_uct-2.json"
    before = len(json.loads(pair.read_text())["games"])
    assert main(argv) == 0
    assert len(json.loads(pair.read_text())["games"]) == before
    assert "0 new game(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [(["--target-ci", "0"], "must be > 0"), (["--target-ci", "50", "--fit-only"], "without --fit-only")],
)
def test_adaptive_options_are_checked(tmp_path, extra, message, capsys):
    assert main(["ladder", "calibrate", "--board-size", "5", "--out-dir", str(tmp_path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_play_pair_plays_up_to_its_target(tmp_path):
    design = dataclasses.replace(cal.default_design(5), rungs=("random", "uct:2"), ladder_dir=str(tmp_path))
    assert cal.play_pair(design, "random", "uct:2", target=3) == 3
    assert cal.play_pair(design, "random", "uct:2", target=5) == 2
    assert len(cal.read_pair(design.pair_file("random", "uct:2"))["games"]) == 5


def test_two_mixtures_of_one_base_and_gnugo_mixtures_against_gnugo_are_never_paired_nor_fitted(tmp_path):
    assert cal.mixture_base("gnugo:1+r10") == "gnugo:1" and cal.mixture_base("uct:64") is None
    assert not cal.comparable("gnugo:1+r10", "gnugo:1+r5")
    # GNU Go does not punish its own mixtures' random moves as searching players do: no such pair either
    assert not cal.comparable("gnugo:1+r10", "gnugo:1") and not cal.comparable("gnugo:10", "gnugo:1+r3")
    assert not cal.comparable("gnugo:4+r10", "gnugo:1+r5")
    assert cal.comparable("gnugo:1+r10", "uct:1+r50") and cal.comparable("uct:1+r50", "uct:1")
    assert cal.comparable("uct:8192", "gnugo:1+r3") and cal.comparable("uct:8", "uct:16")
    assert cal.comparable("gnugo:1", "gnugo:10") and cal.comparable("uct:8192", "gnugo:1")
    rungs = ("uct:2048", "gnugo:1+r20", "gnugo:1+r10", "gnugo:1+r5", "gnugo:1", "gnugo:10")
    design = cal.CalibrationDesign(9, 7.5, rungs, 10, 1, reach=2, ladder_dir=str(tmp_path))
    pairs = design.pairs()
    assert all(cal.comparable(a, b) for a, b in pairs)
    # each mixture meets the nearest rung below it that it may play, and GNU Go 1 too: the chain stays
    # connected from the bottom rung to the anchor
    assert ("uct:2048", "gnugo:1+r20") in pairs and ("uct:2048", "gnugo:1+r10") in pairs
    assert ("uct:2048", "gnugo:1+r5") in pairs and ("uct:2048", "gnugo:1") in pairs
    assert ("gnugo:1", "gnugo:10") in pairs
    assert sorted({b for _, b in pairs}) == sorted(rungs[1:])
    assert all(cal.comparable(a, b) for a, b in adaptive.candidate_pairs(rungs))
    # stored games of such a pair stay in the folder but out of the fit
    for lower, upper, score in (("gnugo:1+r20", "gnugo:1+r10", 1.0), ("uct:2048", "gnugo:1+r20", 0.0)):
        data = cal._new_pair(design, lower, upper)
        data["games"] = [{"index": 0, "seeds": [1, 2], "black": lower, "score": score, "result": "B+1",
                          "moves": 50, "ended_by": "score", "cpu_seconds": 1.0}]  # fmt: skip
        cal._save_pair(design.pair_file(lower, upper), data)
    triples, cpu = cal.stored_games(design)
    assert triples == [("uct:2048", "gnugo:1+r20", 0.0)] and cpu == 1.0
