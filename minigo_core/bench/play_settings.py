"""A player's search settings against the config's: `python -m minigo_core.bench play_settings`.

    python -m minigo_core.bench play_settings --model runs/local/models/gen0048.safetensors \\
        --set gumbel_considered=8 --set gumbel_c_scale=0.3 [--readouts 32] [--games 400] [--config C]

Which search makes the most of one model at a given readouts? Each `--set` is a row: a match of the model
searching with those settings (`KEY=VALUE[,KEY=VALUE...]`, keys of the search: `SETTABLE`) against the same
model with the config's match search (`minigo evaluate`'s: `evaluate.softpick_moves` seeded opening moves, no
noise, every move a full search), both at `--readouts` a move, colours alternating; row i plays seed + i, and
a match replays exactly. The table gives each row's score, its Elo difference with the 95% interval (Wilson)
and the CPU seconds; a change that only matters to self-play (noise, playout caps) has no key here. Prints the
CPU and the model.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from minigo_core.base.config import ConfigError, RunConfig, SearchSettings, load_config, validate
from minigo_core.base.machine import cpu_model
from minigo_core.base.project_files import project_dir
from minigo_core.bench.search_scaling import elo_of
from minigo_core.nn import modelfile
from minigo_core.play import match
from minigo_core.play.players import resolve_spec
from minigo_core.play.referee import MatchSettings

# the search's keys a row may set: how a player searches a move, not what self-play alone reads
SETTABLE = (
    "search",
    "parallel_readouts",
    "c_base",
    "c_init",
    "init_unvisited",
    "gumbel_considered",
    "gumbel_c_visit",
    "gumbel_c_scale",
    "score_utility",
    "score_utility_scale",
    "random_symmetry",
)


def parse_setting(text: str) -> dict[str, Any]:
    """`KEY=VALUE[,KEY=VALUE...]` as typed values of `SearchSettings` (argparse's type: a bad one exits)."""
    defaults = SearchSettings()
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in SETTABLE:
            raise argparse.ArgumentTypeError(
                f"--set {text!r}: {item!r} is not KEY=VALUE with KEY one of {', '.join(SETTABLE)}"
            )
        kind = type(getattr(defaults, key))
        try:
            if kind is bool:
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(value)
                out[key] = value.lower() in ("true", "1")
            else:
                out[key] = kind(value)
        except ValueError:
            why = f"--set {text!r}: {key} takes a {kind.__name__}, not {value!r}"
            raise argparse.ArgumentTypeError(why) from None
    if not out:
        raise argparse.ArgumentTypeError(f"--set {text!r}: give at least one KEY=VALUE")
    return out


def label(setting: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in setting.items())


def row_search(cfg: RunConfig, readouts: int, setting: dict[str, Any]) -> SearchSettings:
    """The match search with `setting`, checked as the run config checks its keys: each is set where the
    config holds it (`evaluate.parallel_readouts`, the rest `selfplay.KEY`; `random_symmetry` is not a config
    key) and the config validated, so a value out of range exits naming the key and what it allows."""
    config_keys = {k: v for k, v in setting.items() if k not in ("parallel_readouts", "random_symmetry")}
    try:
        changed = validate(
            replace(
                cfg,
                selfplay=replace(cfg.selfplay, **config_keys),
                evaluate=replace(
                    cfg.evaluate,
                    parallel_readouts=setting.get("parallel_readouts", cfg.evaluate.parallel_readouts),
                ),
            )
        )
    except ConfigError as exc:
        raise SystemExit(f"--set {label(setting)}: {exc}") from None
    search = match.match_search(changed, readouts)
    return replace(search, random_symmetry=setting.get("random_symmetry", search.random_symmetry))


def compare(args: argparse.Namespace) -> dict:
    cfg = load_config(args.config)
    cfg = replace(cfg, board_size=modelfile.read(args.model).config.board_size)
    base = match.match_search(cfg, args.readouts)
    model = resolve_spec(args.model, None, None, cfg.evaluate.gnugo)
    searches = [row_search(cfg, args.readouts, setting) for setting in args.set]  # all checked before a game
    rows = []
    for i, (setting, search) in enumerate(zip(args.set, searches, strict=True)):
        setup = replace(match.player_setup(cfg), search=search, threads=1)
        player = replace(model, name=f"{model.name}[{label(setting)}]")
        opponent = replace(model, name=f"{model.name}[config]")
        games = MatchSettings(args.games, cfg.board_size, cfg.komi, args.seed + i)
        results = match.run_match(player, opponent, games, setup, opponent_search=base, log=sys.stderr)
        t = results["totals"]
        score = t["player_wins"] + 0.5 * t["draws"]
        elo, lo, hi = elo_of(score, t["games"])
        ci95 = [round(lo, 1), round(hi, 1)]
        rows.append({"set": setting, "games": t["games"], "score": score, "elo": round(elo, 1), "ci95": ci95,
                     "cpu_seconds": results["cpu_seconds"]})  # fmt: skip
        print(f"  {label(setting):<40} {score:>6g}/{t['games']:<5} {elo:+6.0f} [{lo:+.0f}, {hi:+.0f}]",
              file=sys.stderr, flush=True)  # fmt: skip
    return {
        "model": args.model,
        "config": args.config,
        "cpu": cpu_model(),
        "readouts": args.readouts,
        "games_per_row": args.games,
        "base": {f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.name in SETTABLE},
        "rows": rows,
    }


def table(result: dict) -> str:
    base = ", ".join(f"{k} {v}" for k, v in result["base"].items() if k.startswith(("search", "gumbel")))
    lines = [
        f"CPU: {result['cpu']}; model {Path(result['model']).name}, {result['readouts']} readouts a move, "
        f"each row against the config's search ({base})",
        f"{'settings':<40} {'score':>12} {'Elo':>6} {'95%':>14} {'CPU s':>8}",
    ]
    for r in result["rows"]:
        ci = f"[{r['ci95'][0]:+.0f}, {r['ci95'][1]:+.0f}]"
        lines.append(f"{label(r['set']):<40} {r['score']:>6g}/{r['games']:<5} {r['elo']:>+6.0f} {ci:>14} "
                     f"{r['cpu_seconds']:>8.1f}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench play_settings", description=__doc__.split("\n")[0]
    )
    p.add_argument("--model", required=True, help="the model file (.safetensors)")
    p.add_argument("--set", type=parse_setting, action="append", required=True,
                   help="KEY=VALUE[,KEY=VALUE...]: a row's search settings (repeat: more rows)")  # fmt: skip
    p.add_argument("--readouts", type=int, default=32, help="readouts a move, both sides (default 32)")
    p.add_argument("--games", type=int, default=400, help="games a row (default 400)")
    p.add_argument("--config", default=str(project_dir() / "config.yaml"), help="the run config whose "
                   "match search is the baseline (default config.yaml)")  # fmt: skip
    p.add_argument("--seed", type=int, default=1, help="the matches' seed (row i plays seed + i)")
    p.add_argument("--json", default=None, help="also write the result as JSON to this file")
    args = p.parse_args(argv)
    if args.games < 1 or args.readouts < 1:
        p.error("--games and --readouts must be at least 1")
    result = compare(args)
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
