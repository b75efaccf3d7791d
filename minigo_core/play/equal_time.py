"""Time per move in a match: what each side took (`time_per_move`), a model's budget a move (`time_budget`),
and equal time (`give_equal_time`).

A model can search by a time budget per move instead of fixed readouts (`SearchSettings.move_time`,
`timed_search.search_for`: growing chunks of readouts on the kept tree until the next chunk would overrun the
budget; at least the first chunk, `SearchSettings.chunk_readouts` readouts or Gumbel's considered moves, at
most `max_readouts`). `minigo evaluate --move-time MS` gives every model side MS milliseconds a move;
`--equal-time` gives the player the opponent's measured time per move on this machine
(`measure_time_per_move`: the opponent's mean time a genmove in a short probe before the match, then after
each game over the probe and the match so far: `follow_opponent_time`), the opponent playing as it always
does. Such games depend on the machine's speed and load: a rerun plays other games, and the results file says
so (`"reproducible": false`); matches by fixed readouts replay exactly.

Equal time is CPU time by default (`--equal-time-clock cpu`, `EQUAL_TIME_CLOCK`): the opponent's CPU seconds a
genmove (an outside program's process CPU from /proc, `referee.program_cpu_seconds`; an in-process player's
CPU during its genmoves) become the model's budget of this process's CPU time (`SearchSettings.move_clock`).
On a machine busy with other jobs (a run's last jobs, a shared node) both sides then get the same computing a
move, however the scheduler shares the cores, where wall time would hand the model whatever the load gave the
opponent's moves; and the match costs the same CPU whatever the load. `--equal-time-clock wall` measures and
searches by the wall clock (the opponent's genmove round trip as the referee sees it).

The match per side (`time_per_move`: player and opponent, by name) records the genmoves' mean and 95th
percentile wall seconds over all its games and the side's CPU seconds: this process's CPU during the side's
genmoves plus, for an outside program, its process's CPU over the match (`referee.program_cpu_seconds`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from minigo_core.base.command import UsageError
from minigo_core.play.players import ModelPlayer, Player, PlayerError
from minigo_core.play.referee import MatchSettings, MoveTimes, play_match, program_cpu_seconds

CLOCKS = ("cpu", "wall")  # what equal time measures and the model's budget runs on (`--equal-time-clock`)
EQUAL_TIME_CLOCK = "cpu"
EQUAL_TIME_PROBE_GAMES = 2  # games of the probe that measures the opponent's time per move (`--equal-time`)


@dataclass(frozen=True)
class EqualTime:
    """A match at equal time per move: the probe's games, and the clock both the probe and the model's
    budget are on (`CLOCKS`)."""

    probe_games: int = EQUAL_TIME_PROBE_GAMES
    clock: str = EQUAL_TIME_CLOCK


def time_per_move(times: dict[str, MoveTimes], player: str, opponent: str, log: Any = None) -> dict:
    """The results file's `time_per_move`: per side its name, genmoves, their mean and 95th-percentile wall
    seconds, and its CPU seconds (`MoveTimes.cpu`: in-process genmove CPU plus an outside program's); each
    side also said on `log`."""
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


def cpu_meter(opponent: Player, times: MoveTimes) -> Callable[[], float]:
    """The opponent's CPU seconds from now on: its genmoves' in-process CPU (`times.cpu`, as the referee adds
    it) and an outside program's process CPU (GNU Go: its genmoves and the little it does between them)."""
    own0, program0 = times.cpu, program_cpu_seconds(opponent)
    return lambda: times.cpu - own0 + program_cpu_seconds(opponent) - program0


def follow_opponent_time(
    player: Player,
    opponent_times: MoveTimes,
    equal_time: dict,
    progress: Callable[[int, dict], None],
    spent: Callable[[], float] | None = None,
) -> Callable[[int, dict], None]:
    """`--equal-time` through the match: after each game the player's budget becomes the opponent's mean time
    per move over the probe and the match's games so far, so a probe that met a busier (or idler) machine than
    the match does not decide the budget alone: wall time from `opponent_times`, or with `equal_time`'s clock
    cpu the opponent's CPU seconds in the match so far (`spent`, a `cpu_meter`). Each game's record says the
    budget it was played with (`move_time_ms`); `equal_time` gains `follows` (the rule) and
    `final_move_time_ms`."""
    cpu = equal_time.get("clock", "wall") == "cpu"
    if cpu and spent is None:
        raise ValueError("follow_opponent_time: CPU-time equal time needs the opponent's CPU meter (spent)")
    probe_n = int(equal_time["measured_over_moves"])
    probe_sum = float(equal_time["opponent_mean_s"]) * probe_n
    equal_time["follows"] = "after each game: the opponent's mean time per move over the probe and the match"
    equal_time["final_move_time_ms"] = equal_time["move_time_ms"]

    def after(i: int, game: dict) -> None:
        game["move_time_ms"] = equal_time["final_move_time_ms"]
        progress(i, game)
        total = spent() if cpu else sum(opponent_times.wall)
        mean = (probe_sum + total) / (probe_n + len(opponent_times.wall))
        budget_ms = round(max(mean, 1e-6) * 1000.0, 3)
        player.search = replace(player.search, move_time=budget_ms / 1000.0)
        equal_time["final_move_time_ms"] = budget_ms

    return after


def give_equal_time(
    player: Player, opponent: Player, probe: MatchSettings, log: Any = None, clock: str = EQUAL_TIME_CLOCK
) -> dict:
    """`--equal-time`: measure the opponent's time per move on `clock` (`measure_time_per_move`), then make it
    the player's budget per move (`SearchSettings.move_time` on `move_clock` `clock`); returns the
    measurement. UsageError when the player is not a model or the clock is not one of `CLOCKS`."""
    if not isinstance(player, ModelPlayer):
        raise UsageError(
            f"--equal-time: the player {player.name} is not a model; only a model searches by a time budget "
            "per move"
        )
    if clock not in CLOCKS:
        raise UsageError(f"--equal-time-clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    equal_time = measure_time_per_move(player, opponent, probe, clock)
    player.search = replace(player.search, move_time=equal_time["move_time_ms"] / 1000.0, move_clock=clock)
    if log is not None:
        print(
            f"equal time ({clock}): {opponent.name} took {equal_time['opponent_mean_s'] * 1000:.1f} ms of "
            f"{clock} time a move over {equal_time['measured_over_moves']} moves (wall "
            f"{equal_time['opponent_mean_wall_s'] * 1000:.1f} ms); {player.name} searches "
            f"{equal_time['move_time_ms']:g} ms of {clock} time a move",
            file=log,
            flush=True,
        )
    return equal_time


NOT_REPRODUCIBLE = (
    "time-budgeted search: how many readouts a move gets depends on this machine's speed and load, so a "
    "rerun plays other games"
)


def probe_seed(match_seed: int) -> int:
    """The seed of an equal-time probe's games: derived from the match's, and not any of its games' seeds."""
    return int(np.random.SeedSequence([match_seed, 0x70BE]).generate_state(1, np.uint64)[0])


# Below this share of its genmoves' wall time in CPU time, an outside program waits rather than computes (or
# its CPU time cannot be read): equal CPU time would give the model almost nothing. /proc counts in 10 ms
# ticks, so a sleeping program may still show a tick or two; a computing one shows about its wall time.
WAITING_CPU_FRACTION = 0.1


def measure_time_per_move(
    player: Player, opponent: Player, probe: MatchSettings, clock: str = "wall"
) -> dict:
    """The opponent's time per move on this machine, for `--equal-time`: `probe.games` probe games (colours
    alternating, seeded by `probe.seed` (`probe_seed`), not counted in the match) of the opponent against
    `player` as it is set up (a model: its fixed readouts), timing every genmove of the opponent as the
    referee sees it (wall clock from the genmove's call to its answer: an outside program's pipe round trip
    included, as it is for every move of the match) and its CPU seconds (as `cpu_meter` counts them). The
    budget is the mean on `clock` (cpu: CPU seconds a genmove; wall: wall seconds), in whole microseconds:
    `move_time_ms`.

    Measured in the same process, on the same machine and under the same load as the match that follows, so
    both sides' moves are timed alike; the results file's `time_per_move` then shows how close the two sides'
    means came. PlayerError when the opponent made no move in the probe (nothing to measure), or, on the cpu
    clock, is an outside program whose process used less CPU time than `WAITING_CPU_FRACTION` of its
    genmoves' wall time."""
    times = {"player": MoveTimes(), "opponent": MoveTimes()}
    spent = cpu_meter(opponent, times["opponent"])
    play_match(player, opponent, replace(probe, early_stop=False), times=times)
    measured, total_cpu = times["opponent"], spent()
    program = total_cpu - measured.cpu  # the outside program's own CPU in the probe
    if not measured.wall:
        raise PlayerError(
            f"--equal-time: {opponent.name} made no move in {probe.games} probe games; nothing to measure"
        )
    genmove_wall = float(np.sum(measured.wall))
    if (
        clock == "cpu"
        and program < WAITING_CPU_FRACTION * genmove_wall
        and getattr(opponent, "client", None) is not None
    ):
        raise PlayerError(
            f"--equal-time: {opponent.name}'s process used {program * 1000:.0f} ms of CPU time that could be "
            f"read over {genmove_wall * 1000:.0f} ms of genmoves in {probe.games} probe games (under "
            f"{WAITING_CPU_FRACTION:.0%}: no /proc here, or a program that waits rather than computes, such "
            "as one searching on a GPU or a server); use --equal-time-clock wall"
        )
    wall, cpu = float(np.mean(measured.wall)), total_cpu / len(measured.wall)
    mean = cpu if clock == "cpu" else wall
    return {
        "clock": clock,
        "opponent_mean_s": round(mean, 6),
        "opponent_mean_wall_s": round(wall, 6),
        "opponent_mean_cpu_s": round(cpu, 6),
        "opponent_p95_s": measured.summary()["p95_s"],
        "measured_over_moves": len(measured.wall),
        "probe_games": probe.games,
        "move_time_ms": round(max(mean, 1e-6) * 1000.0, 3),
        "how": HOW[clock],
    }


HOW = {
    "cpu": "the opponent's mean CPU time a genmove in the probe games against the player at its fixed "
    "readouts, on this machine, just before the match; the player searches as long in its own CPU time",
    "wall": "the mean wall time of the opponent's genmoves in the probe games against the player at its "
    "fixed readouts, on this machine, just before the match",
}
