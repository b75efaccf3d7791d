"""The ladder's table (JSON, validation), calibration fit, fixed-rung ratings and adaptive opponent choice
(`ladder_walk`: the bracket at 50%, the walk, why it stops), on synthetic games (seeded numpy)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from minigo_core.base.elo import expected_score
from minigo_core.rating.ladder import (
    Ladder,
    LadderError,
    Rating,
    Rung,
    calibrate_fit,
    calibrated_sizes,
    ladder_path,
    load_ladder,
    rate_many,
    rate_with_fixed_rungs,
    read_ladder,
    write_ladder,
)
from minigo_core.rating.ladder_walk import bracket, next_rung, off_the_end


def synthetic_ladder(elos=None, board_size: int = 9) -> Ladder:
    elos = (
        elos
        if elos is not None
        else [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0]
    )
    names = [f"r{i}" for i in range(len(elos) - 1)] + ["gnugo:10"]
    rungs = [
        Rung(n, e, (e - 20.0, e + 20.0) if n != "gnugo:10" else (e, e), 100)
        for n, e in zip(names, elos, strict=True)
    ]
    return Ladder(board_size, "gnugo:10", elos[-1], rungs, {"command": "synthetic", "seeds": [1]})


def games_against(
    rng, true_elo: float, opponent: str, opponent_elo: float, n: int
) -> list[tuple[str, float]]:
    p = expected_score(true_elo, opponent_elo)
    return [(opponent, float(x)) for x in rng.random(n) < p]


# ----------------------------------------------------------------------------------------------- the table


def test_ladder_path_and_json_round_trip(tmp_path):
    assert ladder_path(9).parts[-3:] == ("config", "ladder", "9x9.json")
    ladder = synthetic_ladder()
    written = write_ladder(ladder, ladder_path(9, tmp_path))
    assert written == tmp_path / "config" / "ladder" / "9x9.json"
    back = read_ladder(9, tmp_path)
    assert back == ladder
    data = json.loads(written.read_text())
    assert data["board_size"] == 9 and data["anchor"] == "gnugo:10" and data["anchor_elo"] == 1800.0
    assert list(data["rungs"][0]) == ["player", "elo", "ci95", "games"]
    assert [r["elo"] for r in data["rungs"]] == sorted(r["elo"] for r in data["rungs"])
    assert data["rungs"][-1] == {"player": "gnugo:10", "elo": 1800.0, "ci95": [1800.0, 1800.0], "games": 100}
    assert data["provenance"] == {"command": "synthetic", "seeds": [1]}
    write_ladder(synthetic_ladder([0.0, 1800.0], board_size=5), ladder_path(5, tmp_path))
    assert calibrated_sizes(tmp_path) == [5, 9]


def test_unknown_board_size_names_the_calibrated_ones(tmp_path):
    for size in (5, 9):
        write_ladder(synthetic_ladder(board_size=size), ladder_path(size, tmp_path))
    with pytest.raises(LadderError) as err:
        read_ladder(13, tmp_path)
    message = str(err.value)
    assert "no ladder for board size 13" in message and "calibrated sizes: 5, 9" in message
    assert "make one with `minigo ladder calibrate --board-size 13`" in message
    with pytest.raises(LadderError, match="calibrated sizes: none"):
        read_ladder(13, tmp_path / "empty")


def _good() -> dict:
    return synthetic_ladder().to_json()


def _edit(fn):
    data = _good()
    fn(data)
    return data


@pytest.mark.parametrize(
    "data, expected",
    [
        ("{not json", "not JSON"),
        ([1, 2], "a ladder is a JSON object"),
        (_edit(lambda d: d.pop("rungs")), "missing key.*rungs"),
        (_edit(lambda d: (d.pop("anchor"), d.pop("anchor_elo"))), "missing key.*anchor, anchor_elo"),
        (_edit(lambda d: d.update(rungs={})), "'rungs' must be a list"),
        (_edit(lambda d: d.update(rungs=[])), "no rungs"),
        (_edit(lambda d: d["rungs"][3].pop("elo")), r"rungs\[3\]: missing key.*elo"),
        (_edit(lambda d: d["rungs"][2].update(elo="high")), r"rungs\[2\] \(r2\): 'elo' must be"),
        (_edit(lambda d: d["rungs"][2].update(ci95=[1.0])), "'ci95' must be"),
        (_edit(lambda d: d["rungs"][2].update(ci95=[500.0, 600.0])), "does not contain its elo"),
        (_edit(lambda d: d["rungs"][2].update(games=-1)), "'games' must be a count"),
        (_edit(lambda d: d["rungs"][2].update(player="")), "'player' must be a player spec"),
        (_edit(lambda d: d["rungs"].reverse()), "not in increasing order"),
        (
            _edit(lambda d: d["rungs"][4].update(elo=d["rungs"][3]["elo"], ci95=d["rungs"][3]["ci95"])),
            "not in increasing order",
        ),
        (_edit(lambda d: d["rungs"][4].update(player="r3")), "listed twice: r3"),
        (_edit(lambda d: d.update(anchor="gnugo:9")), "anchor 'gnugo:9' is not a rung"),
        (_edit(lambda d: d.update(anchor_elo=1700.0)), "not anchor_elo 1700"),
        (_edit(lambda d: d.update(board_size="9")), "'board_size' must be an integer"),
        (_edit(lambda d: d.update(provenance=[])), "'provenance' must be an object"),
    ],
)
def test_every_read_error_names_the_file_and_the_problem(tmp_path, data, expected):
    path = ladder_path(9, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(LadderError, match=expected) as err:
        read_ladder(9, tmp_path)
    assert str(path) in str(err.value)
    assert "minigo ladder calibrate" in str(err.value)


def test_a_file_of_another_board_size_is_an_error(tmp_path):
    path = ladder_path(9, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(synthetic_ladder(board_size=5).to_json()))
    assert load_ladder(path).board_size == 5
    with pytest.raises(LadderError, match="holds board size 5, not 9"):
        read_ladder(9, tmp_path)


def test_an_invalid_ladder_is_not_written(tmp_path):
    ladder = synthetic_ladder()
    ladder.rungs.reverse()
    with pytest.raises(LadderError, match="not in increasing order"):
        write_ladder(ladder, tmp_path / "9x9.json")
    assert not (tmp_path / "9x9.json").exists()


# ----------------------------------------------------------------------------------------------- calibration


def test_calibrate_fit_recovers_the_rungs_with_the_anchor_exact():
    rng = np.random.default_rng(7)
    true = {"random": -600.0, "uct:8": -380.0, "uct:32": -150.0, "uct:128": 60.0, "uct:512": 290.0}
    true |= {"uct:2048": 500.0, "gnugo:1": 720.0, "gnugo:5": 940.0, "gnugo:10": 1150.0}
    names = list(true)
    results = []
    for k in range(len(names) - 1):
        for gap, n in ((1, 300), (2, 60)):
            if k + gap < len(names):
                a, b = names[k], names[k + gap]
                p = expected_score(true[a], true[b])
                results += [(a, b, float(x)) for x in rng.random(n) < p]
    rungs = calibrate_fit(results, anchor="gnugo:10", anchor_elo=1800.0)
    assert [r.player for r in rungs] == names  # increasing order of rating
    by_name = {r.player: r for r in rungs}
    assert by_name["gnugo:10"].elo == 1800.0 and by_name["gnugo:10"].ci95 == (1800.0, 1800.0)
    assert by_name["gnugo:10"].ci95_anchor == (1800.0, 1800.0)
    shift = 1800.0 - true["gnugo:10"]
    inside = [r.ci95_anchor[0] <= true[r.player] + shift <= r.ci95_anchor[1] for r in rungs]
    assert sum(inside) >= len(rungs) - 1
    widths = [by_name[n].ci95_anchor[1] - by_name[n].ci95_anchor[0] for n in names]
    assert widths[0] > widths[-2] > 0  # intervals from the anchor grow with the distance from it, in games
    # held fixed, a rung's interval comes from its own games: each rung with its neighbours held at their
    # fitted ratings lands within it, and it is no wider than the chain's
    for r in rungs[:-1]:
        assert 0 < r.ci95[1] - r.ci95[0] <= r.ci95_anchor[1] - r.ci95_anchor[0] + 1e-9
    held = [by_name[n].ci95[1] - by_name[n].ci95[0] for n in names[:-1]]
    assert max(held) < widths[0] / 2  # the bottom rung: its own 360 games, not the chain's 8 links
    # the held interval covers the truth relative to the neighbours (the gaps, which is what rates a player)
    pairs = zip(names, names[1:], strict=False)
    gaps = [(by_name[b].elo - by_name[a].elo) - (true[b] - true[a]) for a, b in pairs]
    assert sum(abs(g) <= 2 * max(held) for g in gaps) >= len(gaps) - 1
    assert by_name["uct:128"].games == 300 * 2 + 60 * 2
    ladder = Ladder(9, "gnugo:10", 1800.0, rungs, {"command": "test"})
    ladder.validate()


def test_calibrate_fit_errors():
    with pytest.raises(LadderError, match="no calibration games"):
        calibrate_fit([], anchor="gnugo:10")
    with pytest.raises(LadderError, match="anchor gnugo:10 played no calibration game"):
        calibrate_fit([("a", "b", 1.0)], anchor="gnugo:10")
    with pytest.raises(LadderError, match="links c, d to the anchor"):
        calibrate_fit([("a", "gnugo:10", 1.0), ("c", "d", 0.0)], anchor="gnugo:10")


# ----------------------------------------------------------------------------------------- fixed-rung ratings

RUNGS = {"r0": 0.0, "r1": 200.0, "r2": 400.0, "r3": 600.0, "r4": 800.0, "r5": 1000.0}


def test_rate_with_fixed_rungs_recovers_a_known_rating():
    rng = np.random.default_rng(3)
    games = [g for name in ("r2", "r3", "r4") for g in games_against(rng, 550.0, name, RUNGS[name], 60)]
    rating = rate_with_fixed_rungs(games, RUNGS)
    assert rating.ci95[0] < 550.0 < rating.ci95[1]
    assert rating.games == 180 and rating.score == sum(s for _, s in games)
    assert 40.0 < rating.half_width < 100.0
    wald = rate_with_fixed_rungs(games, RUNGS, interval="wald")
    assert wald.elo == pytest.approx(rating.elo)
    assert wald.ci95 == pytest.approx(rating.ci95, abs=5.0)  # balanced games: profile ~ Wald
    assert (
        rate_with_fixed_rungs(games, synthetic_ladder([0.0, 200.0, 400.0, 600.0, 800.0, 1000.0])) is not None
    )


def test_the_profile_interval_covers_about_95_percent():
    rng = np.random.default_rng(11)
    hits, repeats = 0, 200
    for _ in range(repeats):
        true = rng.uniform(150.0, 850.0)
        games = [g for name in ("r1", "r3", "r4") for g in games_against(rng, true, name, RUNGS[name], 16)]
        lo, hi = rate_with_fixed_rungs(games, RUNGS).ci95
        hits += lo <= true <= hi
    coverage = hits / repeats
    print(f"coverage of the 95% profile interval over {repeats} repeats: {coverage:.3f}")
    assert 0.88 <= coverage <= 0.99


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_all_losses_and_all_wins_give_finite_ratings(score):
    rating = rate_with_fixed_rungs([("r3", score)] * 20, RUNGS)
    lo, hi = rating.ci95
    assert all(math.isfinite(x) for x in (rating.elo, lo, hi))
    if score == 0.0:
        assert rating.elo < 600.0 - 400.0 and hi < 600.0
        assert rating.elo - lo > 2.0 * (hi - rating.elo)  # open-ended towards -inf, but finite
    else:
        assert rating.elo > 600.0 + 400.0 and lo > 600.0
        assert hi - rating.elo > 2.0 * (rating.elo - lo)


def test_rate_with_fixed_rungs_errors():
    with pytest.raises(LadderError, match="'gnugo:3' is not a ladder rung; rungs: r0, r1"):
        rate_with_fixed_rungs([("gnugo:3", 1.0)], RUNGS)
    with pytest.raises(LadderError, match="no games to rate"):
        rate_with_fixed_rungs([], RUNGS)
    with pytest.raises(LadderError, match=r"score must be in \[0, 1\]"):
        rate_with_fixed_rungs([("r1", 2.0)], RUNGS)
    with pytest.raises(LadderError, match="interval must be"):
        rate_with_fixed_rungs([("r1", 1.0)], RUNGS, interval="bootstrap")


def test_rate_many_with_chained_model_against_model_games():
    rng = np.random.default_rng(5)
    true = {f"gen{g:04d}": 100.0 + 110.0 * g for g in range(1, 8)}
    games = []
    for g, (name, elo) in enumerate(true.items(), start=1):
        if g > 1:  # the previous model, 40 games
            prev = f"gen{g - 1:04d}"
            p = expected_score(elo, true[prev])
            games += [(name, prev, float(x)) for x in rng.random(40) < p]
        if g % 2 == 1:  # every other generation also meets the two rungs nearest it
            for rung in sorted(RUNGS, key=lambda r: abs(RUNGS[r] - elo))[:2]:
                games += [(name, rung, s) for _, s in games_against(rng, elo, rung, RUNGS[rung], 30)]
    games += [("r0", "r5", 0.0)] * 5  # rung against rung: ignored
    ratings = rate_many(games, RUNGS, players=true)
    assert set(ratings) == set(true)
    inside = sum(r.ci95[0] <= true[name] <= r.ci95[1] for name, r in ratings.items())
    assert inside >= len(true) - 1
    elos = [ratings[name].elo for name in true]
    assert elos == sorted(elos)
    assert ratings["gen0002"].games == 80  # gen0001 and gen0003, no rung
    single = [(n, o, s) for n, o, s in games if n == "gen0001" and o in RUNGS]
    alone = rate_many(single, RUNGS)["gen0001"]
    same = rate_with_fixed_rungs([(o, s) for _, o, s in single], RUNGS)
    assert alone.elo == pytest.approx(same.elo) and alone.ci95 == pytest.approx(same.ci95)


def test_rate_many_errors():
    with pytest.raises(LadderError, match="no games link gen0008, gen0009 to a ladder rung"):
        rate_many([("gen0001", "r1", 1.0), ("gen0009", "gen0008", 1.0)], RUNGS)
    with pytest.raises(LadderError, match="'r9' is neither a rung nor a player being rated"):
        rate_many([("gen0001", "r9", 1.0)], RUNGS, players=["gen0001"])
    assert rate_many([("r1", "r2", 1.0)], RUNGS) == {}


# ---------------------------------------------------------------------------------------- opponent choice


def climb(ladder: Ladder, true_elo: float, estimate: Rating | None, seed: int, batch: int = 10):
    """Play `batch` games at a time against whatever `next_rung` says, until it says stop."""
    rng = np.random.default_rng(seed)
    played: dict[str, tuple[float, int]] = {}
    visits = []
    while (rung := next_rung(ladder, estimate, played, min_games_per_rung=batch)) is not None:
        visits.append(rung)
        wins = float((rng.random(batch) < expected_score(true_elo, ladder.rung(rung).elo)).sum())
        s, n = played.get(rung, (0.0, 0))
        played[rung] = (s + wins, n + batch)
        assert len(visits) < 100
    return played, visits


@pytest.mark.parametrize(
    "true_elo, estimate, seed",
    [
        (1250.0, None, 1),  # from the bottom of the ladder
        (500.0, 1700.0, 2),  # from above (a far estimate)
        (1700.0, 100.0, 3),  # from far below
        (900.0, 880.0, 4),  # from a good estimate
    ],
)
def test_next_rung_brackets_a_player_within_a_bounded_number_of_games(true_elo, estimate, seed):
    ladder = synthetic_ladder()
    start = None if estimate is None else Rating(estimate, (estimate - 50.0, estimate + 50.0), 40)
    assert next_rung(ladder, start, {}) == (
        "r0" if estimate is None else ladder.rungs[round(estimate / 200)].player
    )
    played, visits = climb(ladder, true_elo, start, seed)
    games = sum(n for _, n in played.values())
    pair = bracket(ladder, played)
    assert pair is not None
    lower, upper = (ladder.rung(name).elo for name in pair)
    assert lower - 400.0 < true_elo < upper + 400.0
    rating = rate_with_fixed_rungs(
        [(name, s / n) for name, (s, n) in played.items() for _ in range(n)], ladder
    )
    assert rating.half_width <= 100.0
    assert abs(rating.elo - true_elo) < 150.0
    assert games <= 200, visits


def test_next_rung_stops_off_the_ends_and_at_the_budget():
    ladder = synthetic_ladder()
    played, visits = climb(ladder, 3500.0, None, seed=5)
    assert visits[-1] == "gnugo:10" and played["gnugo:10"][0] == played["gnugo:10"][1]
    played, visits = climb(ladder, -1500.0, Rating(900.0, (800.0, 1000.0), 40), seed=6)
    assert visits[-1] == "r0"
    assert next_rung(ladder, None, {"r4": (5.0, 10)}, max_games=10) is None
    assert next_rung(ladder, None, {"r4": (5.0, 6), "r3": (9.0, 10)}) == "r4"  # finish the short rung first
    with pytest.raises(LadderError, match="not rungs of the 9x9 ladder: gnugo:3"):
        next_rung(ladder, None, {"gnugo:3": (1.0, 2)})


def test_a_bracketed_player_plays_the_rung_that_tells_most_per_cpu_second():
    from minigo_core.rating.ladder_walk import _most_informative, side_cost

    def rung(name: str, elo: float) -> Rung:
        return Rung(name, elo, (elo - 40, elo + 40), 300)

    ladder = Ladder(9, "gnugo:10", 1800.0, [rung("random", -1600.0), rung("uct:2048", 700.0),
                    rung("gnugo:1+r10", 1150.0), rung("uct:8192", 1230.0), rung("gnugo:1", 1700.0),
                    rung("gnugo:10", 1800.0)])  # fmt: skip
    assert side_cost("uct:8192", 9) > 10 * side_cost("gnugo:1+r10", 9)
    assert side_cost("uct:64+r50", 9) == pytest.approx(side_cost("uct:64", 9) / 2)
    assert side_cost("uct:64", 19) == pytest.approx(side_cost("uct:64", 9) * (19 / 9) ** 2)
    # at 1230 the cheap mixture 80 Elo away tells more per CPU-second than uct:8192 at the same rating
    assert _most_informative(ladder, 1230.0) == "gnugo:1+r10"
    # far from every cheap rung, the nearest costly one is chosen; a rung far away never is, however cheap
    assert _most_informative(ladder, 1690.0) == "gnugo:1"
    assert _most_informative(ladder, -900.0) in ("random", "uct:2048")
    assert _most_informative(ladder, 600.0) == "uct:2048"


# ---------------------------------------------------------------------- the bracket at 50% and stop reasons


@pytest.mark.parametrize(
    "played, min_games, expected",
    [
        ({"r3": (6.0, 10), "r4": (4.0, 10)}, 10, ("r3", "r4")),  # above 50% below, under 50% above
        ({"r3": (5.0, 10), "r4": (4.0, 10)}, 10, None),  # exactly 50%: no lower bracket
        ({"r3": (6.0, 10), "r4": (5.0, 10)}, 10, None),  # exactly 50%: no upper bracket
        ({"r2": (7.0, 10), "r3": (5.0, 10), "r4": (3.0, 10)}, 10, ("r2", "r4")),  # the level rung is skipped
        ({"r3": (6.0, 9), "r4": (4.0, 10)}, 10, None),  # too few games against the lower rung
        ({"r3": (6.0, 9), "r4": (4.0, 10)}, 9, ("r3", "r4")),  # ... enough at 9 a rung
        ({"r3": (4.0, 10), "r4": (6.0, 10)}, 10, None),  # the rung scored under 50% must be the higher one
        ({"r3": (9.0, 10), "r4": (7.0, 10)}, 10, None),  # 20-80% on both (the old rule's bracket): not now
        ({"r1": (9.0, 10), "r3": (6.0, 10), "r4": (4.0, 10), "r6": (1.0, 10)}, 10, ("r3", "r4")),  # closest
    ],
)
def test_a_player_is_bracketed_by_a_rung_it_beats_below_one_it_loses_to(played, min_games, expected):
    assert bracket(synthetic_ladder(), played, min_games) == expected
    if expected is None:
        assert off_the_end(synthetic_ladder(), played, min_games) is None  # in the middle: the walk goes on


def test_bracket_levels_must_be_ordered_probabilities():
    with pytest.raises(LadderError, match="0 <= low <= high <= 1"):
        bracket(synthetic_ladder(), {}, low=0.6, high=0.4)
    with pytest.raises(LadderError, match="0 <= low <= high <= 1"):
        next_rung(synthetic_ladder(), None, {"r3": (6.0, 10)}, low=-0.1)


def test_the_walk_goes_up_past_a_rung_scored_60_percent_until_one_scored_under_50():
    ladder = synthetic_ladder()
    played = {"r3": (6.0, 10)}
    assert next_rung(ladder, None, played) == "r4"  # 60% is no upper bracket: up
    played["r4"] = (6.0, 10)
    assert next_rung(ladder, None, played) == "r5"  # beats the next one too: further up
    played["r5"] = (4.0, 10)
    assert bracket(ladder, played) == ("r4", "r5")
    assert next_rung(ladder, None, played, target_half_width=1000.0) is None  # bracketed and narrow enough
    assert next_rung(ladder, None, played, target_half_width=10.0) in ladder.names  # narrow it further
    assert off_the_end(ladder, played) is None


def test_a_player_level_with_a_rung_is_rated_between_its_neighbours():
    ladder = synthetic_ladder()
    played = {"r4": (5.0, 10)}
    assert next_rung(ladder, None, played) == "r5"  # level: up first
    played["r5"] = (3.0, 10)
    assert bracket(ladder, played) is None and next_rung(ladder, None, played) == "r3"  # then below
    played["r3"] = (7.0, 10)
    assert bracket(ladder, played) == ("r3", "r5")


@pytest.mark.parametrize(
    "played, rung, reason",
    [
        ({"gnugo:10": (10.0, 10)}, None, "above_top_rung"),
        ({"gnugo:10": (5.0, 10)}, None, "above_top_rung"),  # level with the top rung: nothing above
        ({"gnugo:10": (5.0, 9)}, "gnugo:10", None),  # not enough games there yet
        ({"r8": (9.0, 10), "gnugo:10": (6.0, 10)}, None, "above_top_rung"),
        ({"r0": (0.0, 10)}, None, "below_bottom_rung"),
        ({"r0": (5.0, 10)}, None, "below_bottom_rung"),  # level with the bottom rung: nothing below
        ({"r0": (5.0, 10), "r1": (2.0, 10)}, None, "below_bottom_rung"),
        ({"r0": (6.0, 10)}, "r1", None),  # beats the bottom rung: up, it may yet be bracketed
        ({"r0": (5.0, 10), "r1": (7.0, 10)}, "r2", None),  # beats the next one: up
        ({"gnugo:10": (4.0, 10)}, "r8", None),  # loses to the top rung: down
    ],
)
def test_the_walk_stops_off_either_end_of_the_table(played, rung, reason):
    ladder = synthetic_ladder()
    assert next_rung(ladder, None, played) == rung
    assert off_the_end(ladder, played) == reason


def test_the_budget_stops_the_walk_wherever_it_is():
    ladder = synthetic_ladder()
    assert next_rung(ladder, None, {"r4": (6.0, 10)}, max_games=10) is None
    assert off_the_end(ladder, {"r4": (6.0, 10)}) is None  # not off an end: the budget stopped it
    bracketed = {"r4": (6.0, 10), "r5": (4.0, 10)}
    assert next_rung(ladder, None, bracketed, max_games=20, target_half_width=10.0) is None


def _rating_file(ladder: Ladder, played: dict[str, list[float]], max_games: int, target: float) -> dict:
    from minigo_core.play.players import ResolvedPlayer
    from minigo_core.rating.ladder_rate import RatingRequest, result_json

    games = [(rung, s) for rung, scores in played.items() for s in scores]
    rating = rate_with_fixed_rungs(games, ladder)
    player = ResolvedPlayer("uct:48", "uct", "uct:48", playouts=48)
    request = RatingRequest(7.5, 1, max_games=max_games, target_half_width=target, min_games_per_rung=10)
    return result_json(player, ladder, rating, played, request, 0.0)


@pytest.mark.parametrize(
    "played, max_games, target, stopped, pair, says",
    [
        ({"r4": [1.0] * 6 + [0.0] * 4, "r5": [1.0] * 4 + [0.0] * 6}, 20, 1000.0, "rated", ["r4", "r5"],
         "between r4 and r5"),
        ({"r4": [1.0] * 6 + [0.0] * 4, "r5": [1.0] * 4 + [0.0] * 6}, 20, 10.0, "max_games", ["r4", "r5"],
         "the 20-game budget ran out before the interval narrowed to +-10"),
        ({"r4": [1.0] * 6 + [0.0] * 4}, 10, 100.0, "max_games", None, "not bracketed within 10 games"),
        ({"r3": [1.0] * 8 + [0.0] * 2, "r4": [1.0] * 5 + [0.0] * 5}, 20, 100.0, "max_games", None,
         "not bracketed within 20 games"),  # level with r4: no upper bracket yet
        ({"gnugo:10": [1.0] * 5 + [0.0] * 5}, 400, 100.0, "above_top_rung", None,
         "above the table's top rung gnugo:10 (scores >= 50% against it), not bracketed"),
        ({"r0": [0.5] * 10}, 400, 100.0, "below_bottom_rung", None,
         "below the table's bottom rung r0 (scores <= 50% against it), not bracketed"),
    ],
)  # fmt: skip
def test_the_rating_file_says_truthfully_why_it_stopped(played, max_games, target, stopped, pair, says):
    from minigo_core.rating.ladder_rate import rating_line

    result = _rating_file(synthetic_ladder(), played, max_games, target)
    assert result["stopped"] == stopped and result["bracket"] == pair
    assert result["bracketed"] is (pair is not None)
    assert result["table_rungs"] == synthetic_ladder().names and result["min_games_per_rung"] == 10
    assert says in rating_line(result)
    if stopped == "rated":
        assert result["half_width"] <= target and "budget" not in rating_line(result)
