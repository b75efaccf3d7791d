"""Strength against search: `python -m minigo_core.bench search_scaling --model M [options]`.

    python -m minigo_core.bench search_scaling --model runs/local/models/gen0036.safetensors \\
        [--readouts 32,64,128,256] [--games 40] [--opponent gnugo:1] [--config config.yaml] [--json OUT]

Does a model's strength still grow with its search? Each row is a match of the model at R readouts a move:
without `--opponent`, against the same model at the row before's readouts (the baseline measured in the same
run: every row's Elo is against the model at the previous readouts, and the first readouts is the anchor at
0); with `--opponent SPEC` (e.g. `gnugo:1`), every row against that player. The table gives each row's score,
its Elo difference with the 95% interval (Wilson), and the Elo per doubling of the readouts between
consecutive rows; the last line the Elo per doubling over the whole range (least squares on log2 readouts,
with the anchor's chain of differences without `--opponent`). A search that only follows the value head's
errors further shows a slope near 0 past some readouts (issue 44: today <= 0 past 32).

The games are `minigo evaluate`'s: the config's match search (`evaluate.softpick_moves` seeded opening moves,
no noise, every move a full search), colours alternating, the referee's seeds from `--seed`; a match replays
exactly. Prints the CPU and the model.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from minigo_core.base.config import RunConfig, load_config
from minigo_core.base.elo import elo_difference, wilson_interval
from minigo_core.base.machine import cpu_model
from minigo_core.base.project_files import project_dir
from minigo_core.nn import modelfile
from minigo_core.play import match
from minigo_core.play.players import PlayerSetup, ResolvedPlayer, resolve_spec
from minigo_core.play.referee import MatchSettings


def parse_readouts(text: str) -> list[int]:
    """`32,64,128` -> [32, 64, 128]: increasing, each >= 1."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--readouts {text!r}: integers, e.g. 32,64,128") from None
    if len(values) < 2 or values[0] < 1 or any(b <= a for a, b in zip(values, values[1:], strict=False)):
        raise argparse.ArgumentTypeError(f"--readouts {text!r}: at least two, increasing, each >= 1")
    return values


def elo_of(score: float, games: int) -> tuple[float, float, float]:
    """(Elo, low, high) of a score out of `games` (draws as halves), the interval the 95% Wilson one; a
    clean sweep is given the interval's bound instead of an infinite difference."""
    lo, hi = wilson_interval(score, games)
    rate = score / games if games else 0.5
    if rate >= 1 or rate <= 0:  # a sweep: the interval's inner bound stands for the difference
        rate = lo if rate >= 1 else hi
    return elo_difference(rate), elo_difference(lo), elo_difference(hi)


def slope_per_doubling(readouts: list[int], elos: list[float]) -> float:
    """Least-squares Elo per doubling of the readouts (the slope of Elo on log2 readouts)."""
    x = np.log2(np.asarray(readouts, dtype=np.float64))
    y = np.asarray(elos, dtype=np.float64)
    return float(np.polyfit(x, y, 1)[0])


def play_row(model: ResolvedPlayer, readouts: int, opponent: ResolvedPlayer, opponent_readouts: int | None,
             games: MatchSettings, setup: PlayerSetup, cfg: RunConfig) -> dict:  # fmt: skip
    """One match: the model at `readouts` against `opponent` (the model at `opponent_readouts`, or any
    player)."""
    player = replace(model, name=f"{model.name}@{readouts}")
    setup = replace(setup, search=match.match_search(cfg, readouts))
    opponent_search = None
    if opponent_readouts is not None:
        opponent = replace(opponent, name=f"{opponent.name}@{opponent_readouts}")
        opponent_search = match.match_search(cfg, opponent_readouts)
    results = match.run_match(player, opponent, games, setup, opponent_search=opponent_search, log=sys.stderr)
    t = results["totals"]
    score = t["player_wins"] + 0.5 * t["draws"]
    elo, lo, hi = elo_of(score, t["games"])
    return {"readouts": readouts, "opponent": opponent.name, "games": t["games"], "score": score,
            "elo": round(elo, 1), "ci95": [round(lo, 1), round(hi, 1)],
            "cpu_seconds": results["cpu_seconds"]}  # fmt: skip


def scaling(args: argparse.Namespace) -> dict:
    cfg = load_config(args.config)
    cfg = replace(cfg, board_size=modelfile.read(args.model).config.board_size)
    setup = replace(match.player_setup(cfg), threads=args.threads)
    model = resolve_spec(args.model, None, None, cfg.evaluate.gnugo)
    opponent = resolve_spec(args.opponent, None, None, cfg.evaluate.gnugo) if args.opponent else model
    rows, chain = [], [0.0]
    pairs = (
        [(r, None) for r in args.readouts]
        if args.opponent
        else list(zip(args.readouts[1:], args.readouts, strict=False))
    )
    for i, (readouts, previous) in enumerate(pairs):
        games = MatchSettings(args.games, cfg.board_size, cfg.komi, args.seed + i)
        row = play_row(model, readouts, opponent, previous, games, setup, cfg)
        rows.append(row)
        print(f"  {readouts:>6} readouts vs {row['opponent']:<28} {row['score']:>5g}/{row['games']:<4} "
              f"{row['elo']:+7.0f} [{row['ci95'][0]:+.0f}, {row['ci95'][1]:+.0f}]", file=sys.stderr,
              flush=True)  # fmt: skip
        if not args.opponent:
            chain.append(chain[-1] + row["elo"])
    if args.opponent:
        points, elos = [r["readouts"] for r in rows], [r["elo"] for r in rows]
        for a, b in zip(rows, rows[1:], strict=False):
            b["per_doubling"] = round((b["elo"] - a["elo"]) / math.log2(b["readouts"] / a["readouts"]), 1)
    else:
        points, elos = list(args.readouts), chain
        for row, previous in zip(rows, args.readouts[:-1], strict=True):
            row["per_doubling"] = round(row["elo"] / math.log2(row["readouts"] / previous), 1)
    return {
        "model": args.model,
        "cpu": cpu_model(),
        "board_size": cfg.board_size,
        "games_per_row": args.games,
        "opponent": args.opponent or "the model at the previous readouts",
        "rows": rows,
        "elo_by_readouts": {str(r): round(e, 1) for r, e in zip(points, elos, strict=True)},
        "elo_per_doubling": round(slope_per_doubling(points, elos), 1),
    }


def table(result: dict) -> str:
    lines = [
        f"Search scaling of {result['model']} ({result['board_size']}x{result['board_size']}), "
        f"{result['games_per_row']} games a row against {result['opponent']}; CPU: {result['cpu']}",
        f"{'readouts':>8}  {'vs':<30} {'score':>9}  {'Elo [95%]':<22} {'per doubling':>12}",
    ]
    for r in result["rows"]:
        per = "" if "per_doubling" not in r else f"{r['per_doubling']:+.0f}"
        row = (f"{r['readouts']:>8}  {r['opponent']:<30} {r['score']:>5g}/{r['games']:<3}  "
               f"{r['elo']:+6.0f} [{r['ci95'][0]:+.0f}, {r['ci95'][1]:+.0f}]")  # fmt: skip
        lines.append(row.ljust(66) + f"{per:>12}")
    span = [int(r) for r in result["elo_by_readouts"]]
    lines.append(
        f"Elo per doubling of the readouts, {min(span)} to {max(span)}: {result['elo_per_doubling']:+.0f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench search_scaling", description=__doc__.split("\n")[0]
    )
    p.add_argument("--model", required=True, help="the model file (.safetensors)")
    p.add_argument("--readouts", type=parse_readouts, default=parse_readouts("32,64,128,256"),
                   help="readouts of the rows, increasing (default 32,64,128,256)")  # fmt: skip
    p.add_argument("--games", type=int, default=40, help="games a row (default 40)")
    p.add_argument("--opponent", default=None, help="every row against this player spec (default: the model "
                   "at the previous row's readouts)")  # fmt: skip
    p.add_argument("--config", default=str(project_dir() / "config.yaml"), help="the run config whose "
                   "match search the model plays (default config.yaml)")  # fmt: skip
    p.add_argument("--seed", type=int, default=1, help="the matches' seed (row i plays seed + i)")
    p.add_argument("--threads", type=int, default=1, help="DSP cores of the model (default 1)")
    p.add_argument("--json", default=None, help="also write the result as JSON to this file")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error("--games must be at least 1")
    result = scaling(args)
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
