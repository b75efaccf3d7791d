"""The ladder's calibration: matches between neighbouring rungs, stored game by game, then one fit.

`minigo ladder calibrate` (and `--extend`, `--fit-only`) is `calibrate` here. What a calibration plays is a
`CalibrationDesign`: the board size, komi, the rungs from weakest to strongest (player specs: `random`,
`uct:N`, `gnugo:L`, `gtp:...`), G games per pair, the pairs (every rung against the next `reach` rungs above
it: neighbours and jumps of two by default), and one calibration seed. Each pair (lower rung a, upper rung
b) is a match of G games, a taking Black in even-numbered games, seeded as `minigo evaluate` seeds a match
(`play.referee.match_seed(seed, None, a, b)`, then `game_seeds(match seed, game index)`), so game i of a
pair is the same game however and whenever it is played.

Each pair's games are kept in `{ladder_dir}/{N}x{N}/{a}_vs_{b}.json` (a, b: `PlayerSpec.slug`), rewritten
atomically at most once a second while it plays and after its last game or a failure (only what the fit
needs and the record of the game: its index, seeds, who had Black, a's score, the result string, the move
count, how it ended, CPU seconds; no moves, so the repository stays small). A killed calibration keeps every
game saved (all but the last second's) and a rerun plays only the missing ones: the same games, seeded by
their index. After the matches, one `ladder.calibrate_fit` over every stored game between the design's
rungs, anchored (GNU Go level 10 = 1800), is written with `ladder.write_ladder` to
`{ladder_dir}/{N}x{N}.json` with its provenance (the command, seed, rungs, pairs, games per pair, komi, CPU
model, date, the CPU seconds of every stored game, versions). `--target-ci` plays adaptively instead
(`adaptive_calibration`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path

import minigo_core
from minigo_core.base.config import RunConfig, SearchSettings
from minigo_core.base.machine import cpu_model
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.data import storage
from minigo_core.play.players import Player, PlayerError, make_player, resolve_spec
from minigo_core.play.referee import game_seeds, match_seed, program_cpu_seconds, referee_game
from minigo_core.rating.ladder import (
    LADDER_DIR,
    REPO,
    Ladder,
    LadderError,
    calibrate_fit,
    load_ladder,
    read_ladder,
    write_ladder,
)
from minigo_core.rating.ladder_walk import side_cost

PAIR_FORMAT = "minigo-ladder-pair"
PAIR_FORMAT_VERSION = 1
RUNG_KINDS = ("random", "uct", "gnugo", "pachi", "gtp")
# The default rungs, weakest first. 9x9: plain UCT meets GNU Go level 1 only at tens of thousands of playouts,
# so the uct:N series doubles up to there; GNU Go's levels form two plateaus (1-3 and 4-10) that short probe
# matches cannot split further, so levels 1, 4, 6, 8 and 10 (the others add cost, not resolution). The probe
# matches and the cost per game side behind this choice are in docs/BENCHMARKS.md ("The fixed Elo ladder");
# `ladder_walk.side_cost` is the cost model. The adaptive calibration (`--target-ci`, adaptive_calibration.py)
# starts from uct:N every 4x (it adds a rung between two uct rungs fitted > 250 apart) up to the largest uct
# rung whose games cost less than they narrow, then GNU Go levels 1, 4 and 10 (one per plateau, the anchor).
DEFAULT_RUNGS: dict[int, tuple[str, ...]] = {
    9: ("random", *(f"uct:{n}" for n in (2, 8, 32, 128, 512, 2048, 8192, 16384)), "gnugo:1", "gnugo:4",
        "gnugo:10"),
    5: ("random", "uct:4", "uct:16", "uct:64", "uct:256", "uct:1024", "gnugo:1", "gnugo:5", "gnugo:10"),
}  # fmt: skip
DEFAULT_GAMES_PER_PAIR = {9: 100, 5: 60}
SAVE_EVERY_S = 1.0  # a pair file is rewritten at most this often (a kill replays at most this much play)
ADAPTIVE_FIRST_GAMES = 10  # --target-ci: each pair of neighbours first plays this many games
DEFAULT_SEED = 1
DEFAULT_REACH = 2  # each rung plays the next two above it: neighbours and jumps of two


@dataclass(frozen=True)
class CalibrationDesign:
    """What a calibration plays: rungs (weakest first, rating names), games per pair, seed, where."""

    board_size: int
    komi: float
    rungs: tuple[str, ...]
    games_per_pair: int
    seed: int
    reach: int = DEFAULT_REACH
    ladder_dir: str = str(REPO / LADDER_DIR)
    gnugo: str | None = None

    @property
    def pair_dir(self) -> str:
        return storage.join(self.ladder_dir, f"{self.board_size}x{self.board_size}")

    @property
    def ladder_file(self) -> str:
        return storage.join(self.ladder_dir, f"{self.board_size}x{self.board_size}.json")

    def pairs(self) -> list[tuple[str, str]]:
        """(lower, upper): each rung against the next `reach` rungs above it that it may be compared with
        (`comparable`), neighbours first; and a rung that no rung below it meets that way (GNU Go among GNU Go
        mixtures) against the nearest rung below that it may be compared with, so that the chain stays
        connected."""
        r = self.rungs
        above = [[b for b in r[i + 1 :] if comparable(a, b)] for i, a in enumerate(r)]
        out = [
            (r[i], above[i][k - 1])
            for k in range(1, self.reach + 1)
            for i in range(len(r))
            if len(above[i]) >= k
        ]
        met = {upper for _, upper in out}
        for i, name in enumerate(r):
            below = [] if name in met else [a for a in r[:i] if comparable(a, name)]
            if below:
                out.append((below[-1], name))
        return out

    def pair_file(self, lower: str, upper: str) -> str:
        return storage.join(
            self.pair_dir, f"{PlayerSpec.parse(lower).slug}_vs_{PlayerSpec.parse(upper).slug}.json"
        )


def mixture_base(name: str) -> str | None:
    """`gnugo:1` for `gnugo:1+r10` (a mixture with random moves, `SPEC+rP`), None for any other player."""
    try:
        spec = PlayerSpec.parse(name)
    except PlayerSpecError:
        return None
    return None if spec.random_percent is None else spec.text.rsplit("+r", 1)[0]


def comparable(a: str, b: str) -> bool:
    """Whether games between two rungs go into a calibration: not between two mixtures of the same base, and
    not between a mixture of GNU Go and GNU Go itself (at any level, mixed or not).

    Two mixtures of one base: their games are decided by the two sides' random moves alone (the rest of the
    play is the same base's), and they place the two closer together than their games against every other
    rung do. A GNU Go mixture against GNU Go: GNU Go does not punish the random moves the way a searching
    player does (`uct:N`, and the networks the ladder is for), so the mixture scores far better against GNU
    Go than against `uct:N` rungs of its strength. Either kind of pair in the fit worsens it and misplaces the
    ratings of networks rated through those rungs (measurements: docs/BENCHMARKS.md, the fixed Elo ladder).
    """
    base = mixture_base(a)
    other = mixture_base(b)
    if base is not None and base == other:
        return False
    for mixture, plain in ((base, b), (other, a)):
        if mixture is not None and mixture.startswith("gnugo:") and plain.startswith("gnugo:"):
            return False
    return True


def rung_names(specs: list[str], gnugo: str | None = None) -> tuple[str, ...]:
    """The rungs' rating names (`uct:064` -> `uct:64`); reference players only (LadderError otherwise)."""
    names = []
    for text in specs:
        try:
            resolved = resolve_spec(text, gnugo_path=gnugo)
        except PlayerError as exc:
            raise LadderError(f"rung {text!r}: {exc}") from None
        if resolved.kind not in RUNG_KINDS:
            raise LadderError(
                f"rung {text!r}: a ladder rung is a reference player (random, uct:N, gnugo:L or "
                "'gtp:<command>'), not a model"
            )
        names.append(resolved.name)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise LadderError(f"rung(s) listed twice: {', '.join(duplicates)}")
    if len(names) < 2:
        raise LadderError(f"a ladder needs at least two rungs, got {', '.join(names) or 'none'}")
    return tuple(names)


# ------------------------------------------------------------------------------------------ pair files


def read_pair(path: str) -> dict | None:
    """A pair's results file, or None when there is none yet; LadderError names a damaged one."""
    if not storage.exists(path):
        return None
    try:
        data = json.loads(storage.read_bytes(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LadderError(f"{path}: not a ladder pair file ({exc}); delete it to replay the pair") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != PAIR_FORMAT
        or not isinstance(data.get("games"), list)
    ):
        raise LadderError(f"{path}: not a {PAIR_FORMAT} file; delete it to replay the pair")
    return data


def _check_pair(
    path: str, data: dict, design: CalibrationDesign, lower: str, upper: str, playing: bool
) -> None:
    want = {"board_size": design.board_size, "komi": design.komi, "player": lower, "opponent": upper}
    if playing:
        want["calibration_seed"] = design.seed
    for key, value in want.items():
        if data.get(key) != value:
            raise LadderError(
                f"{path}: {key} is {data.get(key)!r}, this calibration has {value!r}; use the same "
                f"settings (--seed, --komi), another --out-dir, or delete the file to replay the pair"
            )


def _new_pair(design: CalibrationDesign, lower: str, upper: str) -> dict:
    return {
        "format": PAIR_FORMAT,
        "format_version": PAIR_FORMAT_VERSION,
        "board_size": design.board_size,
        "komi": design.komi,
        "player": lower,
        "opponent": upper,
        "calibration_seed": design.seed,
        "seed": match_seed(design.seed, None, lower, upper),
        "games": [],
    }


def program_cpu(players: list[Player]) -> float:
    """CPU seconds of the players' outside programs (GNU Go, Pachi) so far, from /proc (0 where unreadable):
    the sum of `referee.program_cpu_seconds` (a player that starts a process per game counts every one)."""
    return sum(program_cpu_seconds(p) for p in players)


def _game_entry(index: int, lower: str, seeds: tuple[int, int], record: dict, cpu: float) -> dict:
    black = record["black_name"]
    colour = record["winner_colour"]
    score = 0.5 if colour == "draw" else float((colour == "black") == (black == lower))
    return {
        "index": index,
        "seeds": list(seeds),
        "black": black,
        "score": score,  # the lower rung's (the file's "player")
        "result": record["result"],
        "moves": record["moves"],
        "ended_by": record["ended_by"],
        "cpu_seconds": round(cpu, 3),
    }


def play_pair(
    design: CalibrationDesign,
    lower: str,
    upper: str,
    max_new_games: int | None = None,
    progress: bool = False,
    target: int | None = None,
) -> int:
    """Play the pair's missing games of the first `target` (default: the design's games per pair), at most
    `max_new_games`, saving them as it goes (a line on stderr each with `progress`); returns the games
    played."""
    path = design.pair_file(lower, upper)
    data = read_pair(path) or _new_pair(design, lower, upper)
    _check_pair(path, data, design, lower, upper, playing=True)
    have = {g["index"] for g in data["games"]}
    wanted = design.games_per_pair if target is None else target
    todo = [i for i in range(wanted) if i not in have]
    todo = todo if max_new_games is None else todo[: max(0, max_new_games)]
    if not todo:
        return 0
    search = SearchSettings(readouts=1)
    players = []
    saved, unsaved = time.monotonic(), False
    try:
        for name in (lower, upper):
            players.append(make_player(resolve_spec(name, gnugo_path=design.gnugo), search))
        for i in todo:
            black, white = players if i % 2 == 0 else players[::-1]
            seeds = game_seeds(data["seed"], i)
            cpu0 = time.process_time() + program_cpu(players)
            game = referee_game(black, white, design.board_size, design.komi, seeds)
            cpu = time.process_time() + program_cpu(players) - cpu0
            record = {**game, "black_name": black.name, "moves": len(game["moves"])}
            data["games"].append(_game_entry(i, lower, seeds, record, cpu))
            unsaved = True
            if time.monotonic() - saved >= SAVE_EVERY_S:
                unsaved = _save_pair(path, data)
                saved = time.monotonic()
            if progress:
                print(
                    f"{lower} vs {upper}: game {i + 1}/{wanted}: {black.name} (B) "
                    f"{game['result']}, {record['moves']} moves, {cpu:.1f} CPU s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if unsaved:  # the games since the last save, also when a game failed
            _save_pair(path, data)
        for p in players:
            p.close()
    return len(todo)


def _save_pair(path: str, data: dict) -> bool:
    data["games"].sort(key=_index)
    storage.write_text(path, pair_text(data))
    return False


def pair_text(data: dict) -> str:
    """A pair file's text: the settings one per line, then one line per game (small, diff-friendly)."""
    head = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k != "games"]
    games = [f"  {json.dumps(g, separators=(',', ':'))}" for g in data["games"]]
    return "{\n" + ",\n".join([*head, ' "games": [\n' + ",\n".join(games) + "\n ]"]) + "\n}\n"


def _index(game: dict) -> int:
    return int(game["index"])


def stored_games(design: CalibrationDesign) -> tuple[list[tuple[str, str, float]], float]:
    """Every stored game between two of the design's rungs as (lower, upper, lower's score), and their CPU
    seconds; pair files of other rungs in the folder are left out."""
    rungs = set(design.rungs)
    triples: list[tuple[str, str, float]] = []
    cpu = 0.0
    for path in storage.list_files(design.pair_dir, ".json"):
        data = read_pair(path)
        assert data is not None
        if data.get("player") not in rungs or data.get("opponent") not in rungs:
            continue
        if not comparable(data["player"], data["opponent"]):
            continue  # two mixtures of one base (`comparable`): kept in the folder, left out of the fit
        _check_pair(path, data, design, data["player"], data["opponent"], playing=False)
        for g in data["games"]:
            triples.append((data["player"], data["opponent"], float(g["score"])))
            cpu += float(g.get("cpu_seconds", 0.0))
    return triples, cpu


# ------------------------------------------------------------------------------------------- the driver


def settle_design(design: CalibrationDesign, given: set[str], extend: bool) -> CalibrationDesign:
    """The design to run against what `design.ladder_file` already holds. Settings not `given` on the command
    line are taken from the stored calibration; given ones must match it, or with `extend` only add to it
    (more rungs, more games per pair), else a LadderError says what to do."""
    if not storage.exists(design.ladder_file):
        return design
    stored = load_ladder(design.ladder_file).provenance
    keys = {
        "rungs": "--rungs",
        "games_per_pair": "--games-per-pair",
        "seed": "--seed",
        "komi": "--komi",
        "reach": "--reach",
    }
    if not all(k in stored for k in keys):
        return design  # written by hand or by another tool: nothing to keep to
    old = {k: tuple(stored[k]) if k == "rungs" else stored[k] for k in keys}
    design = replace(design, **{k: v for k, v in old.items() if keys[k] not in given})
    for key, option in keys.items():
        mine, theirs = getattr(design, key), old[key]
        if mine == theirs:
            continue
        grows = (
            key == "rungs"
            and set(theirs) <= set(mine)
            or key in ("games_per_pair", "reach")
            and mine > theirs
        )
        if not (extend and grows):
            how = "add rungs or games with --extend" if grows else f"keep {option} {_show(theirs)}"
            raise LadderError(
                f"{design.ladder_file} was calibrated with {option} {_show(theirs)}, not {_show(mine)}; "
                f"{how}, refit with --fit-only, or calibrate into another --out-dir"
            )
    return design


def _show(value: object) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def play_all(
    design: CalibrationDesign,
    jobs: int = 1,
    max_new_games: int | None = None,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
) -> int:
    """Play every pair's missing games (at most `max_new_games` per pair), `jobs` pairs at once in separate
    processes; returns the games played. A pair that fails stops the calibration (finished games kept)."""
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    pairs = design.pairs()
    played = 0
    if jobs <= 1:
        for lower, upper in pairs:
            n = play_pair(design, lower, upper, max_new_games, progress)
            played += n
            log(f"{lower} vs {upper}: {n} new game(s)")
        return played
    pairs.sort(key=lambda pair: -sum(side_cost(r, design.board_size) for r in pair))  # the longest first
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(play_pair, design, lo, up, max_new_games, progress): (lo, up) for lo, up in pairs
        }
        for future in as_completed(futures):
            n = future.result()
            played += n
            log(f"{futures[future][0]} vs {futures[future][1]}: {n} new game(s)")
    return played


def _versions(design: CalibrationDesign) -> dict:
    out: dict = {"minigo": minigo_core.__version__, "python": sys.version.split()[0]}
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if commit.returncode == 0:
            out["commit"] = commit.stdout.strip()
            changed = subprocess.run(
                ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            out["uncommitted_changes"] = bool(changed.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    if any(r.startswith("gnugo:") for r in design.rungs):
        try:
            argv = resolve_spec("gnugo:1", gnugo_path=design.gnugo).argv
            text = subprocess.run([argv[0], "--version"], capture_output=True, text=True, timeout=10).stdout
            out["gnugo"] = text.splitlines()[0].strip() if text else "unknown"
        except (OSError, subprocess.SubprocessError, PlayerError):
            pass
    return out


@dataclass(frozen=True)
class FitSettings:
    """How a calibration's table is fitted and recorded: the rung held fixed (`anchor`) at `anchor_elo`, and
    the command its provenance names."""

    anchor: str
    anchor_elo: float
    command: tuple[str, ...] | list[str]


def fit(design: CalibrationDesign, fit_settings: FitSettings) -> Ladder:
    """One fit over every stored game between the design's rungs, with the calibration's provenance."""
    anchor, anchor_elo, command = fit_settings.anchor, fit_settings.anchor_elo, fit_settings.command
    if anchor not in design.rungs:
        raise LadderError(
            f"the anchor {anchor} is not a rung ({', '.join(design.rungs)}); add it to --rungs or give "
            "--anchor RUNG --anchor-elo ELO"
        )
    triples, cpu = stored_games(design)
    missing = [r for r in design.rungs if not any(r in (a, b) for a, b, _ in triples)]
    if missing:
        raise LadderError(
            f"no stored games of rung(s) {', '.join(missing)} in {design.pair_dir}; play them first "
            "(`minigo ladder calibrate` without --fit-only)"
        )
    rungs = calibrate_fit(triples, anchor=anchor, anchor_elo=anchor_elo)
    provenance = {
        "command": shlex.join(command),
        "seed": design.seed,
        "rungs": list(design.rungs),
        "games_per_pair": design.games_per_pair,
        "reach": design.reach,
        "pairs": [list(p) for p in design.pairs()],
        "komi": design.komi,
        "games": len(triples),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_seconds": round(cpu, 1),
        "cost": f"{cpu / 3600:.2f} CPU-hours ({cpu:.0f} CPU-seconds, {len(triples)} games) on {cpu_model()}",
        "software": _versions(design),
    }
    return Ladder(design.board_size, anchor, anchor_elo, rungs, provenance)


def design_from_options(board_size: int, cfg: RunConfig, options: dict, extend: bool) -> CalibrationDesign:
    """The design of `minigo ladder calibrate`: `options` (rungs as a comma-separated string, games_per_pair,
    reach, seed, komi, ladder_dir; None where not given) over the defaults and the stored calibration."""
    if options.get("games_per_pair") is not None and options["games_per_pair"] < 1:
        raise LadderError(f"--games-per-pair must be >= 1, got {options['games_per_pair']}")
    if options.get("reach") is not None and options["reach"] < 1:
        raise LadderError(f"--reach must be >= 1, got {options['reach']}")
    design = default_design(board_size, cfg)
    if options.get("rungs"):
        options = {**options, "rungs": rung_names(options["rungs"].split(","), cfg.evaluate.gnugo)}
    design = replace(design, **{k: v for k, v in options.items() if v is not None})
    flags = {k: "--" + k.replace("_", "-") for k in options if options[k] is not None}
    return settle_design(design, set(flags.values()), extend)


def default_design(board_size: int, cfg: RunConfig | None = None) -> CalibrationDesign:
    """The built-in design of a board size: its default rungs (or the 5x5 ones scaled up), komi from `cfg`."""
    cfg = cfg or RunConfig()
    rungs = DEFAULT_RUNGS.get(board_size, DEFAULT_RUNGS[9])
    games = DEFAULT_GAMES_PER_PAIR.get(board_size, DEFAULT_GAMES_PER_PAIR[9])
    return CalibrationDesign(
        board_size, float(cfg.komi), rungs, games, DEFAULT_SEED, gnugo=cfg.evaluate.gnugo
    )


def calibrate(
    design: CalibrationDesign,
    fit_settings: FitSettings,
    *,
    jobs: int = 1,
    max_new_games: int | None = None,
    fit_only: bool = False,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
) -> tuple[Ladder | None, int]:
    """Play what is missing (unless `fit_only`), then fit and write the ladder; returns (the ladder, or None
    while some pair still misses games after a `max_new_games` step, and the games played)."""
    played = 0 if fit_only else play_all(design, jobs, max_new_games, log, progress)
    if not fit_only:
        short = [
            f"{lo} vs {up}"
            for lo, up in design.pairs()
            if len((read_pair(design.pair_file(lo, up)) or {"games": []})["games"]) < design.games_per_pair
        ]
        if short:
            return None, played
    ladder = fit(design, fit_settings)
    if fit_only and storage.exists(design.ladder_file):
        try:
            before = load_ladder(design.ladder_file).provenance
        except LadderError:
            before = {}
        if before.get("command"):  # the games' command stays the table's; the refit is recorded beside it
            ladder.provenance["refit_command"] = ladder.provenance["command"]
            ladder.provenance["command"] = before["command"]
    write_ladder(ladder, design.ladder_file)
    return ladder, played


# ------------------------------------------------------------------------------------------ showing it


def read_ladder_at(board_size: int, ladder_dir: str | None = None) -> Ladder:
    """The ladder of a board size from `ladder_dir` (default: the repository's config/ladder)."""
    if ladder_dir is None:
        return read_ladder(board_size)
    path = Path(ladder_dir) / f"{board_size}x{board_size}.json"
    if not path.is_file():
        sizes = [
            int(m.group(1))
            for p in Path(ladder_dir).glob("*.json")
            if (m := re.match(r"(\d+)x\1\.json$", p.name))
        ]
        raise LadderError(
            f"no ladder for board size {board_size} ({path} does not exist); calibrated sizes: "
            f"{', '.join(map(str, sorted(sizes))) or 'none'}; make one with "
            f"`minigo ladder calibrate --board-size {board_size} --out-dir {ladder_dir}`"
        )
    return load_ladder(path)


def format_table(ladder: Ladder) -> str:
    """The ladder as a table: rung, Elo, 95% interval (the other rungs held fixed), games, and the interval
    relative to the anchor where the table has it; the anchor and the cost below it."""
    n = ladder.board_size
    lines = [f"{n}x{n} ladder, anchored at {ladder.anchor} = {ladder.anchor_elo:g}", ""]
    chain = any(r.ci95_anchor is not None for r in ladder.rungs)
    head = f"{'rung':<14} {'Elo':>7}  {'95% interval':>16}  {'games':>6}"
    lines.append(head + (f"  {'from the anchor':>16}" if chain else ""))
    for r in ladder.rungs:
        lo, hi = r.ci95
        line = f"{r.player:<14} {r.elo:>7.0f}  [{lo:>6.0f}, {hi:>6.0f}]  {r.games:>6}"
        if r.ci95_anchor is not None:
            line += f"  [{r.ci95_anchor[0]:>6.0f}, {r.ci95_anchor[1]:>6.0f}]"
        lines.append(line)
    if chain:
        lines += [
            "",
            "95% interval: with the other rungs held at their ratings (as the table rates a player);",
            "from the anchor: adding up the chain of matches down from the anchor (a shift common to all).",
        ]
    prov = ladder.provenance
    if prov.get("cost") or prov.get("command"):
        lines += ["", f"calibration: {prov.get('cost', '?')}; {prov.get('command', '')}".rstrip("; ")]
    return "\n".join(lines)
