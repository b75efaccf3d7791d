"""The ablation's rating on the fixed Elo ladder (a spec with `rating:`) and its rows' cost figures.

Every row's last model (the newest `models/genG` file of `{root}/ROW/run`) is rated with `minigo ladder rate`
on the fixed ladder of the row's board size (`config/ladder/NxN.json`), as the run rates its own models
(`workflow/rules/evaluate.smk`, rule `ladder_rating`): the config's evaluation search (fixed readouts, no
noise, its softpick opening moves) with `rating.readouts` readouts a move, the ladder's komi, the default
batch and games per rung, until the 95% interval is within +-`rating.half_width` Elo or `rating.max_games`
games are played. Unlike the run's chain it starts at the ladder's middle, and every row plays with the same
`rating.seed`, so no row starts from a better guess. The search is the row's config with `evaluate.readouts`
set (`{root}/ROW/rating.yaml`); the rating is the standard rating file (`{root}/ROW/rating.json`, its log
`rating.log`). `rating.jobs` rows are rated at once, each in its own process playing one game at a time, so
each rating's `cpu_seconds` is its own. A rating file that exists and reads as one is not played again.

A row's cost figures are read from its run directory when the table is made (so rows an older driver ran
get them too), with the readers of `minigo status` and `minigo status --breakdown`:

- generations: the newest model file's generation;
- games: the self-play games the run wrote, every generation (`report.status.collect`);
- positions: the recorded self-play positions its job records list (`report.breakdown.collect`);
- steps: the training steps behind the last model (the last `global_step` of its generation's training);
- core-s: the core-seconds the loop's jobs held (`report.breakdown`: self-play games, training steps, window,
  job start-up, other jobs; evaluation left out);
- wall s: the row's run time with its warm start's (`row_result.json`'s `total_wall_s`, else `wall_s`;
  else the breakdown's first job to last file).

A figure that cannot be read is None in `ablation.json` and "-" in the table. With `measures:` in the spec,
each row's value error and search scaling (`minigo_core.bench.ablation.measures`) go beside its rating.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from minigo_core.base.config import load_config
from minigo_core.base.machine import cpu_model
from minigo_core.bench.ablation import measures as _measures
from minigo_core.bench.ablation import sections as _sections
from minigo_core.bench.ablation import seeds as _seeds
from minigo_core.data import layout
from minigo_core.rating import ladder_rate
from minigo_core.rating.ladder import LadderError
from minigo_core.report import breakdown, status

REPO = Path(__file__).resolve().parents[3]
RATING_FILE, RATING_CONFIG, RATING_LOG = "rating.json", "rating.yaml", "rating.log"
BASELINE = "default"  # the row the table's Elo differences are taken against, when the spec has one
LOOP = ("selfplay_games", "training_steps", "window", "startup", "other_jobs")  # breakdown categories summed
# what ablation.json keeps of each rating file
RATING_KEYS = ("player", "spec", "board_size", "elo", "ci95", "half_width", "games", "stopped", "bracket")
RATING_KEYS += ("seed", "anchor", "anchor_elo", "cpu_seconds", "wall_seconds")
_MODEL = re.compile(r"gen(\d+)" + re.escape(layout.MODEL_SUFFIX))
_STOPPED = {
    "rated": "",
    "max_games": " (game budget)",
    "above_top_rung": " (above the top rung)",
    "below_bottom_rung": " (below the bottom rung)",
}


@dataclass(frozen=True)
class RatingSettings:
    """The spec's `rating:` section: the same for every row. Defaults: config.yaml's `evaluate` (readouts,
    ladder_half_width, ladder_max_games) and `minigo ladder rate`'s seed."""

    readouts: int = 32
    half_width: float = 100.0
    max_games: int = 200
    jobs: int = 1
    seed: int = 1

    @classmethod
    def from_spec(cls, section: object, where: str) -> RatingSettings:
        """The settings of a `rating:` section; SystemExit naming the key when one is unknown or bad."""
        values = _sections.section_values(section, "rating", cls, where)
        for key in ("readouts", "max_games", "jobs", "seed"):
            _sections.integer(values, key, 0 if key == "seed" else 1, "rating", where)
        width = values["half_width"]
        if not isinstance(width, (int, float)) or isinstance(width, bool) or width <= 0:
            raise SystemExit(f"{where}: rating.half_width must be a number > 0, got {width!r}")
        values["half_width"] = float(width)
        return cls(**values)


def newest_model(run_root: Path) -> tuple[int, Path] | None:
    """The run's newest model file and its generation (None: no model yet)."""
    found = [(int(m.group(1)), p) for p in run_root.glob("models/gen*") if (m := _MODEL.fullmatch(p.name))]
    return max(found) if found else None


def rate_row(name: str, row_dir: Path, settings: RatingSettings) -> dict | None:
    """The row's rating (`{row_dir}/rating.json`): read back when it exists, else played by `minigo ladder
    rate` in its own process. None when the row has no model or the rating failed (see its log)."""
    out = row_dir / RATING_FILE
    if out.exists():
        try:
            return ladder_rate.read_rating(str(out))
        except LadderError as exc:
            print(f"  {name}: {exc}: rating it again", flush=True)
    model = newest_model(row_dir / "run")
    if model is None:
        return None
    data = yaml.safe_load((row_dir / "row.yaml").read_text())
    data.setdefault("evaluate", {})["readouts"] = settings.readouts
    config = row_dir / RATING_CONFIG
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    board = load_config(str(config)).board_size
    options = ["--board-size", str(board), "--config", str(config), "--seed", str(settings.seed)]
    options += ["--target-half-width", repr(settings.half_width), "--max-games", str(settings.max_games)]
    options += ["--out", str(out)]
    cmd = [sys.executable, "-m", "minigo_core.cli", "ladder", "rate", str(model[1]), *options]
    print(
        f"[{time.strftime('%H:%M:%S')}] rating {name}: generation {model[0]}, {board}x{board} ladder",
        flush=True,
    )
    with open(row_dir / RATING_LOG, "w") as log:
        code = subprocess.call(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        result = ladder_rate.read_rating(str(out)) if code == 0 else None
    except LadderError:
        result = None
    if result is None:
        print(f"  {name}: the rating failed (exit {code}); see {row_dir / RATING_LOG}", flush=True)
        return None
    print(f"  {name} -> {ladder_rate.rating_line(result)} ({result.get('games')} games)", flush=True)
    return result


def rate_rows(root: Path, names: list[str], settings: RatingSettings) -> dict[str, dict | None]:
    """Every named row's rating, `settings.jobs` at once."""
    with ThreadPoolExecutor(max_workers=settings.jobs) as pool:
        found = pool.map(lambda name: rate_row(name, root / name, settings), names)
        return dict(zip(names, found, strict=True))


def _num(value: object) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def row_figures(run_root: Path, result: dict) -> dict:
    """A row's cost figures from its run directory (see the module docstring); None for one not readable."""
    out: dict = {
        "last_generation": None,
        "games": None,
        "positions": None,
        "train_steps": None,
        "loop_core_s": None,
        "wall_s": _num(result.get("total_wall_s", result.get("wall_s"))),
        "core_seconds": None,
    }
    model = newest_model(run_root)
    if model is not None:
        out["last_generation"] = model[0]
    try:
        rows = status.collect(status.load_run_config(str(run_root)))
        out["games"] = sum(r.games_done for r in rows)
        if model is not None:
            steps = next((r.train_steps for r in rows if r.generation == model[0]), None)
            out["train_steps"] = 0 if model[0] == 0 else steps
    except (OSError, ValueError, KeyError, TypeError) as exc:
        out["status_error"] = str(exc)
    try:
        b = breakdown.collect(str(run_root))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        out["breakdown_error"] = str(exc)
        return out
    out["positions"] = b.positions
    loop = [b.run.get(key) for key in LOOP if b.run.get(key) is not None]
    out["loop_core_s"] = round(sum(loop), 1) if loop else None
    out["core_seconds"] = {"cores": b.cores, "wall_s": round(b.wall_s, 1), **b.run}
    if out["wall_s"] is None and b.wall_s > 0:
        out["wall_s"] = round(b.wall_s, 1)
    return out


def _half(rating: dict) -> float:
    lo, hi = rating["ci95"]
    return (hi - lo) / 2


def entries(
    root: Path,
    results: list[dict],
    ratings: dict[str, dict | None],
    measures: dict | None = None,
    against: dict[str, str] | None = None,
) -> list[dict]:
    """One record per row with a result: its spec, cost figures, rating and Elo difference to `default`; its
    measures too when `measures` ({name: measures or None}) is given. A row that `against` maps to another
    row (the spec's `against:`, a lever stacked on that row) also gets its difference to that row:
    `against`, `elo_vs` and `elo_vs_half_width`."""
    rows = []
    for r in results:
        rating = ratings.get(r["name"])
        rows.append(
            {
                "name": r["name"],
                **({"row": r["row"], "seed": r["seed"]} if "seed" in r else {}),
                "why": r.get("why", ""),
                "set": r.get("set"),
                "budget_s": r.get("budget_s"),
                "exit": r.get("exit"),
                **row_figures(root / r["name"] / "run", r),
                "rating": {k: rating.get(k) for k in RATING_KEYS} if rating else None,
                "rating_file": str(root / r["name"] / RATING_FILE) if rating else None,
                **(
                    {"measures": measures.get(r["name"])}
                    if measures is not None and r["name"] in measures
                    else {}
                ),
            }
        )
    base = next((e["rating"] for e in rows if e["name"] == BASELINE and e["rating"]), None)
    for e in rows:  # the difference's 95% half-width: the two ratings' in quadrature (the rungs are fixed)
        if base is not None and e["rating"] is not None:
            e["elo_vs_default"] = round(e["rating"]["elo"] - base["elo"], 1)
            spread = 0.0 if e["name"] == BASELINE else math.hypot(_half(e["rating"]), _half(base))
            e["elo_vs_default_half_width"] = round(spread, 1)
    rated = {e["name"]: e["rating"] for e in rows if e["rating"]}
    for e in rows:
        ref = (against or {}).get(e["name"], BASELINE)
        if ref != BASELINE and ref != e["name"]:
            e["against"] = ref
            if e["rating"] is not None and ref in rated:
                e["elo_vs"] = round(e["rating"]["elo"] - rated[ref]["elo"], 1)
                e["elo_vs_half_width"] = round(math.hypot(_half(e["rating"]), _half(rated[ref])), 1)
    return sorted(rows, key=lambda e: -e["rating"]["elo"] if e["rating"] else math.inf)


def _cell(value: object, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def table(rows: list[dict], measures: _measures.MeasureSettings | None = None) -> str:
    """The Markdown table, sorted by Elo (rows without a rating last); with `measures`, their columns."""
    versus = any("elo_vs_default" in e for e in rows)
    head = [
        "row",
        "what changes",
        "generations",
        "games",
        "positions",
        "steps",
        "core-s",
        "wall s",
        "fixed-scale Elo [95%]",
        "games rated",
    ] + ([f"vs `{BASELINE}` (95%)"] if versus else [])
    stacked = any("against" in e for e in rows)
    head += ["vs the row it stacks on (95%)"] if stacked else []
    head += _measures.head(measures) if measures else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in rows:
        rating = e["rating"]
        if rating:
            lo, hi = rating["ci95"]
            elo = f"{rating['elo']:.0f} [{lo:.0f}, {hi:.0f}]{_STOPPED.get(rating.get('stopped'), '')}"
        else:
            elo = "no model" if e["last_generation"] is None else "not rated"
        cells = [
            f"`{e['name']}`",
            e["why"],
            _cell(e["last_generation"]),
            _cell(e["games"]),
            _cell(e["positions"]),
            _cell(e["train_steps"]),
            _cell(e["loop_core_s"], ".0f"),
            _cell(e["wall_s"], ".0f"),
            elo,
            _cell(rating and rating.get("games")),
        ]
        if versus:
            diff = e.get("elo_vs_default")
            if e["name"] == BASELINE and diff is not None:
                cells.append("(baseline)")
            else:
                cells.append("-" if diff is None else f"{diff:+.0f} +- {e['elo_vs_default_half_width']:.0f}")
        if stacked:
            diff = e.get("elo_vs")
            cells.append(
                "-" if diff is None else f"{diff:+.0f} +- {e['elo_vs_half_width']:.0f} vs `{e['against']}`"
            )
        cells += _measures.cells(e.get("measures")) if measures else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _base(spec: dict) -> dict | None:
    """The base file every row was merged over, and the SHA-256 of its text (None: a spec without one)."""
    if spec.get("base") is None:
        return None
    path = Path(spec["base"])
    name = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
    return {"file": name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def merge_earlier(rows: list[dict], files: list[str]) -> tuple[list[dict], list[dict]]:
    """`rows` with the rows of earlier `ablation.json` files that this root has no row of (by name; the first
    file that has a row wins), and where each came from: their file, commit, CPU and row names (a file that
    was itself merged passes on its own `merged_from` for the rows taken from it). SystemExit naming a file
    that cannot be read as an ablation.json."""
    have, origins = {e["name"] for e in rows}, []
    out = list(rows)
    for name in files:
        try:
            data = json.loads(Path(name).read_text())
            earlier = [e for e in data["rows"] if e["name"] not in have]
            taken = {e["name"] for e in earlier}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"--merge {name}: not an ablation.json ({type(exc).__name__}: {exc})") from None
        have |= taken
        out += earlier
        for origin in data.get("merged_from") or [{"commit": data.get("commit"), "cpu": data.get("cpu")}]:
            names = [n for n in origin.get("rows", sorted(taken)) if n in taken]
            if names:
                origins.append({"file": origin.get("file", name), "commit": origin.get("commit"),
                                "cpu": origin.get("cpu"), "rows": names})  # fmt: skip
    return out, origins


def first_replicates(results: list[dict]) -> list[dict]:
    """Per row of the spec (`row`, else the result's name), its result of the lowest seed, in the results'
    order: the replicate the measures are of (a row run only at later seeds, such as a paired branch of
    seeds 3 and 4, is measured at the first of those)."""
    first: dict[str, dict] = {}
    for r in results:
        group = str(r.get("row", r["name"]))
        if group not in first or int(r.get("seed", 0)) < int(first[group].get("seed", 0)):
            first[group] = r
    return [r for r in results if any(r is f for f in first.values())]


def report(spec: dict, results: list[dict], command: list[str], merge: list[str] | None = None) -> int:
    """Rate the rows (and measure them, with `measures:`), print the table and write `{root}/ablation.md` and
    `ablation.json`; 1 if a row with a model has no rating or no measures (they failed), else 0. `merge`:
    earlier ablation.json files whose rows this root lacks join the table as they were (`merge_earlier`)."""
    settings: RatingSettings = spec["rating"]
    root: Path = spec["root"]
    ratings = rate_rows(root, [r["name"] for r in results], settings)
    extra: _measures.MeasureSettings | None = spec.get("measures")
    measures = None
    if extra is not None:  # with `seeds`, of each row's first seed that has a run only
        models = {r["name"]: newest_model(root / r["name"] / "run") for r in first_replicates(results)}
        measures = _measures.measure_rows(root, models, extra)
    against = {str(r["name"]): str(r.get("against", BASELINE)) for r in spec.get("rows", [])}
    here = entries(root, results, ratings, measures, against)
    rows, origins = merge_earlier(here, merge or [])
    anchor = next(((e["rating"]["anchor"], e["rating"]["anchor_elo"]) for e in rows if e["rating"]), None)
    scale = f"anchor {anchor[0]} = {anchor[1]}" if anchor else "no row rated"
    head = (
        f"Each row's last model on the fixed Elo ladder (`minigo ladder rate`, {scale}): {settings.readouts} "
        f"readouts a move, to +-{settings.half_width:g} Elo or {settings.max_games} games, seed "
        f"{settings.seed}. core-s: the loop's jobs (self-play games, training steps, window, job start-up)."
    )
    head += (" " + _measures.describe(extra)) if extra else ""
    if origins:
        head += (
            " Rows of earlier runs (`--merge`, as they were): "
            + "; ".join(f"{', '.join(o['rows'])} ({str(o['commit'])[:7]}, {o['cpu']})" for o in origins)
            + "."
        )
    branches = {str(r["name"]): str(r["branch"]["row"]) for r in spec.get("rows", [])
                if isinstance(r.get("branch"), dict) and "row" in r["branch"]}  # fmt: skip
    seeded = _seeds.summarize(rows, against, branches) if "seeds" in spec else None
    if seeded is None:
        text = head + "\n\n" + table(rows, extra)
    else:
        firsts = [e for e in first_replicates(rows) if e.get("measures")]
        cells = {e.get("row", e["name"]): _measures.cells(e["measures"]) for e in firsts}
        text = f"{head} {_seeds.describe(spec['seeds'], seeded)}"
        text += " Measures: each row's first seed that ran." if extra else ""
        text += "\n\n" + _seeds.table(seeded, cells, _measures.head(extra) if extra else [])
    print(text)
    (root / "ablation.md").write_text(text + "\n")
    changed = _git("status", "--porcelain", "--untracked-files=no")
    summary = {
        "command": command,
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": None if changed is None else bool(changed),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "budget_minutes": spec.get("budget_minutes"),
        "base": _base(spec),
        "rating": asdict(settings),
        **({"measures": {**extra.record(), "jobs": extra.jobs}} if extra else {}),
        "baseline": BASELINE,
        **({"seeds": {"seeds": spec["seeds"], **seeded}} if seeded is not None else {}),
        "rows": rows,
    }
    if origins:  # this root's rows, then the earlier files' (`--merge`)
        mine = {"commit": summary["commit"], "cpu": summary["cpu"], "rows": [e["name"] for e in here]}
        summary["merged_from"] = [mine, *origins]
    (root / "ablation.json").write_text(json.dumps(summary, indent=1) + "\n")
    lacking = [e for e in here if e["rating"] is None or ("measures" in e and e["measures"] is None)]
    return int(any(e["last_generation"] is not None for e in lacking))
