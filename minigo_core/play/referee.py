"""The referee: one game between two players (`referee_game`), a series of them with colours alternating
(`play_match`), their seeds, and what each side's moves cost in time.

A game ends on two passes (scored), a resignation, an illegal move from an outside program (a forfeit), a
side losing on time (with a clock), or the move cap of 2 N^2 moves (scored). Scoring is Tromp-Taylor
(`go.Position.score`, area, no dead-stone removal, komi to White). When a player is a GTP program (GNU Go)
that answers `final_score`, its own count is recorded too, with `scores_agree` (same winner); GNU Go runs
with `--capture-all-dead`, so on finished games the two agree.

Seeds. A match's seed derives from (run seed, generation, both players' names) (`match_seed`), each game's
two players' seeds from it and the game's index (`game_seeds`): stable across machines and Python versions, so
re-running a match reproduces it, and E games are E different samples.

Time per move. The referee times every genmove (wall clock, `time.perf_counter`; and this process's CPU,
`time.process_time`): each game records per colour the moves, mean and 95th percentile (`move_times`), and
`MoveTimes` gathers a side's over a match. An outside program (GNU Go, Pachi, any GTP program) runs in its own
process: its CPU comes from /proc (`program_cpu_seconds`). These are measurements: the comparison of two runs
(`data/compare.py`) leaves them out.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from minigo_core.data.matchfile import POINTS
from minigo_core.game import coords, go
from minigo_core.game.result import parse_score, result_string
from minigo_core.play.player import RESIGN, Player
from minigo_core.play.timecontrol import Clock, TimeSettings


@dataclass(frozen=True)
class MatchSettings:
    """A series of games between two players: how many, the board and komi, the seed of its games (game i:
    `game_seeds(seed, i)`; a match of `minigo evaluate` derives it with `match_seed`), whether it stops once
    decided (`decided`), and the move cap (None: 2 N^2)."""

    games: int
    board_size: int
    komi: float
    seed: int
    early_stop: bool = False
    max_moves: int | None = None


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


def referee_game(
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
    own_scores: dict[str, str] = {}
    agree = None
    if ending in ("score", "move_cap"):
        score = position.score()
        winner = 1 if score > 0 else -1 if score < 0 else 0
        result = result_string(score)
        same_name = black.name == white.name
        for p, colour in ((black, "black"), (white, "white")) if black is not white else ((black, "black"),):
            text = p.final_score()
            if text is not None:
                own_scores[f"{p.name} ({colour})" if same_name else p.name] = text
        if own_scores:
            values = [parse_score(t) for t in own_scores.values()]
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
        "engine_scores": own_scores,
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


def match_seed(run_seed: int, generation: int | None, player: str, opponent: str) -> int:
    """A 64-bit seed from (run seed, generation, both names): stable across machines and Python versions."""
    key = [int(run_seed), int(generation or 0), zlib.crc32(player.encode()), zlib.crc32(opponent.encode())]
    return int(np.random.SeedSequence(key).generate_state(2, np.uint64)[0])


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """Seeds for the two players of game `index` (Black's, White's)."""
    a, b = np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(2, np.uint64)
    return int(a), int(b)


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
    match: MatchSettings,
    progress: Callable[[int, dict], None] | None = None,
    times: dict[str, MoveTimes] | None = None,
) -> tuple[list[dict], bool]:
    """Play up to `match.games` games, colours alternating (the player takes Black in even-numbered games),
    game i seeded by `game_seeds(match.seed, i)`; returns (game records, stopped early: `match.early_stop`
    and `decided`). With `times` ({"player": MoveTimes, "opponent": ...}) each side's genmove times are added
    there."""
    games = match.games
    records: list[dict] = []
    for i in range(games):
        player_black = i % 2 == 0
        black, white = (player, opponent) if player_black else (opponent, player)
        seeds = game_seeds(match.seed, i)
        side = "player" if player_black else "opponent"
        other = "opponent" if player_black else "player"
        by_colour = None if times is None else {go.BLACK: times[side], go.WHITE: times[other]}
        game = referee_game(
            black, white, match.board_size, match.komi, seeds, match.max_moves, times=by_colour
        )
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
        if match.early_stop and i + 1 < games and decided(score, i + 1, games) is not None:
            return records, True
    return records, False


def program_cpu_seconds(player: Player) -> float:
    """CPU seconds an outside program behind `player` (GNU Go, Pachi, a GTP program) has used so far, from
    /proc (0 for an in-process player, or where /proc is unreadable); read it before the player is closed."""
    own = getattr(player, "program_cpu_seconds", None)
    if callable(own):
        return float(own())
    client = getattr(player, "client", None)
    return float(client.cpu_seconds()) if client is not None and hasattr(client, "cpu_seconds") else 0.0


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (GNU Go) so far: what a match cost, also when
    it ran niced beside other jobs (`minigo status --breakdown` counts evaluations by it)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
