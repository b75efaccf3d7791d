"""Matches between two players (what `minigo evaluate` plays): the players made, the games refereed, the
results file and its totals.

E games, colours alternating (the player takes Black in even-numbered games), no root noise, fixed readouts
(`evaluate.readouts`); the first `evaluate.softpick_moves` moves of each game are drawn in proportion to visit
counts with a seed derived from (run seed, generation, both players' names, game index), so E games are E
different samples and re-running a match reproduces it. The games are the referee's (`play.referee`: how a
game ends and is scored, the seeds, the times); a model side may search by a time budget a move instead, or
get the opponent's measured time (`play.equal_time`).

Results file (`minigo_core.data.matchfile`; JSON, written atomically): the players, the settings, one
record per game (moves as GTP vertices, result such as `B+3.5` / `W+R`, winner, how it ended, scores) and the
totals: wins, the win rate of the player (draws count half), its 95% Wilson interval and the Elo difference it
implies. With early stop (`evaluate.early_stop`) the match ends once the player's win rate is sure to be above
50% or sure not to be, whatever the remaining games would give. Each game can be exported as SGF
(`export_sgf`).
"""

from __future__ import annotations

import datetime as dt
import math
import sys
import time
from dataclasses import replace
from typing import Any

from minigo_core.base.command import UsageError
from minigo_core.base.config import RunConfig, SearchSettings, play_settings
from minigo_core.base.elo import elo_difference, wilson_interval
from minigo_core.data import storage
from minigo_core.data.matchfile import ENDINGS, MATCH_FORMAT, MATCH_FORMAT_VERSION
from minigo_core.game import coords, sgf
from minigo_core.play.equal_time import (
    EqualTime,
    cpu_meter,
    follow_opponent_time,
    give_equal_time,
    probe_seed,
    time_budget,
    time_per_move,
)
from minigo_core.play.players import PlayerError, PlayerSetup, ResolvedPlayer, resolve_spec
from minigo_core.play.referee import (
    MatchSettings,
    MoveTimes,
    cpu_seconds,
    decided,
    play_match,
    program_cpu_seconds,
)


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
    match: MatchSettings,
    setup: PlayerSetup,
    *,
    opponent_search: SearchSettings | None = None,
    generation: int | None = None,
    equal_time: EqualTime | None = None,
    log: Any = sys.stderr,
) -> dict:
    """Create both players (`setup`; the opponent, when a model, searches as `opponent_search`, default
    `setup.search`), play the match, return the results dict (see the module docstring). `match.seed` is the
    match's own (`referee.match_seed` of the run seed, `generation` and both names).

    A model side whose settings have a `move_time` searches by that budget per move. With `equal_time` the
    player (a model) first plays its `probe_games` probe games at its fixed readouts against the opponent
    (`equal_time.measure_time_per_move`), then the match with the opponent's mean time per move on its
    `clock` (cpu or wall) as its budget (`setup.search.max_readouts` its ceiling)."""
    started, cpu0 = time.time(), cpu_seconds()
    nets: dict = {}
    search = setup.search
    player = setup.make(player_spec, nets=nets)
    try:
        opponent = setup.make(opponent_spec, opponent_search, nets=nets)
    except BaseException:
        player.close()
        raise

    def progress(i: int, g: dict) -> None:
        print(
            f"game {i + 1}/{match.games}: {g['black_name']} (B) vs {g['white_name']} (W): {g['result']} "
            f"({g['ended_by']}, {len(g['moves'])} moves, {g['seconds']:.1f} s)",
            file=log,
            flush=True,
        )

    times = {"player": MoveTimes(), "opponent": MoveTimes()}
    measured = None
    after_game = progress
    try:
        if equal_time is not None:
            probe = replace(
                match, games=equal_time.probe_games, seed=probe_seed(match.seed), early_stop=False
            )
            measured = give_equal_time(player, opponent, probe, log=log, clock=equal_time.clock)
            spent = cpu_meter(opponent, times["opponent"])
            after_game = follow_opponent_time(player, times["opponent"], measured, progress, spent)
        budget = time_budget(player, opponent, measured)  # the first game's budget (equal time: the probe's)
        program_cpu0 = {"player": program_cpu_seconds(player), "opponent": program_cpu_seconds(opponent)}
        records, stopped = play_match(player, opponent, match, after_game, times)
        for side, p in (("player", player), ("opponent", opponent)):
            times[side].cpu += program_cpu_seconds(p) - program_cpu0[side]  # an outside program's own CPU
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
        "board_size": match.board_size,
        "komi": match.komi,
        "readouts": search.readouts,
        "softpick_moves": search.softpick_moves,
        "resign_threshold": search.resign_threshold,
        **budget,
        "max_moves": 2 * match.board_size * match.board_size if match.max_moves is None else match.max_moves,
        "seed": match.seed,
        "early_stop": match.early_stop,
        "early_stopped": stopped,
        "games": records,
        "totals": totals(records, match.games),
        "time_per_move": time_per_move(times, info[0]["name"], info[1]["name"], log),
        "started_unix": started,
        "finished_unix": finished,
        "started_at": dt.datetime.fromtimestamp(started, dt.timezone.utc).isoformat(timespec="seconds"),
        "finished_at": dt.datetime.fromtimestamp(finished, dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(finished - started, 3),
        "cpu_seconds": round(cpu_seconds() - cpu0, 3),
        "startup_cpu_seconds": round(cpu0, 3),  # the process's CPU before the first game: imports, loading
    }


def equal_time_words(equal_time: dict | None) -> str:
    """`equal CPU time: ` / `equal time: ` (the wall clock's) before a timed match's budget; none without."""
    if not equal_time:
        return ""
    return "equal CPU time: " if equal_time.get("clock") == "cpu" else "equal time: "


def summary_line(results: dict) -> str:
    t = results["totals"]
    lo, hi = t["ci95"]
    rate = t["win_rate"]
    stop = " (stopped early: decided)" if results["early_stopped"] else ""
    if rate is None:
        return "no games played"
    draws = f"-{t['draws']}" if t["draws"] else ""
    timed, equal = results.get("move_time_ms"), results.get("equal_time") or {}
    final = equal.get("final_move_time_ms")
    if timed is None:
        budget = ""
    elif final is not None and final != timed:  # followed the opponent: where it ended, from the probe's
        budget = f" ({equal_time_words(equal)}{final:g} ms a move at the end, {timed:g} from the probe)"
    else:
        budget = f" ({equal_time_words(equal)}{timed:g} ms a move)"
    return (
        f"{results['player']['name']} vs {results['opponent']['name']}{budget}: {t['player_wins']}-"
        f"{t['opponent_wins']}{draws} in {t['games']} games{stop}; win rate {rate:.3f} "
        f"[95% {lo:.3f}, {hi:.3f}]"
    )


# ----------------------------------------------------------------------------- a match's settings and players


def match_search(
    cfg: RunConfig,
    readouts: int | None = None,
    softpick_moves: int | None = None,
    resign_threshold: float | None = None,
) -> SearchSettings:
    """The models' search in a match: the run config's (`config.play_settings`) at its `evaluate` readouts
    and softpick moves, overridden by those given."""
    e = cfg.evaluate
    readouts = e.readouts if readouts is None else readouts
    if readouts < 1:
        raise UsageError("--readouts must be at least 1")
    return replace(
        play_settings(cfg, readouts),
        softpick_moves=e.softpick_moves if softpick_moves is None else softpick_moves,
        resign_threshold=cfg.selfplay.resign_threshold if resign_threshold is None else resign_threshold,
    )


def player_setup(cfg: RunConfig | None) -> PlayerSetup:
    """How a player is made under the run config `cfg` (`minigo ladder`): a model with the match search
    (`match_search`), the model's backend, self-play's threads, and the config's GNU Go; without a config,
    `PlayerSetup`'s defaults."""
    if cfg is None:
        return PlayerSetup()
    return PlayerSetup(match_search(cfg), cfg.model.backend, cfg.selfplay.threads, cfg.evaluate.gnugo)


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
