"""The ablation's value error and search scaling of every row's model, beside its rating (a spec with
`measures:`), so the table shows which levers make the value head and the search useful (issue 44).

For every row with a model (its newest `models/genG` file, the one it is rated with):

- the value head's error on the position set `measures.value_set` (`bench value_error`'s measurement on games
  between outside programs: the mean squared error against the game's result, the share of decided positions
  whose sign it gets right, the same over each game's last third, and the v = 0 baseline); a row whose board
  size is not the set's has none, with a note that says so;
- the search scaling (`bench search_scaling`'s matches, the row's config's match search): the model at each
  of `measures.scaling_readouts` but the first against itself at the one before (for 64, 128, 256: 128 vs 64
  and 256 vs 128), `measures.scaling_games` games each, pair i seeded `measures.seed` + i; each pair's Elo per
  doubling with its 95% interval, the least-squares slope over the range, and the table's figure: the pairs'
  Elo added up over the range's doublings, with its 95% half-width (the pairs' half-widths in quadrature, over
  the doublings; None after a sweep, whose interval is open).

A row's measures are written once to `{root}/ROW/measures.json` with their settings (the value set's file and
SHA-256, the readouts, games and seed) and the model: a file that reads as one with the same settings and
model is not measured again; one made with other settings or another model is measured again (the games'
log in `measures.log`). `measures.jobs` rows are measured at once, each in a process of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import multiprocessing
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minigo_core.bench import search_scaling, value_error
from minigo_core.bench.ablation import sections as _sections
from minigo_core.nn import modelfile

REPO = Path(__file__).resolve().parents[3]
MEASURES_FILE, MEASURES_LOG = "measures.json", "measures.log"
FORMAT, VERSION = "minigo-ablation-measures", 1


@dataclass(frozen=True)
class MeasureSettings:
    """The spec's `measures:` section, the same for every row (`jobs` changes no figure)."""

    value_set: str = "config/value_positions/9x9.json"
    scaling_readouts: tuple[int, ...] = (64, 128, 256)
    scaling_games: int = 40
    seed: int = 1
    jobs: int = 1

    @classmethod
    def from_spec(cls, section: object, where: str) -> MeasureSettings:
        """The settings of a `measures:` section; SystemExit naming the key when one is unknown or bad."""
        values = _sections.section_values(section, "measures", cls, where)
        for key, least in (("scaling_games", 1), ("seed", 0), ("jobs", 1)):
            _sections.integer(values, key, least, "measures", where)
        readouts = values["scaling_readouts"]
        try:
            if not isinstance(readouts, (list, tuple)) or not all(type(r) is int for r in readouts):
                raise argparse.ArgumentTypeError
            values["scaling_readouts"] = tuple(search_scaling.parse_readouts(",".join(map(str, readouts))))
        except argparse.ArgumentTypeError:
            raise SystemExit(
                f"{where}: measures.scaling_readouts must be a list of at least two increasing integers >= 1 "
                f"(e.g. [64, 128, 256]), got {readouts!r}"
            ) from None
        if not isinstance(values["value_set"], str) or not values["value_set"]:
            raise SystemExit(
                f"{where}: measures.value_set must be a position set file, got {values['value_set']!r}"
            )
        try:
            value_error.read_set(str(_path(values["value_set"])))
        except SystemExit as exc:
            raise SystemExit(f"{where}: measures.value_set: {exc}") from None
        return cls(**values)

    def record(self) -> dict:
        """What a row's measures were made with (what `measures.json` must match to be kept)."""
        return {
            "value_set": self.value_set,
            "value_set_sha256": hashlib.sha256(_path(self.value_set).read_bytes()).hexdigest(),
            "scaling_readouts": list(self.scaling_readouts),
            "scaling_games": self.scaling_games,
            "seed": self.seed,
        }


def _path(name: str) -> Path:
    return Path(name) if Path(name).is_absolute() else REPO / name


def value_measure(model: Path, settings: MeasureSettings) -> dict:
    """The model's value error on the set (`value_error.measure`) with the v = 0 baseline; a note instead when
    the set's board size is not the model's."""
    data = value_error.read_set(str(_path(settings.value_set)))
    n, board = data["board_size"], modelfile.read(str(model)).config.board_size
    if n != board:
        return {
            "board_size": board,
            "note": f"no {board}x{board} value set ({settings.value_set} is {n}x{n})",
        }
    positions, z, late = value_error.positions_of(data)
    found = value_error.measure(str(model), positions, z, late, threads=1)
    return {"positions": len(positions), "games": len(data["games"]), "all": found["all"],
            "last_third": found["last_third"], "baseline": value_error.baseline(z, late)}  # fmt: skip


def scaling_measure(model: Path, config: Path, settings: MeasureSettings) -> dict:
    """The model against itself at the readouts before (`search_scaling.scaling`), each pair's Elo per
    doubling with its interval, and the Elo over the range per doubling with its 95% half-width."""
    readouts = list(settings.scaling_readouts)
    args = argparse.Namespace(model=str(model), config=str(config), readouts=readouts, opponent=None,
                              games=settings.scaling_games, seed=settings.seed, threads=1)  # fmt: skip
    result = search_scaling.scaling(args)
    halves = []
    for row, previous in zip(result["rows"], readouts, strict=False):
        doublings = math.log2(row["readouts"] / previous)
        row["per_doubling_ci95"] = [round(x / doublings, 1) for x in row["ci95"]]
        halves.append((row["ci95"][1] - row["ci95"][0]) / 2)
    doublings = math.log2(readouts[-1] / readouts[0])
    half = math.hypot(*halves) / doublings
    result["span"] = [readouts[0], readouts[-1]]
    result["mean_per_doubling"] = round(sum(r["elo"] for r in result["rows"]) / doublings, 1)
    result["mean_per_doubling_half_width"] = round(half, 1) if math.isfinite(half) else None
    return result


def _kept(path: Path, record: dict) -> dict | None:
    """The measures file when it reads as one made with `record`'s settings and model; else None."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and all(data.get(k) == v for k, v in record.items())
    return data if ok and "value" in data and "scaling" in data else None


def _record(model: tuple[int, Path], settings: MeasureSettings) -> dict:
    return {"format": FORMAT, "version": VERSION, "settings": settings.record(), "model": str(model[1]),
            "generation": model[0]}  # fmt: skip


def measure_row(name: str, row_dir: Path, model: tuple[int, Path], settings: MeasureSettings) -> dict | None:
    """The row's measures, played now and written to `{row_dir}/measures.json`; None when they failed (the
    error is in `measures.log`)."""
    record = _record(model, settings)
    print(f"[{time.strftime('%H:%M:%S')}] measures of {name}: generation {model[0]}", flush=True)
    with open(row_dir / MEASURES_LOG, "w") as log, contextlib.redirect_stderr(log):
        try:
            value = value_measure(model[1], settings)
            scaling = scaling_measure(model[1], row_dir / "row.yaml", settings)
        except (Exception, SystemExit):  # one row's failure: logged, the other rows go on
            traceback.print_exc(file=log)
            print(f"  {name}: the measures failed; see {row_dir / MEASURES_LOG}", flush=True)
            return None
    data = {**record, "value": value, "scaling": scaling}
    tmp = row_dir / (MEASURES_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, row_dir / MEASURES_FILE)
    print(f"  {name} -> " + ", ".join(cells(data)), flush=True)
    return data


def measure_rows(root: Path, models: dict[str, tuple[int, Path] | None], settings: MeasureSettings) -> dict:
    """Every row's measures ({name: measures or None}): read back when kept, else measured, `settings.jobs`
    rows at once."""
    out: dict = {name: None for name in models}
    todo = []
    for name, model in models.items():
        if model is not None:
            out[name] = _kept(root / name / MEASURES_FILE, _record(model, settings))
            if out[name] is None:
                todo.append((name, root / name, model))
    if settings.jobs > 1 and len(todo) > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(settings.jobs, len(todo)), mp_context=context) as pool:
            found = list(pool.map(measure_row, *zip(*todo, strict=True), [settings] * len(todo)))
    else:
        found = [measure_row(*row, settings) for row in todo]
    out.update({row[0]: data for row, data in zip(todo, found, strict=True)})
    return out


def head(settings: MeasureSettings) -> list[str]:
    """The table's columns of the measures."""
    return ["value MSE", "sign right", f"Elo/doubling {settings.scaling_readouts[0]}-"
            f"{settings.scaling_readouts[-1]} (95%)"]  # fmt: skip


def cells(measures: dict | None) -> list[str]:
    """A row's cells under `head`: "-" without measures, the note without a value set of its size."""
    if measures is None:
        return ["-", "-", "-"]
    value, scaling = measures["value"], measures["scaling"]
    if "all" in value:
        error = [f"{value['all']['mse']:.3f}", f"{value['all']['sign_rate']:.1%}"]
    else:
        error = [f"no {value['board_size']}x{value['board_size']} set", "-"]
    half = scaling["mean_per_doubling_half_width"]
    spread = "(a sweep)" if half is None else f"+- {half:.0f}"
    return [*error, f"{scaling['mean_per_doubling']:+.0f} {spread}"]


def describe(settings: MeasureSettings) -> str:
    """The table's sentence on the measures' columns."""
    r = settings.scaling_readouts
    pairs = ", ".join(f"{b} vs {a}" for a, b in zip(r, r[1:], strict=False))
    return (
        f"value MSE, sign right: the value head on the positions of `{settings.value_set}` against the "
        "games' results (v = 0: MSE 1 less the draws' share, 50%). Elo/doubling: the model against itself at "
        f"the readouts before ({pairs}; {settings.scaling_games} games each, seed {settings.seed}), the "
        "pairs' Elo added up over the doublings, +- its 95% half-width."
    )
