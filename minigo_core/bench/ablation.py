"""`python -m minigo_core.bench ablation --spec config/ablation/rows.yaml`: an ablation at equal wall time.

Every row of the spec is a real run (`minigo run`, the local profile, this machine's cores) of `config.yaml`
with the spec's `common` keys and the row's `set` keys merged over it, stopped after `budget_minutes` of wall
time (SIGINT to the run's process group: Snakemake stops its jobs and marks their outputs incomplete). The
row's result is its last finished model. Then a tournament: every row's last model plays every other row's
(`games_per_pair`) and each fixed opponent (`opponents`, GNU Go levels; `opponent_games`) with
`minigo evaluate`; one Bradley-Terry fit over all those games puts the rows on one scale with the first
fixed opponent at Elo 0, each with its 95% interval (`minigo_core.rating.bradley_terry.fit_bradley_terry`).

Rows and matches already done (their result files exist) are not run again, so the command resumes.
Prints a Markdown table (also written to `{root}/ablation.md`, with the JSON in `{root}/ablation.json`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from minigo_core.base.config import from_dict
from minigo_core.data import layout
from minigo_core.data.matchfile import read_match
from minigo_core.rating import bradley_terry

REPO = Path(__file__).resolve().parents[2]
STOP_GRACE_S = 120  # after SIGINT, how long Snakemake gets to stop its jobs before SIGTERM


@dataclass
class Row:
    name: str
    why: str
    overrides: dict
    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "row.yaml"

    @property
    def result_path(self) -> Path:
        return self.root / "row_result.json"


def load_spec(path: str) -> tuple[dict, list[Row]]:
    spec = yaml.safe_load(Path(path).read_text())
    if not isinstance(spec, dict) or not isinstance(spec.get("rows"), list):
        raise SystemExit(f"ablation spec {path}: needs a mapping with a `rows` list")
    root = Path(spec.get("root", "runs/ablation"))
    root = root if root.is_absolute() else REPO / root
    rows = []
    for entry in spec["rows"]:
        name = str(entry["name"])
        rows.append(Row(name, str(entry.get("why", "")), dict(entry.get("set") or {}), root / name))
    if len({r.name for r in rows}) != len(rows):
        raise SystemExit(f"ablation spec {path}: row names must be unique")
    return {**spec, "root": root}, rows


def merge(base: dict, over: dict) -> dict:
    """`over` merged into `base` key by key, nested mappings merged too (Snakemake's --configfile rule)."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def row_config(spec: dict, row: Row) -> dict:
    """config.yaml, then the spec's `common`, then the row's `set`; the row's own run root."""
    data = yaml.safe_load((REPO / "config.yaml").read_text())
    merge(data, json.loads(json.dumps(spec.get("common") or {})))
    merge(data, json.loads(json.dumps(row.overrides)))
    data["root"] = str(row.root / "run")
    from_dict(data)  # validate now: a bad row fails before any run starts
    return data


def last_model(run_root: Path, generations: int) -> int | None:
    done = [g for g in range(generations + 1) if Path(layout.model_path(str(run_root), g)).exists()]
    return max(done) if done else None


def run_row(spec: dict, row: Row, budget_s: float) -> dict:
    """One row's run, stopped after `budget_s` of wall time; its result (last model) to row_result.json."""
    data = row_config(spec, row)
    row.root.mkdir(parents=True, exist_ok=True)
    row.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    cmd = [sys.executable, "-m", "minigo_core.cli", "run", "--profile", "profiles/local",
           "--config", str(row.config_path), "--no-report"]  # fmt: skip
    start = time.time()
    with open(row.root / "run.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            _stop(proc)
    wall = time.time() - start
    gen = last_model(row.root / "run", int(data["generations"]))
    result = {"name": row.name, "why": row.why, "set": row.overrides, "budget_s": budget_s,
              "wall_s": round(wall, 1), "last_generation": gen,
              "model": layout.model_path(str(row.root / "run"), gen) if gen is not None else None,
              "games": (gen or 0) * int(data["selfplay"]["games"]), "exit": proc.returncode}  # fmt: skip
    row.result_path.write_text(json.dumps(result, indent=1))
    return result


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGTERM, 30), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _match(row_cfg: Path, player: str, opponent: str, games: int, readouts: int, out: Path) -> Path:
    if not out.exists():
        cmd = [sys.executable, "-m", "minigo_core.cli", "evaluate", "--config", str(row_cfg),
               "--player", player, "--opponent", opponent, "--games", str(games), "--readouts", str(readouts),
               "--no-early-stop", "--threads", "1", "--out", str(out)]  # fmt: skip
        log = out.with_suffix(".log")
        with open(log, "w") as handle:
            code = subprocess.call(cmd, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
        if code != 0:
            raise RuntimeError(f"match {player} vs {opponent} failed (exit {code}); see {log}")
    return out


def tournament(spec: dict, results: list[dict]) -> bradley_terry.Ratings:
    """Every row's last model against every other row's and the fixed opponents; one Bradley-Terry fit."""
    t = spec.get("tournament") or {}
    readouts, pair_games = int(t.get("readouts", 32)), int(t.get("games_per_pair", 8))
    opponents, opp_games = list(t.get("opponents", ["gnugo:1"])), int(t.get("opponent_games", 20))
    out_dir = spec["root"] / "tournament"
    out_dir.mkdir(parents=True, exist_ok=True)
    played = [r for r in results if r["model"]]
    cfg_of = {r["name"]: spec["root"] / r["name"] / "row.yaml" for r in played}
    jobs = []  # (player name, opponent name, args of _match)
    for a, b in itertools.combinations(played, 2):
        out = out_dir / f"{a['name']}__{b['name']}.json"
        jobs.append(
            (a["name"], b["name"], (cfg_of[a["name"]], a["model"], b["model"], pair_games, readouts, out))
        )
    for r, opp in itertools.product(played, opponents):
        out = out_dir / f"{r['name']}__{opp.replace(':', '-')}.json"
        jobs.append((r["name"], opp, (cfg_of[r["name"]], r["model"], opp, opp_games, readouts, out)))
    with ThreadPoolExecutor(max_workers=int(t.get("parallel", 2))) as pool:
        files = list(pool.map(lambda job: _match(*job[2]), jobs))
    games = []
    for (player, opponent, _), path in zip(jobs, files, strict=True):
        games += [(player, opponent, s) for s in read_match(str(path)).scores]
    return bradley_terry.fit_bradley_terry(games, anchor=opponents[0])


def table(results: list[dict], fit: bradley_terry.Ratings, anchor: str) -> str:
    lines = [f"| row | what changes | generations in the budget | Elo vs {anchor} [95%] | games |",
             "|---|---|---|---|---|"]  # fmt: skip
    for r in sorted(results, key=lambda r: -fit.elo.get(r["name"], float("-inf"))):
        if r["name"] in fit.elo:
            lo, hi = fit.interval(r["name"])
            elo = f"{fit.elo[r['name']]:+.0f} [{lo:+.0f}, {hi:+.0f}]"
        else:
            elo = "no model"
        lines.append(
            f"| `{r['name']}` | {r['why']} | {r['last_generation']} | {elo} | {fit.games.get(r['name'], 0)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench ablation", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--spec", default="config/ablation/rows.yaml", help="the ablation spec (config/ablation/rows.yaml)"
    )
    parser.add_argument("--rows", default="", help="comma-separated row names to run (default: all)")
    parser.add_argument("--no-tournament", action="store_true", help="only run the rows")
    args = parser.parse_args(argv)
    spec, rows = load_spec(args.spec)
    wanted = [r for r in rows if not args.rows or r.name in args.rows.split(",")]
    budget_s = 60.0 * float(spec.get("budget_minutes", 10))
    results = []
    for row in rows:
        if row.result_path.exists():
            results.append(json.loads(row.result_path.read_text()))
        elif row in wanted:
            print(
                f"[{time.strftime('%H:%M:%S')}] row {row.name}: {row.why} ({budget_s / 60:.0f} min)",
                flush=True,
            )
            results.append(run_row(spec, row, budget_s))
            print(
                f"  -> generation {results[-1]['last_generation']} in {results[-1]['wall_s']:.0f} s",
                flush=True,
            )
    if args.no_tournament or len(results) < 1:
        return 0
    anchor = list((spec.get("tournament") or {}).get("opponents", ["gnugo:1"]))[0]
    fit = tournament(spec, results)
    text = table(results, fit, anchor)
    print(text)
    (spec["root"] / "ablation.md").write_text(text + "\n")
    summary = {"rows": results, "elo": fit.elo, "stderr": fit.stderr, "games": fit.games, "anchor": anchor}
    (spec["root"] / "ablation.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
