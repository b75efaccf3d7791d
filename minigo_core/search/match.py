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
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
import time
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from minigo_core.base.command import UsageError
from minigo_core.base.config import RunConfig
from minigo_core.base.elo import elo_difference, wilson_interval
from minigo_core.data import storage
from minigo_core.data.matchfile import ENDINGS, MATCH_FORMAT, MATCH_FORMAT_VERSION, POINTS
from minigo_core.game import coords, go, sgf
from minigo_core.game.result import parse_score, result_string
from minigo_core.search.players import (
    RESIGN,
    Player,
    PlayerError,
    ResolvedPlayer,
    SearchSettings,
    make_player,
    resolve_spec,
)
from minigo_core.search.timecontrol import Clock, TimeSettings

# ------------------------------------------------------------------------------------------------- one game


def play_game(
    black: Player,
    white: Player,
    board_size: int,
    komi: float,
    seeds: tuple[int, int],
    max_moves: int | None = None,
    clock: TimeSettings | None = None,
) -> dict:
    """Referee one game; returns its record (moves as GTP vertices, result, winner colour, ending, scores).

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
        started = time.perf_counter()
        move = mover.genmove(position)
        if clocks is not None and not clocks[position.to_play].spend(time.perf_counter() - started):
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
    elif ending == "time":
        result = ("B+" if winner > 0 else "W+") + "T"
    else:
        result = result_string(winner=winner, reason="resign" if ending == "resign" else "forfeit")
    record = {
        "moves": [coords.to_gtp(m, board_size) for m in moves],
        "result": result,
        "winner_colour": {1: "black", -1: "white", 0: "draw"}[winner],
        "ended_by": ending,
        "score": score,
        "engine_scores": engine_scores,
        "scores_agree": agree,
        "seconds": round(time.perf_counter() - t0, 3),
    }
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
) -> tuple[list[dict], bool]:
    """Play up to `games` games, colours alternating; returns (game records, stopped early)."""
    records: list[dict] = []
    for i in range(games):
        player_black = i % 2 == 0
        black, white = (player, opponent) if player_black else (opponent, player)
        seeds = game_seeds(seed, i)
        game = play_game(black, white, board_size, komi, seeds, max_moves)
        side = "player" if player_black else "opponent"
        other = "opponent" if player_black else "player"
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
    paths = []
    for game in results["games"]:
        url = storage.join(out_dir, f"game{game['index']:03d}.sgf")
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
    log: Any = sys.stderr,
) -> dict:
    """Create both players, play the match, return the results dict (see the module docstring)."""
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

    try:
        records, stopped = play_match(
            player, opponent, games, board_size, komi, seed_used, early_stop, max_moves, progress
        )
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
        "max_moves": 2 * board_size * board_size if max_moves is None else max_moves,
        "seed": seed_used,
        "early_stop": early_stop,
        "early_stopped": stopped,
        "games": records,
        "totals": totals(records, games),
        "started_unix": started,
        "finished_unix": finished,
        "started_at": dt.datetime.fromtimestamp(started, dt.timezone.utc).isoformat(timespec="seconds"),
        "finished_at": dt.datetime.fromtimestamp(finished, dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(finished - started, 3),
        "cpu_seconds": round(cpu_seconds() - cpu0, 3),
        "startup_cpu_seconds": round(cpu0, 3),  # the process's CPU before the first game: imports, loading
    }


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
    return (
        f"{results['player']['name']} vs {results['opponent']['name']}: {t['player_wins']}-"
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
