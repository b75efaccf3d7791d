"""The value head's error on positions whose results self-play did not make: `python -m minigo_core.bench
value_error`.

    python -m minigo_core.bench value_error --make-set runs/value_set_9x9.json [--games 40] \\
        [--players gnugo:10+r3,gnugo:10+r3] [--board-size 9] [--seed 1]
    python -m minigo_core.bench value_error [--set FILE] (--model M [--model M2 ...] | --run ROOT [--every K])
        [--json OUT]

`--make-set` plays a fixed set of games between outside programs (default GNU Go 10 with 3% random moves on
each side, so that the games differ; each game seeded from `--seed`), and writes their moves and results:
positions and outcomes a model's own games never produced, the same file for every model measured. The 9x9
set, `config/value_positions/9x9.json` (40 games of `gnugo:10+r3` against itself, seed 1), is the default
`--set`.

The measurement replays every position before each move of the set's games, asks the model's value head (the
fused inference net, torch-free) for the player to move's value v, and compares it with the game's result z
from that player's side (+1 won, -1 lost, 0 a draw): the mean squared error, the share of decided positions
whose sign v gets right, and the same over the last third of each game (where the result is nearly settled).
The baseline of the same run is the constant predictor v = 0 (its error is the share of decided positions,
1.0 without draws; its sign rate 50%): a value head that learned nothing useful scores near it. With `--run`,
every `--every`-th generation's model of a run (models/genGGGG.safetensors), so the table is the value's
error per generation. Prints the CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from minigo_core.base.machine import cpu_model
from minigo_core.base.project_files import project_dir
from minigo_core.base.runtime import Runtime
from minigo_core.data import layout
from minigo_core.game import coords, features, go
from minigo_core.nn import fused
from minigo_core.play.players import PlayerSetup
from minigo_core.play.referee import game_seeds, referee_game

DEFAULT_SET = project_dir() / "config" / "value_positions" / "9x9.json"
SET_FORMAT = "minigo-value-positions"
SET_VERSION = 1


def make_set(path: str, players: list[str], games: int, board_size: int, komi: float, seed: int) -> dict:
    """Play `games` games between the two player specs (colours alternating) and write the set file."""
    setup = PlayerSetup()
    sides = [setup.make(setup.resolve(spec)) for spec in players]
    records = []
    try:
        for i in range(games):
            black, white = (sides[0], sides[1]) if i % 2 == 0 else (sides[1], sides[0])
            record = referee_game(black, white, board_size, komi, game_seeds(seed, i))
            winner = {"black": 1, "white": -1, "draw": 0}[record["winner_colour"]]
            records.append({"moves": record["moves"], "result": record["result"], "winner": winner})
            print(
                f"game {i + 1}/{games}: {record['result']} in {len(record['moves'])} moves", file=sys.stderr
            )
    finally:
        for side in sides:
            side.close()
    data = {"format": SET_FORMAT, "version": SET_VERSION, "board_size": board_size, "komi": komi,
            "players": players, "seed": seed, "games": records}  # fmt: skip
    Path(path).write_text(json.dumps(data) + "\n")
    return data


def read_set(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(
            f"value_error: cannot read the position set {path}: {exc}; make one with --make-set"
        ) from None
    if data.get("format") != SET_FORMAT or data.get("version") != SET_VERSION:
        raise SystemExit(
            f"value_error: {path} is not a position set of this version ({SET_FORMAT} {SET_VERSION})"
        )
    return data


def positions_of(data: dict) -> tuple[list[go.Position], np.ndarray, np.ndarray]:
    """Every position before a move of the set's games; the result from the mover's side (+1, -1, 0); and
    whether the position is in the last third of its game."""
    n, komi = data["board_size"], data["komi"]
    positions, z, late = [], [], []
    for game in data["games"]:
        position = go.Position(n, komi)
        length = len(game["moves"])
        for k, vertex in enumerate(game["moves"]):
            positions.append(position)
            z.append(game["winner"] * position.to_play)
            late.append(k >= 2 * length / 3)
            position = position.play_move(coords.from_gtp(vertex, n))
    return positions, np.asarray(z, np.float32), np.asarray(late, bool)


def errors(values: np.ndarray, z: np.ndarray) -> dict:
    """Mean squared error, and the sign rate over decided positions (a value of exactly 0 counts half)."""
    decided = z != 0
    v = values[decided]
    right = np.where(v == 0, 0.5, (np.sign(v) == z[decided]).astype(np.float64))
    return {"mse": round(float(np.mean((values - z) ** 2)), 4), "sign_rate": round(float(np.mean(right)), 4)}


def baseline(z: np.ndarray, late: np.ndarray) -> dict:
    """The constant predictor v = 0 on the same positions: what a value head that learned nothing scores."""
    return {"all": errors(np.zeros_like(z), z), "last_third": errors(np.zeros_like(z[late]), z[late])}


def measure(model: str, positions: list[go.Position], z: np.ndarray, late: np.ndarray, threads: int) -> dict:
    net = fused.load(model, Runtime(threads=threads))
    values = []
    for start in range(0, len(positions), 256):
        planes = features.extract_batch(positions[start : start + 256], net.cfg.feature_set)
        values.append(net.predict(planes)[1])
    v = np.concatenate(values).astype(np.float32)
    return {"model": model, "all": errors(v, z), "last_third": errors(v[late], z[late])}


def models_of(args: argparse.Namespace) -> list[str]:
    if args.model:
        return list(args.model)
    found = sorted(Path(layout.models_dir(args.run)).glob("gen*.safetensors"))
    return [str(p) for i, p in enumerate(found) if i % args.every == 0 or i == len(found) - 1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m minigo_core.bench value_error", description=__doc__.split("\n")[0]
    )
    p.add_argument("--make-set", default=None, help="play the position set and write it to this file")
    p.add_argument("--players", default="gnugo:10+r3,gnugo:10+r3", help="the set's two player specs")
    p.add_argument("--games", type=int, default=40, help="games of the set (default 40)")
    p.add_argument("--board-size", type=int, default=9)
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--set", default=str(DEFAULT_SET), help="the position set to measure on (default: the "
                   "9x9 set of config/value_positions)")  # fmt: skip
    p.add_argument("--model", action="append", help="a model file (repeatable)")
    p.add_argument("--run", default=None, help="a run root: its generations' models")
    p.add_argument("--every", type=int, default=1, help="with --run: every K-th generation (and the last)")
    p.add_argument("--threads", type=int, default=1, help="DSP cores of the network (default 1)")
    p.add_argument("--json", default=None, help="also write the result as JSON to this file")
    args = p.parse_args(argv)
    if args.make_set:
        players = args.players.split(",")
        if len(players) != 2:
            p.error("--players: two player specs, comma-separated")
        make_set(args.make_set, players, args.games, args.board_size, args.komi, args.seed)
        return 0
    if bool(args.model) == bool(args.run):
        p.error("give either --model M or --run ROOT (or --make-set FILE)")
    data = read_set(args.set)
    positions, z, late = positions_of(data)
    zero = baseline(z, late)
    rows = [measure(m, positions, z, late, args.threads) for m in models_of(args)]
    games, sides, n = len(data["games"]), " vs ".join(data["players"]), data["board_size"]
    print(
        f"Value error on {len(positions)} positions of {games} games of {sides} ({n}x{n}); CPU: {cpu_model()}"
    )
    print(f"{'model':<48} {'MSE':>7} {'sign':>6}   {'MSE, last third':>15} {'sign':>6}")
    for r in [{"model": "baseline: v = 0", **zero}, *rows]:
        a, t = r["all"], r["last_third"]
        print(f"{Path(r['model']).name:<48} {a['mse']:>7.3f} {a['sign_rate']:>6.1%}   {t['mse']:>15.3f} "
              f"{t['sign_rate']:>6.1%}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu_model(), "baseline": zero, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
