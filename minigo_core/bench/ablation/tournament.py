"""The ablation's older rating (a spec with `tournament:` and no `rating:`, config/ablation/rows.yaml): every
row's last model plays every other row's (`games_per_pair`) and each fixed opponent (`opponents`, GNU Go
levels; `opponent_games`) with `minigo evaluate`; one Bradley-Terry fit over all those games puts the rows on
one scale with the first fixed opponent at Elo 0, each with its 95% interval
(`minigo_core.rating.bradley_terry.fit_bradley_terry`). A match whose results file exists is not played
again. The scale is the tournament's own: its Elo figures do not compare with another tournament's.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minigo_core.data.matchfile import read_match
from minigo_core.rating import bradley_terry

REPO = Path(__file__).resolve().parents[3]


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


def report(spec: dict, results: list[dict]) -> None:
    """The tournament, its table printed and written to `{root}/ablation.md`, the fit to `ablation.json`."""
    anchor = list((spec.get("tournament") or {}).get("opponents", ["gnugo:1"]))[0]
    fit = tournament(spec, results)
    text = table(results, fit, anchor)
    print(text)
    (spec["root"] / "ablation.md").write_text(text + "\n")
    summary = {"rows": results, "elo": fit.elo, "stderr": fit.stderr, "games": fit.games, "anchor": anchor}
    (spec["root"] / "ablation.json").write_text(json.dumps(summary, indent=1))
