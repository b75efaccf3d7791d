"""Game clocks and the per-move time budget: what `time_settings`, `kgs-time_settings` and `time_left` mean.

Kinds of clock (GTP 2 section 4.2; kgsGtp's `kgs-time_settings`):

- `none`: no limit; the search is by readouts.
- `absolute M`: M seconds for the whole game (sudden death).
- `canadian M T S`: after the main time, T seconds for every S stones.
- `byoyomi M T P`: after the main time, P periods of T seconds; a move made within a period keeps it,
  a period used up is lost (the last one lost loses the game).

GTP's `time_settings M T S` is `absolute M` when T = 0, `none` when T > 0 and S = 0, else `canadian M T S`.
`time_left C t s`: s = 0 means C is in main time with t seconds left; s > 0 means C is in overtime with t
seconds left in the period (canadian: for s stones; byo-yomi: kgsGtp sends the periods left as s).

The budget rule (`move_budget`), for the GTP server's own clock, all in seconds:

- main time: (main left - reserve) / expected own moves left, the expected moves being
  max(0.45 * N*N - moves played / 2, N*N / 8) (a 9x9 game lasts about 80 moves, 19x19 about 300);
  when overtime follows, at least the overtime budget below (time past the main time flows into it).
- canadian overtime: (period left - reserve) / stones left in the period.
- byo-yomi overtime: a fraction (`OVERTIME_SHARE`) of one period; the other periods stay in reserve.
- then the latency allowance (the GTP round trip and the move's fixed costs; at most half the plan) is taken
  off, and the budget never goes below `MIN_BUDGET` (the search's floor is one chunk of readouts anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("none", "absolute", "canadian", "byoyomi")
RESERVE_S = 1.0  # main or period time never planned away: the clock's safety margin
LATENCY_S = 0.1  # taken off every budget: the GTP round trip and the move's fixed costs
OVERTIME_SHARE = 0.75  # share of a byo-yomi period (or of a canadian stone's share) a move may plan to use
MIN_BUDGET = 0.02


class TimeSettingsError(ValueError):
    """Arguments of a time command that are not numbers of the right kind."""


@dataclass(frozen=True)
class TimeSettings:
    """A game's clock: `kind` (KINDS), main time, overtime period, stones per canadian period or byo-yomi
    periods."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    stones: int = 0  # canadian: stones per period
    periods: int = 0  # byo-yomi: periods

    @classmethod
    def from_gtp(cls, args: list[str]) -> TimeSettings:
        """GTP 2's `time_settings main_time byo_yomi_time byo_yomi_stones` (integers)."""
        main, period, stones = _numbers(args, 3, "time_settings main_time byo_yomi_time byo_yomi_stones")
        if period == 0:
            return cls("absolute", main)
        if stones == 0:
            return cls("none")
        return cls("canadian", main, period, stones=int(stones))

    @classmethod
    def from_kgs(cls, args: list[str]) -> TimeSettings:
        """kgsGtp's `kgs-time_settings none | absolute M | byoyomi M T P | canadian M T S`."""
        kind = args[0].lower() if args else ""
        usage = {"none": "", "absolute": "M", "byoyomi": "M T P", "canadian": "M T S"}
        if kind not in usage:
            raise TimeSettingsError("kgs-time_settings takes none, absolute, byoyomi or canadian")
        values = _numbers(args[1:], len(usage[kind].split()), f"kgs-time_settings {kind} {usage[kind]}")
        if kind == "none":
            return cls("none")
        if kind == "absolute":
            return cls("absolute", values[0])
        main, period, count = values
        if period == 0 or count == 0:  # no overtime after all
            return cls("absolute", main)
        if kind == "byoyomi":
            return cls("byoyomi", main, period, periods=int(count))
        return cls("canadian", main, period, stones=int(count))

    def gtp_command(self) -> str:
        """This clock as GTP 2's `time_settings` (byo-yomi as its last period: T seconds for one stone)."""
        if self.kind == "none":
            return "time_settings 0 1 0"
        if self.kind == "absolute":
            return f"time_settings {self.main:.0f} 0 0"
        return f"time_settings {self.main:.0f} {self.period:.0f} {self.stones or 1}"

    def kgs_command(self) -> str:
        """This clock as kgsGtp's `kgs-time_settings` command."""
        if self.kind in ("none", "absolute"):
            return f"kgs-time_settings {self.kind}" + ("" if self.kind == "none" else f" {self.main:g}")
        count = self.periods if self.kind == "byoyomi" else self.stones
        return f"kgs-time_settings {self.kind} {self.main:g} {self.period:g} {count}"


def _numbers(args: list[str], count: int, usage: str) -> list[float]:
    if len(args) != count:
        raise TimeSettingsError(f"expected {usage}")
    try:
        values = [float(a) for a in args]
    except ValueError:
        raise TimeSettingsError(f"expected {usage} (numbers)") from None
    if any(not 0 <= v < float("inf") for v in values):
        raise TimeSettingsError(f"expected {usage} (numbers >= 0)")
    return values


@dataclass
class Clock:
    """One side's clock: main time left, then overtime (the period's time and stones or periods left).

    The GTP server keeps its own from `time_left`; the referee runs one per side with `spend`."""

    settings: TimeSettings
    main_left: float = 0.0
    in_overtime: bool = False
    period_left: float = 0.0
    stones_left: int = 0  # canadian: stones still to play in this period
    periods_left: int = 0  # byo-yomi

    def __post_init__(self) -> None:
        self.main_left = self.settings.main
        self.period_left = self.settings.period
        self.stones_left = self.settings.stones
        self.periods_left = self.settings.periods
        self.in_overtime = self.settings.main <= 0 and self.settings.kind in ("canadian", "byoyomi")

    def time_left(self, seconds: float, stones: int) -> None:
        """GTP `time_left`: s = 0 main time left (0 0: main time over), s > 0 in overtime."""
        if stones == 0 and (seconds > 0 or self.settings.kind in ("none", "absolute")):
            self.main_left, self.in_overtime = seconds, False
            return
        self.main_left, self.in_overtime = 0.0, True
        if stones == 0:  # `0 0`: main time just ran out, a fresh period begins
            self.period_left = self.settings.period
            self.stones_left, self.periods_left = self.settings.stones, self.settings.periods
        elif self.settings.kind == "byoyomi":  # kgsGtp sends the periods left
            self.period_left, self.periods_left = seconds, stones
        else:
            self.period_left, self.stones_left = seconds, stones

    def gtp_time_left(self) -> tuple[float, int]:
        """The (time, stones) `time_left` reports for this clock."""
        if self.settings.kind in ("none", "absolute") or not self.in_overtime:
            return self.main_left, 0
        if self.settings.kind == "byoyomi":
            return self.period_left, self.periods_left
        return self.period_left, self.stones_left

    def spend(self, seconds: float) -> bool:
        """Charge one move's `seconds`; False when the side lost on time."""
        kind = self.settings.kind
        if kind == "none":
            return True
        if not self.in_overtime:
            if seconds <= self.main_left or kind == "absolute":
                self.main_left -= seconds
                return self.main_left >= 0
            seconds -= self.main_left
            self.main_left, self.in_overtime = 0.0, True
        if kind == "byoyomi":
            while seconds > self.settings.period and self.periods_left > 0:
                seconds -= self.settings.period
                self.periods_left -= 1
            return self.periods_left > 0  # the period used by this move is whole again for the next
        self.period_left -= seconds
        if self.period_left < 0:
            return False
        self.stones_left -= 1
        if self.stones_left <= 0:
            self.period_left, self.stones_left = self.settings.period, self.settings.stones
        return True


def expected_moves_left(board_size: int, moves_played: int) -> float:
    """The own moves still to come in a game of `moves_played` moves so far (see the module's rule)."""
    area = board_size * board_size
    return max(0.45 * area - moves_played / 2.0, area / 8.0)


def move_budget(clock: Clock, board_size: int, moves_played: int) -> float | None:
    """Seconds this move may search by the module's rule, or None without a clock (search by readouts)."""
    s = clock.settings
    if s.kind == "none":
        return None
    overtime = _overtime_budget(clock) if s.kind in ("canadian", "byoyomi") else 0.0
    if clock.in_overtime:
        plan = overtime
    else:
        plan = max(0.0, clock.main_left - RESERVE_S) / expected_moves_left(board_size, moves_played)
        plan = max(plan, overtime)
    return max(MIN_BUDGET, plan - min(LATENCY_S, plan / 2))


def _overtime_budget(clock: Clock) -> float:
    s = clock.settings
    period = clock.period_left if clock.in_overtime else s.period
    if s.kind == "byoyomi":
        return OVERTIME_SHARE * s.period
    stones = clock.stones_left if clock.in_overtime else s.stones
    return OVERTIME_SHARE * max(0.0, period - min(RESERVE_S, period / 4)) / max(1, stones)
