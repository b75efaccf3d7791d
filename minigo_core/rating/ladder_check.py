"""Does the table predict? Two checks, each a match seeded anew and set against a prediction from the table:
the expected score, its 95% and 99% binomial bands, and the bands widened by the ratings' own uncertainty.

- `minigo ladder check A B --seed S` (`check`): a match between two rungs, seeded with a seed the calibration
  did not use, against what their tabled ratings predict. The games are kept like a calibration pair's
  (`calibration.play_pair`, resumable), under `config/ladder/checks/{N}x{N}/` by default.
- `minigo ladder check --rating FILE RUNG --seed S` (`check_outside`): an outside player (any player spec: a
  model file, genN, `gtp:...`, `pachi:N`, a uct:N that is not a rung), rated by `minigo ladder rate --out
  FILE`, against a rung it was not rated on (`ladder rate --without RUNG`), with a seed the rating did not
  use. The prediction is from the rating's Elo and the rung's; a rating that holds at the target lands in
  the bands against a rung that had no say in it. The games are kept (resumable) under
  `checks/{N}x{N}/outside/`, one file per player and rung, in the calibration pair files' format.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from minigo_core.base.config import RunConfig, SearchSettings
from minigo_core.base.elo import expected_score
from minigo_core.base.machine import cpu_model
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import storage
from minigo_core.play.match import player_setup
from minigo_core.play.players import PlayerSetup, ResolvedPlayer, make_player
from minigo_core.play.referee import game_seeds, match_seed, referee_game
from minigo_core.rating.calibration import (
    DEFAULT_SEED,
    PAIR_FORMAT,
    PAIR_FORMAT_VERSION,
    SAVE_EVERY_S,
    CalibrationDesign,
    pair_text,
    play_pair,
    program_cpu,
    read_pair,
)
from minigo_core.rating.ladder import Ladder, LadderError
from minigo_core.rating.ladder_rate import read_rating, rung_name


def binomial_band(games: int, p: float, coverage: float = 0.95) -> tuple[int, int]:
    """The central `coverage` band of Binomial(games, p): the smallest lo and hi with P(X < lo) and
    P(X > hi) each at most (1 - coverage) / 2."""
    tail = (1.0 - coverage) / 2.0
    pmf = [math.comb(games, k) * p**k * (1.0 - p) ** (games - k) for k in range(games + 1)]
    below, lo = 0.0, 0
    while lo < games and below + pmf[lo] <= tail:
        below += pmf[lo]
        lo += 1
    above, hi = 0.0, games
    while hi > 0 and above + pmf[hi] <= tail:
        above += pmf[hi]
        hi -= 1
    return lo, hi


def predict(ladder: Ladder, player: str, opponent: str, games: int) -> dict:
    """What the table predicts for `games` games of `player` against `opponent` (both rungs): the expected
    score, its 95% and 99% binomial bands at the tabled ratings, and the 95% band widened by the two rungs'
    own uncertainty (their held intervals added in quadrature, the gap moved to either end)."""
    a, b = ladder.rung(player), ladder.rung(opponent)
    p = expected_score(a.elo, b.elo)
    half = math.hypot((a.ci95[1] - a.ci95[0]) / 2, (b.ci95[1] - b.ci95[0]) / 2)
    lo_p, hi_p = expected_score(a.elo - half, b.elo), expected_score(a.elo + half, b.elo)
    return {
        "kind": "rungs",
        "player": player,
        "opponent": opponent,
        "games": games,
        "elo_gap": a.elo - b.elo,
        "expected_score": p,
        "expected_points": games * p,
        "band95": list(binomial_band(games, p)),
        "band99": list(binomial_band(games, p, coverage=0.99)),
        "band95_with_table_uncertainty": [binomial_band(games, lo_p)[0], binomial_band(games, hi_p)[1]],
    }


def check(
    ladder: Ladder, player: str, opponent: str, games: int, seed: int, out_dir: str, gnugo: str | None = None
) -> dict:
    """Play `games` games of `player` against `opponent` with the calibration's game seeding and `seed`
    (one the calibration did not use), kept like a calibration pair in `out_dir` (resumable), and set the
    score against `predict`."""
    if seed == ladder.provenance.get("seed", DEFAULT_SEED):
        raise LadderError(
            f"seed {seed} is the calibration's own: a check needs games the table was not fitted on; "
            "give another --seed"
        )
    komi = float(ladder.provenance.get("komi", 7.5))
    design = CalibrationDesign(
        ladder.board_size, komi, (player, opponent), games, seed, reach=1, ladder_dir=out_dir, gnugo=gnugo
    )
    play_pair(design, player, opponent)
    data = read_pair(design.pair_file(player, opponent))
    assert data is not None
    scores = [float(g["score"]) for g in data["games"]][:games]
    result = predict(ladder, player, opponent, len(scores))
    points = sum(scores)
    lo, hi = result["band95"]
    lo99, hi99 = result["band99"]
    result |= {
        "seed": seed,
        "points": points,
        "inside_band95": lo <= points <= hi,
        "inside_band99": lo99 <= points <= hi99,
        "cpu_seconds": round(sum(float(g.get("cpu_seconds", 0.0)) for g in data["games"]), 1),
        "pair_file": design.pair_file(player, opponent),
        "ladder_cpu": ladder.provenance.get("cpu"),
        "cpu": cpu_model(),
    }
    return result


# ------------------------------------------------------------------------------------------ outside checks


def outside_refusal(ladder: Ladder, rating: dict, opponent: str, seed: int, source: str = "<rating>") -> None:
    """LadderError unless the rating (`ladder_rate.read_rating`, read from `source`) may be checked against
    the rung `opponent` with `seed`: the same board size and komi as the table, an opponent that is a rung
    the rating played no game against (its "rungs"; `ladder rate --without RUNG` makes one) and not the
    player itself, and a seed other than the rating's own."""
    n = ladder.board_size
    if rating["board_size"] != n:
        raise LadderError(
            f"{source}: a {rating['board_size']}x{rating['board_size']} rating, not one on the {n}x{n} "
            f"ladder; give --board-size {rating['board_size']}"
        )
    komi = float(ladder.provenance.get("komi", rating["komi"]))
    if float(rating["komi"]) != komi:
        raise LadderError(
            f"{source}: rated at komi {rating['komi']:g}, the {n}x{n} ladder is at komi {komi:g}; rate the "
            "player again on this ladder"
        )
    ladder.rung(opponent)  # LadderError: not a rung, naming the rungs
    if opponent == rating["player"]:
        raise LadderError(f"{source}: {opponent} is the rated player itself; check it against another rung")
    played = {
        name
        for name, entry in rating["rungs"].items()
        if not isinstance(entry, dict) or entry.get("games", 1)
    }
    if opponent in played:
        free = [name for name in ladder.names if name not in played and name != rating["player"]]
        options = f"rungs it did not play: {', '.join(free)}" if free else "it played every rung"
        raise LadderError(
            f"{source}: the rating played {opponent} (its 'rungs'), so a check against it is no check; "
            f"rate the player with `minigo ladder rate --without {opponent}` or check another rung "
            f"({options})"
        )
    if seed == rating["seed"]:
        raise LadderError(
            f"{source}: seed {seed} is the rating's own; a check needs new games: give another --seed"
        )


def predict_outside(ladder: Ladder, rating: dict, opponent: str, games: int) -> dict:
    """What the rating predicts for `games` games of its player against the rung `opponent`: the expected
    score at the rating's Elo and the rung's tabled one, its 95% and 99% binomial bands, and both bands
    widened by the two ratings' own uncertainty: the rating's 95% interval and the rung's held one, added in
    quadrature on each side (the profile interval of a rating may be lopsided), the Elo gap moved to either
    end."""
    rung = ladder.rung(opponent)
    elo, (lo, hi) = float(rating["elo"]), (float(x) for x in rating["ci95"])
    p = expected_score(elo, rung.elo)
    down = math.hypot(elo - lo, rung.ci95[1] - rung.elo)  # the gap's 95% reach downwards
    up = math.hypot(hi - elo, rung.elo - rung.ci95[0])
    lo_p, hi_p = expected_score(elo - down, rung.elo), expected_score(elo + up, rung.elo)
    return {
        "kind": "outside",
        "player": rating["player"],
        "spec": rating["spec"],
        "opponent": opponent,
        "games": games,
        "player_elo": elo,
        "player_ci95": [lo, hi],
        "opponent_elo": rung.elo,
        "opponent_ci95": list(rung.ci95),
        "elo_gap": elo - rung.elo,
        "expected_score": p,
        "expected_points": games * p,
        "band95": list(binomial_band(games, p)),
        "band99": list(binomial_band(games, p, coverage=0.99)),
        "band95_with_uncertainty": [binomial_band(games, lo_p)[0], binomial_band(games, hi_p)[1]],
        "band99_with_uncertainty": [
            binomial_band(games, lo_p, coverage=0.99)[0],
            binomial_band(games, hi_p, coverage=0.99)[1],
        ],
    }


def outside_file(out_dir: str, board_size: int, spec: str, opponent: str) -> str:
    """Where an outside check keeps its games: `{out_dir}/{N}x{N}/outside/{player}_vs_{rung}.json` (slugs),
    apart from the rung-against-rung checks (a rated rung name would otherwise share their file names)."""
    name = f"{PlayerSpec.parse(spec).slug}_vs_{PlayerSpec.parse(opponent).slug}.json"
    return storage.join(out_dir, f"{board_size}x{board_size}", "outside", name)


def _outside_header(rating: dict, opponent: str, komi: float, seed: int) -> dict:
    return {
        "format": PAIR_FORMAT,
        "format_version": PAIR_FORMAT_VERSION,
        "kind": "outside",
        "board_size": rating["board_size"],
        "komi": komi,
        "player": rating["player"],
        "spec": rating["spec"],
        "opponent": opponent,
        "check_seed": seed,
        "seed": match_seed(seed, None, rating["player"], opponent),
    }


@dataclass(frozen=True)
class OutsideCheck:
    """A check of a rating against a rung it was not rated on: `games` games against `opponent`, seeded by
    `seed` (one the rating did not use)."""

    opponent: str
    games: int
    seed: int


def play_outside(
    rating: dict,
    check: OutsideCheck,
    path: str,
    komi: float,
    *,
    resolved: ResolvedPlayer | None = None,
    setup: PlayerSetup | None = None,
) -> dict:
    """Play the missing games of the first `check.games` of the rated player against the rung
    `check.opponent`, saving them in `path` as they finish (at most once a second, and after the last or a
    failure), and return the file's data. Game i is seeded `game_seeds(match_seed(check.seed, None, player,
    opponent), i)`, the player Black in even-numbered games, as `ladder rate` seeds its games against a rung:
    a rerun plays only what is missing, the same games. `resolved`: the player (default: `rating["spec"]`
    resolved), made by `setup` (default: `PlayerSetup()`; a model's search from the run config as `ladder
    rate` has it: `match.player_setup`)."""
    opponent, games, seed = check.opponent, check.games, check.seed
    setup = setup or PlayerSetup()
    header = _outside_header(rating, opponent, komi, seed)
    data = read_pair(path) or {**header, "games": []}
    for key, value in header.items():
        if data.get(key) != value:
            raise LadderError(
                f"{path}: {key} is {data.get(key)!r}, this check has {value!r}; use the same settings, "
                "another --out-dir, or delete the file to replay the check"
            )
    have = {int(g["index"]) for g in data["games"]}
    todo = [i for i in range(games) if i not in have]
    if not todo:
        return data
    resolved = resolved or setup.resolve(rating["spec"])
    players = []
    saved, unsaved = time.monotonic(), False
    try:
        players.append(setup.make(resolved))
        players.append(make_player(setup.resolve(opponent), SearchSettings(readouts=1)))
        for i in todo:
            player_black = i % 2 == 0
            black, white = players if player_black else players[::-1]
            seeds = game_seeds(header["seed"], i)
            cpu0 = time.process_time() + program_cpu(players)
            game = referee_game(black, white, rating["board_size"], komi, seeds)
            cpu = time.process_time() + program_cpu(players) - cpu0
            colour = game["winner_colour"]
            data["games"].append(
                {
                    "index": i,
                    "seeds": list(seeds),
                    "black": rating["player"] if player_black else opponent,
                    "score": 0.5 if colour == "draw" else float((colour == "black") == player_black),
                    "result": game["result"],
                    "moves": len(game["moves"]),
                    "ended_by": game["ended_by"],
                    "cpu_seconds": round(cpu, 3),
                }
            )
            unsaved = True
            if time.monotonic() - saved >= SAVE_EVERY_S:
                unsaved = _save(path, data)
                saved = time.monotonic()
    finally:
        if unsaved:
            _save(path, data)
        for p in players:
            p.close()
    return data


def _save(path: str, data: dict) -> bool:
    data["games"].sort(key=lambda g: int(g["index"]))
    storage.write_text(path, pair_text(data))
    return False


def check_outside(
    ladder: Ladder,
    rating: dict,
    check: OutsideCheck,
    out_dir: str,
    *,
    rating_file: str = "<rating>",
    resolved: ResolvedPlayer | None = None,
    setup: PlayerSetup | None = None,
) -> dict:
    """Check a rating (`ladder_rate.read_rating` of `rating_file`) against a rung it was not rated on:
    `outside_refusal` first (nothing is played when it refuses), then `check.games` games (`play_outside`,
    kept in `outside_file` under `out_dir`, resumable), set against `predict_outside`. "inside_band95" /
    "inside_band99": whether the points fall in the bands at the two ratings; "inside_band95_with_uncertainty"
    whether they fall in the band widened by the two ratings' intervals."""
    opponent, games, seed = check.opponent, check.games, check.seed
    outside_refusal(ladder, rating, opponent, seed, rating_file)
    komi = float(ladder.provenance.get("komi", rating["komi"]))
    path = outside_file(out_dir, ladder.board_size, rating["spec"], opponent)
    data = play_outside(rating, check, path, komi, resolved=resolved, setup=setup)
    kept = sorted((g for g in data["games"] if int(g["index"]) < games), key=lambda g: int(g["index"]))
    result = predict_outside(ladder, rating, opponent, len(kept))
    points = sum(float(g["score"]) for g in kept)

    def inside(band: list[int]) -> bool:
        return band[0] <= points <= band[1]

    result |= {
        "seed": seed,
        "rating_seed": rating["seed"],
        "rating_file": rating_file,
        "rating_without": rating.get("without"),
        "points": points,
        "inside_band95": inside(result["band95"]),
        "inside_band99": inside(result["band99"]),
        "inside_band95_with_uncertainty": inside(result["band95_with_uncertainty"]),
        "inside_band99_with_uncertainty": inside(result["band99_with_uncertainty"]),
        "cpu_seconds": round(sum(float(g.get("cpu_seconds", 0.0)) for g in kept), 1),
        "pair_file": path,
        "ladder_cpu": ladder.provenance.get("cpu"),
        "cpu": cpu_model(),
    }
    return result


def check_rating_file(
    ladder: Ladder,
    rating_file: str,
    opponent: str,
    games: int,
    seed: int,
    out_dir: str,
    cfg: RunConfig | None = None,
) -> dict:
    """`minigo ladder check --rating FILE RUNG`: the rating read (`read_rating`), the rung's name normalised,
    `outside_refusal` before anything is resolved or played, then `check_outside` with the player as it was
    rated: a model (genN, a model file) with the run config `cfg`'s search (evaluate.readouts), which it
    needs; GNU Go from `cfg` too."""
    rating = read_rating(rating_file)
    name = rung_name(opponent)
    outside_refusal(ladder, rating, name, seed, rating_file)
    setup = player_setup(cfg)
    resolved = setup.resolve(rating["spec"], cfg.root if cfg else None)
    if resolved.kind == "model" and cfg is None:
        raise LadderError(
            f"{rating_file}: checking the model {rating['spec']!r} needs --config (its search: "
            "evaluate.readouts, as it was rated)"
        )
    check = OutsideCheck(name, games, seed)
    return check_outside(
        ladder, rating, check, out_dir, rating_file=rating_file, resolved=resolved, setup=setup
    )


def check_line(result: dict) -> str:
    """One line: the score, what the table (or the rating) predicts, the bands, whether it falls in them."""
    lo, hi = result["band95"]

    def verdict(flag: bool) -> str:
        return "inside" if flag else "OUTSIDE"

    if result.get("kind") == "outside":
        plo, phi = result["player_ci95"]
        wlo, whi = result["band95_with_uncertainty"]
        lo99, hi99 = result["band99"]
        return (
            f"{result['player']} (rated Elo {result['player_elo']:.0f} [{plo:.0f}, {phi:.0f}]) vs "
            f"{result['opponent']} (Elo {result['opponent_elo']:.0f}, not played in the rating): "
            f"{result['points']:g}/{result['games']} (seed {result['seed']}); the rating predicts "
            f"{result['expected_points']:.1f} (Elo gap {result['elo_gap']:+.0f}), 95% band [{lo}, {hi}] "
            f"({verdict(result['inside_band95'])}), 99% band [{lo99}, {hi99}] "
            f"({verdict(result['inside_band99'])}); with the rating's and the rung's own uncertainty "
            f"[{wlo}, {whi}] ({verdict(result['inside_band95_with_uncertainty'])}); "
            f"{result['cpu_seconds']:.0f} CPU-s"
        )
    wlo, whi = result["band95_with_table_uncertainty"]
    line = (
        f"{result['player']} vs {result['opponent']}: {result['points']:g}/{result['games']} "
        f"(seed {result['seed']}); the table predicts {result['expected_points']:.1f} "
        f"(Elo gap {result['elo_gap']:+.0f}), 95% band [{lo}, {hi}] ({verdict(result['inside_band95'])}); "
        f"with the rungs' own uncertainty [{wlo}, {whi}]; {result['cpu_seconds']:.0f} CPU-s"
    )
    return line
