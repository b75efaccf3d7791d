"""The live status line of `minigo run`: one line instead of one line per Snakemake job.

    gen 7/24 · jobs 45/120 · 5:12 elapsed · ~12:30 left · Elo 758 [663, 855], between uct:512 and ... (gen 6)

- gen: the highest generation whose model file exists, of the run's `generations`;
- jobs: done/total of the current Snakemake invocation (its "N of M steps (P%) done" lines);
- elapsed: since `minigo run` started; left: the average wall time of the generations finished under this
  command times the generations still to do ("estimating" until one has finished);
- the newest generation's strength: its rating on the fixed Elo ladder when one was rated
  (`eval/genGGGG/ladder.json`: `Elo 1230 [1180, 1280], between uct:4096 and gnugo:1 (gen 40)`), or, until
  that is written, its first rating of a few games (`ladder_first.json`: `... (gen 40, first rating)`),
  which the workflow plays as soon as the model exists; without a ladder, its Elo against GNU Go: a
  Bradley-Terry fit (`minigo_core.rating.bradley_terry`) of every evaluation file of the run, anchored at
  the GNU Go level, with its 95% interval; without a GNU Go match, the newest win rate against another
  opponent.

`RunProgress` holds that state: it is fed Snakemake's lines and the clock, polls the run's files (models
every few seconds, evaluation files at most every 10 s and only re-read when their names or times changed)
and renders the line to a width, dropping the least important parts first. `ProgressDisplay` shows it:
`live` redraws it in place on a terminal (at most twice a second, a timer thread keeps the clock ticking),
`lines` prints it as a plain line when the generation changes or at most once a minute (logs, CI, nohup),
`none` shows no status. In every mode Snakemake's error lines (`SHOWN`) are printed on their own line.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from minigo_core.base.elo import wilson_interval
from minigo_core.data import layout, storage
from minigo_core.data.matchfile import MatchSummary, read_match
from minigo_core.rating.bradley_terry import fit_bradley_terry, generation_of, sorted_players
from minigo_core.report.fixed_scale import generation_label, rating_text, read_rating
from minigo_core.report.status import format_duration

PROGRESS = re.compile(r"^(\d+) of (\d+) steps \((\d+%)\) done")
JOB_TOTAL = re.compile(r"^total\s+(\d+)\s*$")  # the last row of Snakemake's "Job stats:" table
SHOWN = re.compile(
    r"^(minigo: |Error in rule|Exiting because|WorkflowError|MissingInput|LockException|"
    r"    message:|Logfile |IncompleteFilesException|.*Directory cannot be locked)"
)
MODES = ("live", "lines", "none")
CLEAR = "\r\x1b[K"  # to the line's start, erase to its end
MODEL_POLL_S = 2.0
EVAL_POLL_S = 10.0
REDRAW_S = 0.5
LINE_EVERY_S = 60.0
_MODEL_NAME = re.compile(r"gen(\d+)" + re.escape(layout.MODEL_SUFFIX))


# ------------------------------------------------------------------------------------------- formatting


def player_label(name: str) -> str:
    """`gnugo:1` -> `GNU Go 1`; other players keep their name."""
    return f"GNU Go {name[6:]}" if name.startswith("gnugo:") else name


def format_elo(
    opponent: str, elo: float, low: float, high: float, generation: int, short: bool = False
) -> str:
    """`GNU Go 1: -320 Elo [-410, -230] (gen 6)`, or without the interval when `short`."""
    interval = "" if short else f" [{low:.0f}, {high:.0f}]"
    return f"{player_label(opponent)}: {elo:+.0f} Elo{interval} (gen {generation})"


def format_win_rate(
    opponent: str, rate: float, low: float, high: float, generation: int, short: bool = False
) -> str:
    """`vs gen0: 62% [48%, 75%] (gen 6)`, or without the interval when `short`."""
    interval = "" if short else f" [{100 * low:.0f}%, {100 * high:.0f}%]"
    return f"vs {player_label(opponent)}: {100 * rate:.0f}%{interval} (gen {generation})"


def fit_parts(parts: list[tuple[int, list[str]]], width: int, separator: str) -> str:
    """Join the parts that fit in `width` characters. Each part is (priority, variants longest first):
    while the line is too long, the part of the lowest priority takes its next variant, or goes when it
    has none left; the last part standing is cut."""
    chosen = [[priority, variants, 0] for priority, variants in parts if variants]

    def text() -> str:
        return separator.join(variants[index] for _, variants, index in chosen)

    while len(text()) > width and len(chosen) > 1:
        least = min(chosen, key=lambda part: part[0])
        if least[2] + 1 < len(least[1]):
            least[2] += 1
        else:
            chosen.remove(least)
    return text()[: max(0, width)]


def separator_for(stream: TextIO) -> str:
    """` · ` where the stream's encoding has the dot, else ` | `."""
    try:
        " · ".encode(getattr(stream, "encoding", None) or "utf-8")  # (no encoding: a str buffer)
    except (LookupError, UnicodeEncodeError):
        return " | "
    return " · "


# ---------------------------------------------------------------------------------- reading the run


def latest_model(root: str, generations: int, known: int | None = None) -> int | None:
    """The highest generation <= `generations` whose model file exists. Models are written in order: from
    a `known` one this scans up (one `exists` call while nothing new appeared); without, it lists the
    models' folder once."""
    if known is None:
        names = [
            os.path.basename(url) for url in storage.list_files(layout.models_dir(root), layout.MODEL_SUFFIX)
        ]
        found = [int(m.group(1)) for m in map(_MODEL_NAME.fullmatch, names) if m]
        known = max((g for g in found if g <= generations), default=None)
        if known is None:
            return None
    g = known
    while g < generations and storage.exists(layout.model_path(root, g + 1)):
        g += 1
    return g


def _entry_time(info: dict) -> float | None:
    value = info.get("mtime") or info.get("LastModified") or info.get("created")
    return value.timestamp() if hasattr(value, "timestamp") else (float(value) if value is not None else None)


RATING_FILES = (layout.LADDER_RATING, layout.LADDER_FIRST_RATING)


def eval_file_times(root: str) -> dict[str, float | None]:
    """Every finished results file `{root}/eval/genGGGG/vs_*.json` and ladder rating (`ladder.json`,
    `ladder_first.json`) with its modification time, from one listing per generation folder (no `stat` per
    file)."""
    eval_root = layout.evals_dir(root)
    fs, path = storage.fs_and_path(eval_root)
    try:
        folders = fs.ls(path, detail=True)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    out: dict[str, float | None] = {}
    for folder in folders:
        name = os.path.basename(folder["name"].rstrip("/"))
        if folder.get("type") != "directory" or not re.fullmatch(r"gen\d+", name):
            continue
        try:
            entries = fs.ls(folder["name"], detail=True)
        except FileNotFoundError:
            continue
        for entry in entries:
            base = os.path.basename(entry["name"].rstrip("/"))
            wanted = (base.startswith("vs_") and base.endswith(".json")) or base in RATING_FILES
            if wanted and not storage.is_temporary(base):
                out[storage.join(eval_root, name, base)] = _entry_time(entry)
    return out


def ladder_texts(ratings: dict[int, dict]) -> list[str]:
    """The newest generation's fixed-scale rating (a first rating marked so), as variants longest first
    ([] without one)."""
    if not ratings:
        return []
    g = max(ratings)
    r = ratings[g]
    short = f"Elo {r['elo']:.0f} [{r['ci95'][0]:.0f}, {r['ci95'][1]:.0f}] ({generation_label(r, g)})"
    return [rating_text(r, g), short]


def newest_ratings(ratings: dict[str, dict]) -> dict[int, dict]:
    """generation -> its full ladder rating, else its first one (marked `"first": True`), from the rating
    files read (`{url: rating}`, both kinds)."""
    out: dict[int, dict] = {}
    for url in sorted(ratings, key=lambda u: os.path.basename(u) == layout.LADDER_RATING):
        g = int(os.path.basename(os.path.dirname(url))[3:])
        first = os.path.basename(url) == layout.LADDER_FIRST_RATING
        out[g] = {**ratings[url], "first": True} if first else ratings[url]
    return out


def strength_texts(matches: list[MatchSummary]) -> list[str]:
    """The newest generation's strength, as variants longest first: its Elo against GNU Go from a
    Bradley-Terry fit of all `matches` (anchored at that GNU Go level, so the interval is the difference's),
    else its latest win rate against another opponent; [] without matches. Matches at a time budget per
    move (`vs_*_equal-time.json`) are left out, as in the run's ratings."""
    played = [m for m in matches if m.games and not m.timed and generation_of(m.player) is not None]
    gnugo = [m for m in played if m.opponent.startswith("gnugo:")]
    if gnugo:
        newest = max(generation_of(m.player) for m in gnugo)
        level = sorted_players(m.opponent for m in gnugo if generation_of(m.player) == newest)[-1]
        player = f"gen{newest:04d}"
        ratings = fit_bradley_terry(
            [(m.player, m.opponent, s) for m in played for s in m.scores], anchor=level
        )
        if player in ratings.elo:
            low, high = ratings.interval(player)
            elo = ratings.elo[player]
            return [
                format_elo(level, elo, low, high, newest),
                format_elo(level, elo, low, high, newest, True),
            ]
    if not played:
        return []
    newest = max(generation_of(m.player) for m in played)
    latest = {m.opponent: m for m in played if generation_of(m.player) == newest}
    match = latest[sorted_players(latest)[0]]
    low, high = wilson_interval(sum(match.scores), match.games)
    rate = match.win_rate
    return [
        format_win_rate(match.opponent, rate, low, high, newest),
        format_win_rate(match.opponent, rate, low, high, newest, True),
    ]


# --------------------------------------------------------------------------------------- the state


class RunProgress:
    """What the status line says: fed Snakemake's lines (`feed`) and the clock (`poll`), rendered by `render`.

    `start` is when `minigo run` started. Generations are timed from the first poll that finds a model: the
    models existing then are not counted, each later one is timed from the previous one. Safe to poll from
    one thread while another feeds and renders: files are read outside the lock, results stored under it."""

    def __init__(self, root: str, generations: int, start: float) -> None:
        self.root = root
        self.generations = generations
        self.start = start
        self.done: int | None = None  # jobs of the current invocation
        self.total: int | None = None
        self.generation: int | None = None  # highest model
        self.base: tuple[int, float] | None = None  # (generation, time) the estimate counts from
        self.latest_time: float | None = None  # when `generation` was first seen
        self.strength: list[str] = []  # variants, longest first
        self._lock = threading.Lock()
        self._models_at = -math.inf
        self._evals_at = -math.inf
        self._eval_times: dict[str, float | None] | None = None
        self._matches: dict[str, tuple[float | None, MatchSummary | dict | None]] = {}  # dict: a ladder.json

    def begin_invocation(self) -> None:
        """A new Snakemake invocation: its jobs count from 0."""
        with self._lock:
            self.done = self.total = None

    def feed(self, text: str) -> None:
        """Take one line of Snakemake's output (progress and job-total lines; others are ignored)."""
        match = PROGRESS.match(text)
        total = JOB_TOTAL.match(text)
        with self._lock:
            if match:
                self.done, self.total = int(match.group(1)), int(match.group(2))
            elif total and self.done is None:
                self.total = int(total.group(1))

    def poll(self, now: float, force: bool = False) -> bool:
        """Read the run's files when due (models every 2 s, evaluation files every 10 s); True if the newest
        model changed."""
        changed = False
        if force or now - self._models_at >= MODEL_POLL_S:
            self._models_at = now
            changed = self.see_model(latest_model(self.root, self.generations, self.generation), now)
        if force or now - self._evals_at >= EVAL_POLL_S:
            self._evals_at = now
            self.see_evaluations(eval_file_times(self.root))
        return changed

    def see_model(self, generation: int | None, now: float) -> bool:
        """The newest model is `generation` at `now`; True if that is news."""
        if generation is None or generation == self.generation:
            return False
        with self._lock:
            if self.base is None:
                self.base = (generation, now)
            self.generation, self.latest_time = generation, now
        return True

    def see_evaluations(self, times: dict[str, float | None]) -> None:
        """Re-read the results files that are new or changed, then refit (nothing when none changed)."""
        if times == self._eval_times:
            return
        matches: dict = {}
        for url, mtime in times.items():
            cached = self._matches.get(url)
            if cached is None or cached[0] != mtime or mtime is None:
                if os.path.basename(url) in RATING_FILES:
                    cached = (mtime, read_rating(url))  # None while unreadable: read again later
                else:
                    try:
                        cached = (mtime, read_match(url))
                    except ValueError:
                        cached = (
                            mtime,
                            None,
                        )  # not a results file (or not a whole one yet): read again later
            matches[url] = cached
        is_ladder = {url: os.path.basename(url) in RATING_FILES for url in matches}
        ladder = newest_ratings(
            {url: r for url, (_, r) in matches.items() if is_ladder[url] and r is not None}
        )
        played = [m for url, (_, m) in matches.items() if m is not None and not is_ladder[url]]
        strength = ladder_texts(ladder) or strength_texts(played)
        self._matches, self._eval_times = matches, times
        with self._lock:
            self.strength = strength

    def seconds_left(self, now: float) -> float | None:
        """Average wall time of the generations finished under this command x generations to do, counting
        down from the newest model; None until one has finished."""
        if self.base is None or self.generation is None or self.latest_time is None:
            return None
        finished = self.generation - self.base[0]
        if finished <= 0:
            return None
        per_generation = (self.latest_time - self.base[1]) / finished
        return max(0.0, per_generation * (self.generations - self.generation) - (now - self.latest_time))

    def parts(self, now: float) -> list[tuple[int, list[str]]]:
        """The line's parts in order, each (priority: the lowest goes first, variants longest first)."""
        gen = "-" if self.generation is None else str(self.generation)
        if self.done is None and self.total is None:
            jobs = []  # Snakemake has not planned yet
        else:
            jobs = [f"jobs {self.done or 0}/{'?' if self.total is None else self.total}"]
        if self.generation is not None and self.generation >= self.generations:
            eta = "finishing"
        else:
            left = self.seconds_left(now)
            eta = "estimating time left" if left is None else f"~{format_duration(left)} left"
        return [
            (9, [f"gen {gen}/{self.generations}"]),
            (3, jobs),
            (1, [f"{format_duration(now - self.start)} elapsed"]),
            (4, [eta]),
            (2, list(self.strength)),
        ]

    def render(self, now: float, width: int = 10**6, separator: str = " · ") -> str:
        """The status line, at most `width` characters."""
        with self._lock:
            parts = self.parts(now)
        return fit_parts(parts, width, separator)


# ------------------------------------------------------------------------------------------ the display


class ProgressDisplay:
    """Shows a `RunProgress` on `stream` in one of `MODES` (None: `live` on a terminal, else `lines`).

    Per Snakemake invocation: `begin()`, `line(text)` for each output line, `end()` (or use `invocation()`
    as a context manager, which also runs the timer thread). `tick()` is the timer's beat; tests call it with
    a fake `clock` instead of starting the thread."""

    def __init__(
        self,
        progress: RunProgress | None,
        mode: str | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.time,
        width: int | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        if mode is None:
            mode = default_mode(self.stream)
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode if progress is not None else "none"
        self.progress = progress
        self.clock = clock
        self.width = width
        self.separator = separator_for(self.stream)
        self._lock = threading.RLock()
        self._shown = ""  # the live line now on the terminal ("" when none)
        self._printed: tuple[int | None, int | None] | None = None  # (generation, jobs) of the last line
        self._printed_at = -math.inf
        self._active = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # the invocation's life
    def begin(self) -> None:
        """A Snakemake invocation starts."""
        with self._lock:
            self._active = True
            self._printed_at = self.clock()  # lines: the first line comes with a model, or after a minute
            if self.progress is not None:
                self.progress.begin_invocation()

    def end(self) -> None:
        """The invocation ended (or was interrupted): the live line is finished with a newline."""
        with self._lock:
            if self.mode == "live" and self._shown:
                self.stream.write(CLEAR + self._render(self.clock()) + "\n")
            elif self.mode == "lines" and self.progress is not None:
                self._print_line(self.clock(), only_if_new=True)
            self._shown = ""
            self._active = False
            self.stream.flush()

    def start_timer(self) -> None:
        """Tick every half second on a daemon thread until `stop_timer`."""
        if self.mode == "none" or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="minigo-progress", daemon=True)
        self._thread.start()

    def stop_timer(self) -> None:
        """Stop the timer thread (a tick stuck on a slow filesystem is left behind; it draws nothing)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    def invocation(self) -> _Invocation:
        """`with display.invocation(): ...` = begin, timer, and end however the block is left."""
        return _Invocation(self)

    # what moves the line
    def line(self, text: str) -> None:
        """One line of Snakemake's output: error lines are printed; progress lines update the status."""
        with self._lock:
            if self.progress is not None:
                self.progress.feed(text)
            if SHOWN.match(text):
                if self._shown:
                    self.stream.write(CLEAR)
                self.stream.write("  " + text + "\n")
                if self._shown:
                    self._shown = ""
                    self._draw(self.clock())
                self.stream.flush()

    def tick(self) -> None:
        """The clock moved: poll the run's files when due; redraw the live line if its text changed, or
        print a line (lines) if the generation changed or, with news, a minute passed since the last."""
        if self.mode == "none" or self.progress is None:
            return
        now = self.clock()
        changed = self.progress.poll(now)  # outside the lock: reading files never holds up Snakemake's lines
        with self._lock:
            if not self._active:
                return
            if self.mode == "live":
                self._draw(now)
            elif changed or now - self._printed_at >= LINE_EVERY_S:
                self._print_line(now, only_if_new=not changed)

    # drawing
    def _render(self, now: float) -> str:
        assert self.progress is not None
        if self.mode == "live":
            width = self.width or shutil.get_terminal_size().columns
            return self.progress.render(now, max(10, width - 1), self.separator)
        return self.progress.render(now, separator=self.separator)

    def _draw(self, now: float) -> None:
        text = self._render(now)  # (the timer's beat keeps redraws to two a second)
        if text != self._shown:
            self.stream.write(CLEAR + text)
            self.stream.flush()
            self._shown = text

    def _print_line(self, now: float, only_if_new: bool = False) -> None:
        assert self.progress is not None
        key = (self.progress.generation, self.progress.done)
        if only_if_new and key == self._printed:
            return
        self.stream.write(f"  [{time.strftime('%H:%M:%S', time.localtime(now))}] {self._render(now)}\n")
        self.stream.flush()
        self._printed, self._printed_at = key, now

    def _beat(self) -> None:
        while not self._stop.wait(REDRAW_S):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - the status line must never stop the run
                continue


class _Invocation:
    def __init__(self, display: ProgressDisplay) -> None:
        self.display = display

    def __enter__(self) -> ProgressDisplay:
        self.display.begin()
        self.display.start_timer()
        return self.display

    def __exit__(self, *exc: object) -> None:
        self.display.stop_timer()
        self.display.end()


def default_mode(stream: TextIO) -> str:
    """`live` on a terminal that can redraw a line, `lines` otherwise (a file, a pipe, CI, TERM=dumb)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return "live" if tty and os.environ.get("TERM") != "dumb" else "lines"
