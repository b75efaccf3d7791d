"""Rating one player on a calibrated ladder (`minigo ladder rate`): adaptive matches against its rungs.

The player (any player spec: a model file, genN, gnugo:L, uct:N, gtp:...) plays the rung
`ladder_walk.next_rung` names, a few games at a time (colours alternating per rung: the player takes Black in
the rung's even-numbered games), until it is bracketed (`ladder_walk.bracket`: a rung it scores above 50%
against below a rung it scores under 50% against, `min_games_per_rung` games each) and its 95% interval is
within the target half-width, or the game budget is spent, or it is off either end of the table (it scores
>= 50% against the top rung, or <= 50% against the bottom one). The rating file's "stopped" says which
("rated", "max_games", "above_top_rung", "below_bottom_rung") and "bracketed" whether a bracket was reached.
Games are seeded as a match of `minigo evaluate` is (`play.referee.match_seed(seed, None, player, rung)`,
then `game_seeds(match seed, index)`). The rating is `ladder.rate_with_fixed_rungs` over every game, the
rungs held at their calibrated ratings; the komi is the ladder's (its provenance), the one its rungs were
rated at.

`without_rungs` takes rungs off the table first (`minigo ladder rate --without`), so that a later
`minigo ladder check --rating` against one of them checks the rating against a rung it was not rated on.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from minigo_core.base.config import SearchSettings
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.play.gtp_program import find_gnugo
from minigo_core.play.players import Player, PlayerSetup, ResolvedPlayer, make_player
from minigo_core.play.referee import cpu_seconds, game_seeds, match_seed, referee_game
from minigo_core.rating.ladder import Ladder, LadderError, Rating, rate_with_fixed_rungs
from minigo_core.rating.ladder_walk import bracket, middle_elo, next_rung, off_the_end

DEFAULT_BATCH = 4  # games per step against one rung


def playable_rungs(ladder: Ladder, gnugo: str | None) -> tuple[Ladder, list[str], str]:
    """The ladder without its GNU Go rungs when GNU Go is not installed (`gnugo`: its configured path, None
    for the default), the rungs left out, and a note naming them with the command that installs GNU Go
    (nothing left out: the ladder, [], ''). The other rungs keep their calibrated ratings, so a rating on
    them is on the same fixed scale (anchored at gnugo:10 = 1800 though that rung is not played)."""
    needs_gnugo = [r.player for r in ladder.rungs if PlayerSpec.parse(r.player).kind == "gnugo"]
    if not needs_gnugo:
        return ladder, [], ""
    try:
        find_gnugo(gnugo)
        return ladder, [], ""
    except FileNotFoundError as exc:
        missing = str(exc)
    kept = [r for r in ladder.rungs if r.player not in needs_gnugo]
    if not kept:
        raise LadderError(
            f"every rung of the {ladder.board_size}x{ladder.board_size} ladder is GNU Go: {missing}"
        )
    note = f"{missing}; rating on the ladder's other rungs, without {', '.join(needs_gnugo)}"
    return replace(ladder, rungs=kept), needs_gnugo, note


def rung_name(text: str) -> str:
    """A rung's name as the table spells it (`uct:064` -> `uct:64`); LadderError for a bad spec."""
    try:
        name = PlayerSpec.parse(text.strip()).rating_name()
    except PlayerSpecError as exc:
        raise LadderError(str(exc)) from None
    return name or text.strip()


def without_rungs(ladder: Ladder, names: list[str]) -> tuple[Ladder, list[str]]:
    """The ladder less the rungs `names` (player specs, normalised: `rung_name`), and their table names. The
    other rungs keep their calibrated ratings (the anchor may go too: the scale stays where it was fixed).
    LadderError when a name is not a rung of the table (it lists the rungs) or no rung would be left."""
    dropped: list[str] = []
    for text in names:
        name = rung_name(text)
        ladder.rung(name)  # LadderError: not a rung, naming the rungs
        if name not in dropped:
            dropped.append(name)
    kept = [r for r in ladder.rungs if r.player not in dropped]
    if not kept:
        raise LadderError(
            f"--without {','.join(dropped)} leaves no rung of the {ladder.board_size}x{ladder.board_size} "
            "ladder to rate on; leave some out of --without"
        )
    return replace(ladder, rungs=kept), dropped


def _score(game: dict, player_black: bool) -> float:
    colour = game["winner_colour"]
    return 0.5 if colour == "draw" else float((colour == "black") == player_black)


def _play_batch(
    player: Player, rung: Player, first: int, count: int, seed: int, board_size: int, komi: float
) -> list[float]:
    """Games first..first+count-1 against one rung; the player's scores."""
    scores = []
    for i in range(first, first + count):
        player_black = i % 2 == 0
        black, white = (player, rung) if player_black else (rung, player)
        game = referee_game(black, white, board_size, komi, game_seeds(seed, i))
        scores.append(_score(game, player_black))
    return scores


def _per_game(played: dict[str, list[float]]) -> list[tuple[str, float]]:
    return [(rung, s) for rung, scores in played.items() for s in scores]


@dataclass(frozen=True)
class RatingRequest:
    """What a rating asks for: the komi of its games, the seed of its matches against the rungs, where it
    starts (None: the table's middle rung, `ladder_walk.middle_elo`), the 95% half-width it stops at, its
    game budget, the games a step against one rung, and the games a rung needs before it counts."""

    komi: float
    seed: int
    start_elo: float | None = None
    target_half_width: float = 100.0
    max_games: int = 400
    batch: int = DEFAULT_BATCH
    min_games_per_rung: int = 10
    # games the same player already played against the rungs (`continue_from`: its own first rating), as
    # (rung, score, games): counted as if played here (the budget counts them), new games seeded on
    carried: tuple[tuple[str, float, int], ...] = ()


def rate_player(
    resolved: ResolvedPlayer,
    ladder: Ladder,
    request: RatingRequest,
    setup: PlayerSetup,
    log: Callable[[str], None] = lambda line: None,
) -> dict:
    """Rate `resolved` (made by `setup`) against `ladder` adaptively; returns the result (see
    `result_json`). Carried games (`request.carried`) count as played: a rung's carried score s of n games
    enters as n games of s / n each (the fixed-rung fit reads a rung's sum and count only)."""
    started, cpu0 = time.time(), cpu_seconds()
    start = request.start_elo if request.start_elo is not None else middle_elo(ladder)
    estimate = Rating(start, (start, start), 0)
    played: dict[str, list[float]] = {rung: [score / n] * n for rung, score, n in request.carried if n > 0}
    rungs: dict[str, Player] = {}
    player = setup.make(resolved)
    try:
        while True:
            totals = {r: (sum(s), len(s)) for r, s in played.items()}
            rung = next_rung(
                ladder, estimate, totals, request.min_games_per_rung, request.target_half_width,
                max_games=request.max_games,
            )  # fmt: skip
            if rung is None:
                break
            if rung not in rungs:
                rungs[rung] = make_player(setup.resolve(rung), SearchSettings(readouts=1))
            have = len(played.get(rung, []))
            batch, least = request.batch, request.min_games_per_rung
            count = batch if have >= least else min(batch, least - have)
            count = min(count, request.max_games - sum(n for _, n in totals.values()))
            rung_seed = match_seed(request.seed, None, resolved.name, rung)
            scores = _play_batch(player, rungs[rung], have, count, rung_seed, ladder.board_size, request.komi)
            played.setdefault(rung, []).extend(scores)
            now = rate_with_fixed_rungs(_per_game(played), ladder, interval="wald")
            log(
                f"{resolved.name} vs {rung}: {sum(scores):g}/{len(scores)} (all: {sum(played[rung]):g}/"
                f"{len(played[rung])}); Elo {now.elo:.0f} +- {now.half_width:.0f}"
            )
    finally:
        player.close()
        for p in rungs.values():
            p.close()
    rating = rate_with_fixed_rungs(_per_game(played), ladder)
    result = result_json(resolved, ladder, rating, played, request, started)
    return {
        **result,
        "start_elo": start,  # where it started: the given estimate, else the table's middle rung
        "cpu_seconds": round(cpu_seconds() - cpu0, 3),  # its games' and GNU Go's CPU
        "startup_cpu_seconds": round(cpu0, 3),  # the process's CPU before its first game: imports, loading
    }


def result_json(
    resolved: ResolvedPlayer,
    ladder: Ladder,
    rating: Rating,
    played: dict[str, list[float]],
    request: RatingRequest,
    started: float,
) -> dict:
    """The rating file: the player, its rating and interval, bracket, games per rung, why it stopped.

    "bracketed": whether `ladder_walk.bracket` holds (a rung scored above 50% below one scored under 50%,
    `min_games_per_rung` games each), "bracket" that pair (else None); "stopped": "rated" (bracketed, the 95%
    interval within +-`target_half_width`), "max_games" (the budget ran out first, bracketed or not),
    "above_top_rung" / "below_bottom_rung" (not bracketed: it scores >= 50% against the table's top rung, or
    <= 50% against its bottom one, so no rung can bound it on that side: `ladder_walk.off_the_end`).
    "table_rungs": the rungs it could play (the table less `--without` and rungs left out), "rungs" the ones
    it played."""
    komi, seed, max_games = request.komi, request.seed, request.max_games
    target_half_width, min_games_per_rung = request.target_half_width, request.min_games_per_rung
    totals = {r: (sum(s), len(s)) for r, s in played.items()}
    pair = bracket(ladder, totals, min_games_per_rung)
    elo = ladder.ratings()
    if pair is not None:
        stopped = "rated" if rating.half_width <= target_half_width else "max_games"
    else:
        stopped = off_the_end(ladder, totals, min_games_per_rung) or "max_games"
    finished = time.time()
    return {
        "player": resolved.name,
        "spec": resolved.spec,
        "board_size": ladder.board_size,
        "komi": komi,
        "anchor": ladder.anchor,
        "anchor_elo": ladder.anchor_elo,
        **rating.to_json(),
        "half_width": rating.half_width,
        "bracketed": pair is not None,
        "bracket": list(pair) if pair else None,
        "stopped": stopped,
        "rungs": {
            r: {"rung_elo": elo[r], "games": n, "score": s}
            for r, (s, n) in sorted(totals.items(), key=lambda kv: elo[kv[0]])
        },
        "table_rungs": ladder.names,
        "seed": seed,
        "target_half_width": target_half_width,
        "max_games": max_games,
        "min_games_per_rung": min_games_per_rung,
        "date": dt.datetime.fromtimestamp(started, dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(finished - started, 3),
    }


def _rating_file(path: str) -> tuple[dict, float]:
    """A rating file's mapping and its finite Elo; ValueError naming the file when unusable."""
    try:
        with open(path) as handle:
            data = json.load(handle)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the rating to start from ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc}); expected a `minigo ladder rate --out` file") from exc
    elo = data.get("elo") if isinstance(data, dict) else None
    if isinstance(elo, bool) or not isinstance(elo, (int, float)) or not math.isfinite(elo):
        raise ValueError(f"{path}: no finite 'elo' (got {elo!r}); expected a `minigo ladder rate --out` file")
    return data, float(elo)


def start_from(path: str) -> float:
    """The rating held in a rating file (`minigo ladder rate --out`, e.g. the previous generation's
    `eval/genGGGG/ladder.json`): where the next rating starts. ValueError naming the file when unusable."""
    return _rating_file(path)[1]


def continue_from(path: str, player: str, ladder: Ladder, komi: float) -> tuple[float, tuple]:
    """The rating in a rating file of the same `player` (its first rating) to go on from: (its Elo, its games
    per rung as `RatingRequest.carried`). ValueError naming the file when it is unreadable, another player's,
    another board's or komi's, or has games against a rung this ladder does not play."""
    data, elo = _rating_file(path)
    if data.get("player") != player:
        raise ValueError(f"{path}: a rating of {data.get('player')!r}, not of {player!r}; go on from its own")
    if data.get("board_size") != ladder.board_size or data.get("komi") != komi:
        raise ValueError(
            f"{path}: rated on {data.get('board_size')}x{data.get('board_size')} at komi {data.get('komi')}, "
            f"this ladder is {ladder.board_size}x{ladder.board_size} at komi {komi:g}"
        )
    rungs = data.get("rungs")
    if not isinstance(rungs, dict):
        raise ValueError(f"{path}: no 'rungs' (games per rung); expected a `minigo ladder rate --out` file")
    carried = []
    for rung, entry in rungs.items():
        if rung not in ladder.names:
            raise ValueError(f"{path}: games against {rung}, not a rung this rating plays; start it afresh")
        try:
            games, score = int(entry["games"]), float(entry["score"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}: rung {rung}: expected its games and score, got {entry!r}") from None
        if not 0 <= score <= games:
            raise ValueError(f"{path}: rung {rung}: a score of {score:g} in {games} games")
        carried.append((rung, score, games))
    return elo, tuple(carried)


def rating_line(result: dict) -> str:
    """`Elo 1230 [1180, 1280], between uct:4096 and gnugo:1` (bracketed, rated), with what stopped it short
    when the budget ran out, or where it stands and why it is not bracketed."""
    lo, hi = result["ci95"]
    head = f"Elo {result['elo']:.0f} [{lo:.0f}, {hi:.0f}]"
    stopped = result["stopped"]
    if result["bracket"]:
        low, high = result["bracket"]
        line = f"{head}, between {low} and {high}"
        if stopped == "max_games":
            line += (
                f" (the {result['max_games']}-game budget ran out before the interval narrowed to "
                f"+-{result['target_half_width']:g})"
            )
        return line
    top = (result.get("table_rungs") or [None])[-1]
    bottom = (result.get("table_rungs") or [None])[0]
    where = {
        "above_top_rung": f"above the table's top rung{f' {top}' if top else ''} (scores >= 50% against it), "
        "not bracketed",
        "below_bottom_rung": f"below the table's bottom rung{f' {bottom}' if bottom else ''} (scores <= 50% "
        "against it), not bracketed",
        "max_games": f"not bracketed within {result['max_games']} games",
    }[stopped]
    return f"{head}, {where}"


def read_rating(path: str) -> dict:
    """A rating file (`minigo ladder rate --out`) with what a check needs from it: "spec", "player", a finite
    "elo", "ci95" around it, "board_size", "komi", "seed" and the "rungs" it played. LadderError naming the
    file and the key when unusable."""
    again = "; expected a `minigo ladder rate --out` file (rate the player again to make one)"
    try:
        with open(path) as handle:
            data = json.load(handle)
    except OSError as exc:
        raise LadderError(f"{path}: cannot read the rating ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise LadderError(f"{path}: not JSON ({exc}){again}") from exc
    if not isinstance(data, dict):
        raise LadderError(f"{path}: not a JSON object{again}")

    def number(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    checks = {
        "spec": lambda v: isinstance(v, str) and bool(v),
        "player": lambda v: isinstance(v, str) and bool(v),
        "elo": number,
        "ci95": lambda v: isinstance(v, list) and len(v) == 2 and all(number(x) for x in v),
        "board_size": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "komi": number,
        "seed": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "rungs": lambda v: isinstance(v, dict),
    }
    for key, ok in checks.items():
        if not ok(data.get(key)):
            raise LadderError(f"{path}: missing or bad {key!r} (got {data.get(key)!r}){again}")
    lo, hi = data["ci95"]
    if not lo <= data["elo"] <= hi:
        raise LadderError(f"{path}: ci95 {data['ci95']} does not contain elo {data['elo']}{again}")
    return data
