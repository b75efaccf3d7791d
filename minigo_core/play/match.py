"""Matches between two players (what `minigo evaluate` plays): the referee, the seeds, the totals.

E games, colours alternating (the player takes Black in even-numbered games), no root noise, fixed readouts
(`evaluate.readouts`); the first `evaluate.softpick_moves` moves of each game are drawn in proportion to visit
counts with a seed derived from (run seed, generation, both players' names, game index), so E games are E
different samples and re-running a match reproduces it. A game ends on two passes (scored), a resignation, an
illegal move from an outside engine (a forfeit), or the move cap of 2 N^2 moves (scored).

Scoring is Tromp-Taylor (`go.Position.score`, area, no dead-stone removal, komi to White). When a player is a
GTP engine (GNU Go) that answers `final_score`, its own count is recorded too, with `scores_agree` (same
winner); GNU Go runs with `--capture-all-dead`, so on finished games the two agree.

Results file (`minigo_core.data.matchfile`; JSON, written atomically): the players, the settings, one
record per game (moves as GTP vertices, result such as `B+3.5` / `W+R`, winner, how it ended, scores) and the
totals: wins, the win rate of the player (draws count half), its 95% Wilson interval and the Elo difference it
implies. With early stop (`evaluate.early_stop`) the match ends once the player's win rate is sure to be above
50% or sure not to be, whatever the remaining games would give.

Time per move. The referee times every genmove (wall clock, `time.perf_counter`; and this process's CPU,
`time.process_time`): each game records per colour the moves, mean and 95th percentile (`move_times`), the
match per side (`time_per_move`: player and opponent, by name) the same over all its games and the side's CPU
seconds: this process's CPU during the side's genmoves plus, for an outside engine (GNU Go, Pachi, any GTP
engine), its process's CPU over the match from /proc. These are measurements: the comparison of two runs
(`data/compare.py`) leaves them out.

Equal time per move. A model can search by a time budget per move instead of fixed readouts
(`SearchSettings.move_time`, `timed_search.search_for`: growing chunks of readouts on the kept tree until the
next chunk would overrun the budget; at least the first chunk, `SearchSettings.chunk_readouts` readouts or
Gumbel's considered moves, at most `max_readouts`). `minigo evaluate --move-time MS` gives every model side
MS milliseconds a move; `--equal-time` gives the player the opponent's measured time per move on this machine
(`measure_time_per_move`: the mean wall time of the opponent's genmoves in a short probe before the match),
the opponent playing as it always does. Such games depend on the machine's speed and load: a rerun plays other
games, and the results file says so (`"reproducible": false`); matches by fixed readouts replay exactly.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from minigo_core.base.command import UsageError
from minigo_core.base.config import RunConfig
from minigo_core.base.elo import elo_difference, wilson_interval
from minigo_core.data import storage
from minigo_core.data.matchfile import ENDINGS, MATCH_FORMAT, MATCH_FORMAT_VERSION, POINTS
from minigo_core.game import coords, go, sgf
from minigo_core.game.result import parse_score, result_string
from minigo_core.play.players import (
    RESIGN,
    ModelPlayer,
    Player,
    PlayerError,
    ResolvedPlayer,
    SearchSettings,
    make_player,
    resolve_spec,
)
from minigo_core.play.timecontrol import Clock, TimeSettings

# ------------------------------------------------------------------------------------------------- one game


@dataclass
class MoveTimes:
    """One side's genmoves: the wall seconds of each, and this process's CPU seconds during them."""

    wall: list[float] = field(default_factory=list)
    cpu: float = 0.0

    def add(self, wall: float, cpu: float) -> None:
        self.wall.append(wall)
        self.cpu += cpu

    def extend(self, other: MoveTimes) -> None:
        self.wall += other.wall
        self.cpu += other.cpu

    def summary(self) -> dict:
        """`moves`, `mean_s` and `p95_s` (the 95th percentile, linear interpolation) of the wall times;
        null times without moves."""
        if not self.wall:
            return {"moves": 0, "mean_s": None, "p95_s": None}
        wall = np.asarray(self.wall, dtype=np.float64)
        return {
            "moves": int(wall.size),
            "mean_s": round(float(wall.mean()), 5),
            "p95_s": round(float(np.percentile(wall, 95)), 5),
        }


def play_game(
    black: Player,
    white: Player,
    board_size: int,
    komi: float,
    seeds: tuple[int, int],
    max_moves: int | None = None,
    clock: TimeSettings | None = None,
    times: dict[int, MoveTimes] | None = None,
) -> dict:
    """Referee one game; returns its record (moves as GTP vertices, result, winner colour, ending, scores,
    and per colour the genmoves' wall times: `move_times` {black, white} of `MoveTimes.summary`). With
    `times` ({go.BLACK: MoveTimes, go.WHITE: ...}) each colour's genmove times are also added there.

    With a `clock` the referee enforces it: both players get `time_settings`, the mover its `time_left` before
    each genmove, each genmove's wall time is charged to the mover's clock, and a side whose clock runs out
    loses on time (`ended_by` "time", result `B+T`/`W+T`). A player with `komi_points` (`SPEC+kP`/`SPEC-kP`)
    plays at a komi shifted in its favour by that much (`komi` in the record)."""
    max_moves = 2 * board_size * board_size if max_moves is None else max_moves
    t0 = time.perf_counter()
    shift = float(white.komi_points) - float(black.komi_points)  # SPEC+kP / SPEC-kP: reverse komi
    komi += shift
    black.new_game(board_size, komi, seeds[0])
    white.new_game(board_size, komi, seeds[1])
    clocks = None if clock is None else {go.BLACK: Clock(clock), go.WHITE: Clock(clock)}
    for p in (black, white) if clock is not None else ():
        p.set_time_settings(clock)
    position = go.Position(board_size, komi)
    moves: list[coords.Move] = []
    spent = {go.BLACK: MoveTimes(), go.WHITE: MoveTimes()}
    winner = 0
    note = None
    while True:
        if position.is_game_over():
            ending = "score"
            break
        if position.n >= max_moves:
            ending = "move_cap"
            break
        mover, other = (black, white) if position.to_play == go.BLACK else (white, black)
        if clocks is not None:
            mover.time_left(position.to_play, *clocks[position.to_play].gtp_time_left())
        started, cpu_started = time.perf_counter(), time.process_time()
        move = mover.genmove(position)
        wall = time.perf_counter() - started
        spent[position.to_play].add(wall, time.process_time() - cpu_started)
        if clocks is not None and not clocks[position.to_play].spend(wall):
            ending, winner, note = "time", -position.to_play, f"{mover.name} lost on time"
            break
        if move == RESIGN:
            ending, winner = "resign", -position.to_play
            break
        try:
            after = position.play_move(move)
        except go.IllegalMove as exc:
            ending, winner, note = "illegal_move", -position.to_play, f"{mover.name}: {exc}"
            break
        other.play(position, move)
        moves.append(move)
        position = after
    score = None
    engine_scores: dict[str, str] = {}
    agree = None
    if ending in ("score", "move_cap"):
        score = position.score()
        winner = 1 if score > 0 else -1 if score < 0 else 0
        result = result_string(score)
        same_name = black.name == white.name
        for p, colour in ((black, "black"), (white, "white")) if black is not white else ((black, "black"),):
            text = p.final_score()
            if text is not None:
                engine_scores[f"{p.name} ({colour})" if same_name else p.name] = text
        if engine_scores:
            values = [parse_score(t) for t in engine_scores.values()]
            agree = all(v is not None and np.sign(v) == np.sign(score) for v in values)
    else:
        reason = {"resign": "resign", "time": "time"}.get(ending, "forfeit")
        result = result_string(winner=winner, reason=reason)
    record = {
        "moves": [coords.to_gtp(m, board_size) for m in moves],
        "result": result,
        "winner_colour": {1: "black", -1: "white", 0: "draw"}[winner],
        "ended_by": ending,
        "score": score,
        "engine_scores": engine_scores,
        "scores_agree": agree,
        "seconds": round(time.perf_counter() - t0, 3),
        "move_times": {"black": spent[go.BLACK].summary(), "white": spent[go.WHITE].summary()},
    }
    if times is not None:
        for colour in (go.BLACK, go.WHITE):
            times[colour].extend(spent[colour])
    if note:
        record["note"] = note
    if shift:
        record["komi"] = komi  # the komi played, shifted from the match's by the players' +kP / -kP
    if clocks is not None:
        black_left, white_left = clocks[go.BLACK].gtp_time_left(), clocks[go.WHITE].gtp_time_left()
        record["clock_left"] = {"black": black_left, "white": white_left}
    return record


# ------------------------------------------------------------------------------------------------- a match


def match_seed(run_seed: int, generation: int | None, player: str, opponent: str) -> int:
    """A 64-bit seed from (run seed, generation, both names): stable across machines and Python versions."""
    key = [int(run_seed), int(generation or 0), zlib.crc32(player.encode()), zlib.crc32(opponent.encode())]
    return int(np.random.SeedSequence(key).generate_state(2, np.uint64)[0])


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """Seeds for the two players of game `index` (Black's, White's)."""
    a, b = np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(2, np.uint64)
    return int(a), int(b)


def totals(games: list[dict], planned: int) -> dict:
    """Wins, win rate (draws count half), its 95% Wilson interval, the Elo difference it implies."""
    n = len(games)
    wins = sum(g["winner"] == "player" for g in games)
    losses = sum(g["winner"] == "opponent" for g in games)
    draws = n - wins - losses
    score = wins + 0.5 * draws
    lo, hi = wilson_interval(score, n)
    rate = score / n if n else None
    out = {
        "games": n,
        "games_planned": planned,
        "player_wins": wins,
        "opponent_wins": losses,
        "draws": draws,
        "player_score": score,
        "win_rate": rate,
        "ci95": [lo, hi],
        "elo_difference": _finite(elo_difference(rate)) if n else None,
        "elo_difference_ci95": [_finite(elo_difference(lo)), _finite(elo_difference(hi))] if n else None,
        "player_wins_as_black": sum(g["winner"] == "player" and g["black"] == "player" for g in games),
        "player_wins_as_white": sum(g["winner"] == "player" and g["black"] == "opponent" for g in games),
        "ended_by": {e: sum(g["ended_by"] == e for g in games) for e in ENDINGS},
        "decided": decided(score, n, planned),
    }
    agreements = [g["scores_agree"] for g in games if g.get("scores_agree") is not None]
    if agreements:
        out["engine_scores_agree"] = sum(agreements)
        out["engine_scores_compared"] = len(agreements)
    return out


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def decided(score: float, played: int, planned: int) -> str | None:
    """'above' once the player's final win rate must pass 50%, 'not_above' once it cannot; else None."""
    left = planned - played
    if score > planned / 2:
        return "above"
    if score + left <= planned / 2:
        return "not_above"
    return None


def play_match(
    player: Player,
    opponent: Player,
    games: int,
    board_size: int,
    komi: float,
    seed: int,
    early_stop: bool = False,
    max_moves: int | None = None,
    progress: Callable[[int, dict], None] | None = None,
    times: dict[str, MoveTimes] | None = None,
) -> tuple[list[dict], bool]:
    """Play up to `games` games, colours alternating; returns (game records, stopped early). With `times`
    ({"player": MoveTimes, "opponent": ...}) each side's genmove times are added there."""
    records: list[dict] = []
    for i in range(games):
        player_black = i % 2 == 0
        black, white = (player, opponent) if player_black else (opponent, player)
        seeds = game_seeds(seed, i)
        side = "player" if player_black else "opponent"
        other = "opponent" if player_black else "player"
        by_colour = None if times is None else {go.BLACK: times[side], go.WHITE: times[other]}
        game = play_game(black, white, board_size, komi, seeds, max_moves, times=by_colour)
        winner = {"black": side, "white": other, "draw": "draw"}[game["winner_colour"]]
        record = {
            "index": i,
            "black": side,
            "black_name": black.name,
            "white_name": white.name,
            "winner": winner,
            **game,
            "seeds": list(seeds),
        }
        records.append(record)
        if progress is not None:
            progress(i, record)
        score = sum(POINTS[r["winner"]] for r in records)
        if early_stop and i + 1 < games and decided(score, i + 1, games) is not None:
            return records, True
    return records, False


def game_sgf(results: dict, game: dict) -> bytes:
    """One game of a results file as SGF (player names, result, komi: the game's own where a player's
    +kP / -kP shifted it, else the match's)."""

    size = int(results["board_size"])
    moves = [coords.from_gtp(v, size) for v in game["moves"]]
    comment = f"minigo evaluate game {game['index']}, ended by {game['ended_by']}"
    if game.get("engine_scores"):
        comment += "; engine scores " + ", ".join(f"{k}: {v}" for k, v in game["engine_scores"].items())
    comments = [None] * len(moves)
    if comments:
        comments[-1] = comment
    return sgf.write_sgf(
        moves,
        size,
        float(game.get("komi", results["komi"])),
        game["result"],
        comments=comments,
        players={"black": game["black_name"], "white": game["white_name"]},
    )


def export_sgf(results: dict, out_dir: str) -> list[str]:
    """Write every game of a results dict as `game000.sgf`, ... under `out_dir`; returns the paths."""
    urls = [storage.join(out_dir, f"game{game['index']:03d}.sgf") for game in results["games"]]
    storage.remove_stale_temporaries(urls)  # what a killed export of these games left
    paths = []
    for game, url in zip(results["games"], urls, strict=True):
        storage.write_bytes(url, game_sgf(results, game))
        paths.append(url)
    return paths


def run_match(
    player_spec: ResolvedPlayer,
    opponent_spec: ResolvedPlayer,
    *,
    games: int,
    board_size: int,
    komi: float,
    search: SearchSettings,
    seed: int,
    generation: int | None,
    early_stop: bool,
    run_cfg: Any = None,
    backend: str = "dsp",
    threads: int = 1,
    max_moves: int | None = None,
    opponent_search: SearchSettings | None = None,
    equal_time_probe_games: int = 0,
    log: Any = sys.stderr,
) -> dict:
    """Create both players, play the match, return the results dict (see the module docstring).

    A model side whose settings have a `move_time` searches by that budget per move. With
    `equal_time_probe_games` > 0 the player (a model) first plays that many probe games at its fixed readouts
    against the opponent (`measure_time_per_move`), then the match with the opponent's mean time per move as
    its budget (`search.max_readouts` its ceiling)."""
    started, cpu0 = time.time(), cpu_seconds()
    nets: dict = {}
    player = make_player(player_spec, search, run_cfg, backend, threads, nets=nets)
    try:
        opponent = make_player(opponent_spec, opponent_search or search, run_cfg, backend, threads, nets=nets)
    except BaseException:
        player.close()
        raise
    seed_used = match_seed(seed, generation, player_spec.name, opponent_spec.name)

    def progress(i: int, g: dict) -> None:
        print(
            f"game {i + 1}/{games}: {g['black_name']} (B) vs {g['white_name']} (W): {g['result']} "
            f"({g['ended_by']}, {len(g['moves'])} moves, {g['seconds']:.1f} s)",
            file=log,
            flush=True,
        )

    times = {"player": MoveTimes(), "opponent": MoveTimes()}
    equal_time = None
    after_game = progress
    try:
        if equal_time_probe_games > 0:
            probe = (equal_time_probe_games, board_size, komi, probe_seed(seed_used), max_moves)
            equal_time = give_equal_time(player, opponent, *probe, log=log)
            after_game = follow_opponent_time(player, times["opponent"], equal_time, progress)
        budget = time_budget(
            player, opponent, equal_time
        )  # the first game's budget (equal time: the probe's)
        engine0 = {"player": engine_cpu_seconds(player), "opponent": engine_cpu_seconds(opponent)}
        records, stopped = play_match(
            player, opponent, games, board_size, komi, seed_used, early_stop, max_moves, after_game, times
        )
        for side, p in (("player", player), ("opponent", opponent)):
            times[side].cpu += engine_cpu_seconds(p) - engine0[side]  # an outside engine's own CPU
        info = ({**player_spec.describe(), **player.info()}, {**opponent_spec.describe(), **opponent.info()})
    finally:
        player.close()
        opponent.close()
    finished = time.time()
    return {
        "format": MATCH_FORMAT,
        "format_version": MATCH_FORMAT_VERSION,
        "player": info[0],
        "opponent": info[1],
        "generation": generation,
        "board_size": board_size,
        "komi": komi,
        "readouts": search.readouts,
        "softpick_moves": search.softpick_moves,
        "resign_threshold": search.resign_threshold,
        **budget,
        "max_moves": 2 * board_size * board_size if max_moves is None else max_moves,
        "seed": seed_used,
        "early_stop": early_stop,
        "early_stopped": stopped,
        "games": records,
        "totals": totals(records, games),
        "time_per_move": time_per_move(times, info[0]["name"], info[1]["name"], log),
        "started_unix": started,
        "finished_unix": finished,
        "started_at": dt.datetime.fromtimestamp(started, dt.timezone.utc).isoformat(timespec="seconds"),
        "finished_at": dt.datetime.fromtimestamp(finished, dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(finished - started, 3),
        "cpu_seconds": round(cpu_seconds() - cpu0, 3),
        "startup_cpu_seconds": round(cpu0, 3),  # the process's CPU before the first game: imports, loading
    }


def time_per_move(times: dict[str, MoveTimes], player: str, opponent: str, log: Any = None) -> dict:
    """The results file's `time_per_move`: per side its name, genmoves, their mean and 95th-percentile wall
    seconds, and its CPU seconds (`MoveTimes.cpu`: in-process genmove CPU plus an outside engine's); each side
    also said on `log`."""
    out = {}
    for side, name in (("player", player), ("opponent", opponent)):
        out[side] = {"name": name, **times[side].summary(), "cpu_s": round(times[side].cpu, 3)}
        t = out[side]
        if log is not None and t["moves"]:
            print(
                f"{side} {name}: {t['moves']} moves, mean {t['mean_s'] * 1000:.1f} ms, "
                f"p95 {t['p95_s'] * 1000:.1f} ms a move, {t['cpu_s']:.1f} CPU s",
                file=log,
                flush=True,
            )
    return out


def time_budget(player: Player, opponent: Player, equal_time: dict | None) -> dict:
    """The results file's time fields: `move_time_ms` (the player's budget, else the opponent's; null when no
    model searched by time) and `reproducible`; for a timed match also `max_readouts`, `reproducible_note`
    and, with `--equal-time`, `equal_time` (how the budget was measured)."""
    timed = [p.search for p in (player, opponent) if isinstance(p, ModelPlayer) and p.search.move_time]
    out: dict[str, Any] = {
        "move_time_ms": round(timed[0].move_time * 1000.0, 3) if timed else None,
        "reproducible": not timed,
    }
    if timed:
        out["max_readouts"] = timed[0].max_readouts or timed[0].readouts
        out["reproducible_note"] = NOT_REPRODUCIBLE
    if equal_time is not None:
        out["equal_time"] = equal_time
    return out


def follow_opponent_time(
    player: Player, opponent_times: MoveTimes, equal_time: dict, progress: Callable[[int, dict], None]
) -> Callable[[int, dict], None]:
    """`--equal-time` through the match: after each game the player's budget becomes the opponent's mean time
    per move over the probe and the match's games so far, so a probe that met a busier (or idler) machine than
    the match does not decide the budget alone. Each game's record says the budget it was played with
    (`move_time_ms`); `equal_time` gains `follows` (the rule) and `final_move_time_ms`."""
    probe_n = int(equal_time["measured_over_moves"])
    probe_sum = float(equal_time["opponent_mean_s"]) * probe_n
    equal_time["follows"] = "after each game: the opponent's mean time per move over the probe and the match"
    equal_time["final_move_time_ms"] = equal_time["move_time_ms"]

    def after(i: int, game: dict) -> None:
        game["move_time_ms"] = equal_time["final_move_time_ms"]
        progress(i, game)
        mean = (probe_sum + sum(opponent_times.wall)) / (probe_n + len(opponent_times.wall))
        budget_ms = round(max(mean, 1e-6) * 1000.0, 3)
        player.search = replace(player.search, move_time=budget_ms / 1000.0)
        equal_time["final_move_time_ms"] = budget_ms

    return after


def give_equal_time(
    player: Player,
    opponent: Player,
    probe_games: int,
    board_size: int,
    komi: float,
    seed: int,
    max_moves: int | None = None,
    log: Any = None,
) -> dict:
    """`--equal-time`: measure the opponent's time per move (`measure_time_per_move`), then make that the
    player's budget per move (`SearchSettings.move_time`); returns the measurement. UsageError when the
    player is not a model."""
    if not isinstance(player, ModelPlayer):
        raise UsageError(
            f"--equal-time: the player {player.name} is not a model; only a model searches by a time budget "
            "per move"
        )
    equal_time = measure_time_per_move(player, opponent, probe_games, board_size, komi, seed, max_moves)
    player.search = replace(player.search, move_time=equal_time["move_time_ms"] / 1000.0)
    if log is not None:
        print(
            f"equal time: {opponent.name} took {equal_time['opponent_mean_s'] * 1000:.1f} ms a move over "
            f"{equal_time['measured_over_moves']} moves; {player.name} searches "
            f"{equal_time['move_time_ms']:g} ms a move",
            file=log,
            flush=True,
        )
    return equal_time


NOT_REPRODUCIBLE = (
    "time-budgeted search: how many readouts a move gets depends on this machine's speed and load, so a "
    "rerun plays other games"
)
EQUAL_TIME_PROBE_GAMES = 2  # games of the probe that measures the opponent's time per move (`--equal-time`)


def probe_seed(match_seed_used: int) -> int:
    """The seed of an equal-time probe's games: derived from the match's, and not any of its games' seeds."""
    return int(np.random.SeedSequence([match_seed_used, 0x70BE]).generate_state(1, np.uint64)[0])


def measure_time_per_move(
    player: Player,
    opponent: Player,
    games: int,
    board_size: int,
    komi: float,
    seed: int,
    max_moves: int | None = None,
) -> dict:
    """The opponent's time per move on this machine, for `--equal-time`: `games` probe games (colours
    alternating, seeded by `seed`, not counted in the match) of the opponent against `player` as it is set up
    (a model: its fixed readouts), timing every genmove of the opponent as the referee sees it (wall clock
    from the genmove's call to its answer: an outside engine's pipe round trip included, as it is for every
    move of the match). The budget is their mean, in whole microseconds: `move_time_ms`.

    Measured in the same process, on the same machine and under the same load as the match that follows, so
    both sides' moves are timed alike; the results file's `time_per_move` then shows how close the two sides'
    means came. PlayerError when the opponent made no move in the probe (nothing to measure)."""
    times = {"player": MoveTimes(), "opponent": MoveTimes()}
    play_match(player, opponent, games, board_size, komi, seed, max_moves=max_moves, times=times)
    measured = times["opponent"]
    if not measured.wall:
        raise PlayerError(
            f"--equal-time: {opponent.name} made no move in {games} probe games; nothing to measure"
        )
    mean = float(np.mean(measured.wall))
    return {
        "opponent_mean_s": round(mean, 6),
        "opponent_p95_s": measured.summary()["p95_s"],
        "measured_over_moves": len(measured.wall),
        "probe_games": games,
        "move_time_ms": round(max(mean, 1e-6) * 1000.0, 3),
        "how": "the mean wall time of the opponent's genmoves in the probe games against the player at its "
        "fixed readouts, on this machine, just before the match",
    }


def engine_cpu_seconds(player: Player) -> float:
    """CPU seconds an outside engine behind `player` (GNU Go, Pachi, a GTP engine) has used so far, from /proc
    (0 for an in-process player, or where /proc is unreadable); read it before the player is closed."""
    own = getattr(player, "engine_cpu_seconds", None)
    if callable(own):
        return float(own())
    client = getattr(player, "client", None)
    return float(client.cpu_seconds()) if client is not None and hasattr(client, "cpu_seconds") else 0.0


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (GNU Go) so far: what a match cost, also when
    it ran niced beside other jobs (`minigo status --breakdown` counts evaluations by it)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def summary_line(results: dict) -> str:
    t = results["totals"]
    lo, hi = t["ci95"]
    rate = t["win_rate"]
    stop = " (stopped early: decided)" if results["early_stopped"] else ""
    if rate is None:
        return "no games played"
    draws = f"-{t['draws']}" if t["draws"] else ""
    timed = results.get("move_time_ms")
    budget = (
        ""
        if timed is None
        else f" ({'equal time: ' if results.get('equal_time') else ''}{timed:g} ms a move)"
    )
    return (
        f"{results['player']['name']} vs {results['opponent']['name']}{budget}: {t['player_wins']}-"
        f"{t['opponent_wins']}{draws} in {t['games']} games{stop}; win rate {rate:.3f} "
        f"[95% {lo:.3f}, {hi:.3f}]"
    )


# ----------------------------------------------------------------------------- a match's settings and players


def search_settings(
    cfg: RunConfig,
    readouts: int | None = None,
    softpick_moves: int | None = None,
    resign_threshold: float | None = None,
) -> SearchSettings:
    """The models' search in a match: the config's `evaluate` settings, overridden by those given."""
    e = cfg.evaluate
    search = SearchSettings(
        readouts=e.readouts if readouts is None else readouts,
        softpick_moves=e.softpick_moves if softpick_moves is None else softpick_moves,
        resign_threshold=cfg.selfplay.resign_threshold if resign_threshold is None else resign_threshold,
    )
    if search.readouts < 1:
        raise UsageError("--readouts must be at least 1")
    return search


def resolve_players(
    cfg: RunConfig, player: str | None, opponent: str, generation: int | None, root: str
) -> tuple[ResolvedPlayer, ResolvedPlayer]:
    """The evaluated player (default: the generation's model) and its opponent, from their specs."""
    player_text = player
    if player_text is None:
        if generation is None:
            raise UsageError("give --generation G (the player is then {root}/models/genG) or --player SPEC")
        player_text = f"gen{generation}"
    try:
        return (
            resolve_spec(player_text, root, generation, cfg.evaluate.gnugo),
            resolve_spec(opponent, root, generation, cfg.evaluate.gnugo),
        )
    except PlayerError as exc:
        raise UsageError(str(exc)) from None
