"""`minigo run --budget 55m`: stop starting generations in time for the last one's matches.

A run's config fixes its generations, and with them its bytes. A budget is for a machine whose speed is not
known in advance: the run goes on as configured, and while it runs, the launcher watches the models arrive.
Generation G+1 is under way once model G exists (its games by model G, with `selfplay.model_lag` 1, or its
window and training); it will be done about one generation's time after model G (the median of the last
three intervals between models). When that is later than the budget less the reserve (the time the last
generation's matches and rating take: `--reserve`, default 15% of the budget), the launcher stops Snakemake
and runs it again with `generations` set to G (Snakemake's `--config`), so that G becomes the last
generation and gets the final matches. The generations the run did play are the same bytes as without a
budget; only their count depends on the machine. The effective config in the run root then says G.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from dataclasses import dataclass

from minigo_core.base.config import ConfigError, RunConfig
from minigo_core.data import layout

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(h|m|min|s)?\s*$")
_UNIT_S = {"h": 3600.0, "m": 60.0, "min": 60.0, "s": 1.0, None: 1.0}
DEFAULT_RESERVE = 0.15  # of the budget, for the last generation's matches and rating


def parse_duration(text: str, option: str = "--budget") -> float:
    """Seconds of a duration written `55m`, `1h`, `90s` or `3300` (seconds); ConfigError naming `option`."""
    m = _DURATION.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise ConfigError(f"{option} {text!r}: give a positive duration such as 55m, 1h, 90s or 3300 (in s)")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def model_times(root: str) -> list[float]:
    """The modification times of models 0, 1, ... (as long as they are contiguous)."""
    times, g = [], 0
    while True:
        try:
            times.append(os.stat(layout.model_path(root, g)).st_mtime)
        except OSError:
            return times
        g += 1


@dataclass
class Budget:
    seconds: float
    reserve: float
    start: float

    @property
    def deadline(self) -> float:
        """When the last generation's model must exist: the budget less the reserve."""
        return self.start + self.seconds - self.reserve

    def last_generation(self, cfg: RunConfig, now: float | None = None) -> int | None:
        """The generation to end the run at now (the newest model, G >= 1), or None to go on: the run has
        fewer than three models, ends before the next one anyway, or the next one arrives in time."""
        times = model_times(cfg.root)
        last = len(times) - 1
        if last < 2 or last >= cfg.generations:
            return None
        per_generation = statistics.median([b - a for a, b in zip(times, times[1:], strict=False)][-3:])
        expected_next = max(times[-1], self.start) + per_generation
        if expected_next <= self.deadline and (now or time.time()) <= self.deadline:
            return None
        return last


def budget_from_args(budget: str | None, reserve: str | None, start: float) -> Budget | None:
    """The `--budget` / `--reserve` options as a Budget (None without `--budget`)."""
    if budget is None:
        if reserve is not None:
            raise ConfigError("--reserve needs --budget")
        return None
    seconds = parse_duration(budget)
    kept = parse_duration(reserve, "--reserve") if reserve is not None else DEFAULT_RESERVE * seconds
    if kept >= seconds:
        raise ConfigError(f"--reserve {reserve!r} must be shorter than --budget {budget!r}")
    return Budget(seconds, kept, start)


def shortened(cfg: RunConfig, generations: int) -> list[str]:
    """Snakemake's options that end the run at `generations` (what the launcher adds to its command)."""
    if not 1 <= generations <= cfg.generations:
        raise ValueError(f"cannot end a run of {cfg.generations} generations at {generations}")
    return ["--config", f"generations={generations}"]
