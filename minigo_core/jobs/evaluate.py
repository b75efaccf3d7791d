"""`minigo evaluate`: play a match between two players; write its results file (and SGF), say the win rate.

The match itself is `minigo_core.search.match` (the referee, seeds, totals); its file is
`minigo_core.data.matchfile`.
"""

from __future__ import annotations

import argparse
import json

from minigo_core.base.command import Command, UsageError
from minigo_core.data import storage
from minigo_core.search import match
from minigo_core.search.players import PlayerError


def evaluate(args: argparse.Namespace) -> None:
    cfg = Command.config(args)
    root = args.root or cfg.root
    e = cfg.evaluate
    games = e.games if args.games is None else args.games
    if games < 0:
        raise UsageError(f"--games must be >= 0, got {games}")
    search = match.search_settings(cfg, args.readouts, args.softpick_moves, args.resign_threshold)
    player_spec, opponent_spec = match.resolve_players(cfg, args.player, args.opponent, args.generation, root)
    results = match.run_match(
        player_spec,
        opponent_spec,
        games=games,
        board_size=cfg.board_size,
        komi=cfg.komi,
        search=search,
        seed=cfg.seed,
        generation=args.generation,
        early_stop=e.early_stop if args.early_stop is None else args.early_stop,
        run_cfg=cfg,
        backend=args.backend or cfg.model.backend,
        threads=cfg.selfplay.threads if args.threads is None else max(1, args.threads),
        max_moves=args.max_moves,
    )
    results["command"] = ["minigo", "evaluate", *args.argv]
    storage.write_text(args.out, json.dumps(results, indent=1) + "\n")
    if args.sgf_dir:
        match.export_sgf(results, args.sgf_dir)
    print(match.summary_line(results))


def cli_main(argv: list[str]) -> int:
    # PlayerError: an engine failed mid-match; ValueError includes ModelFileError
    cmd = Command(
        "evaluate",
        "Play a match between two players; write the games, the win rate and its 95% interval.",
        errors=(PlayerError, ValueError, OSError),
    )
    parser = cmd.parser
    cmd.add_config()
    parser.add_argument(
        "--generation",
        type=int,
        default=None,
        help="the generation evaluated: the default player, and what 'previous' refers to",
    )
    parser.add_argument(
        "--opponent",
        "--opponent-model",
        dest="opponent",
        required=True,
        help="gen0, previous, genN, gnugo:LEVEL, random, uct:N, 'gtp:<cmd>', or a model file",
    )
    parser.add_argument("--player", default=None, help="default: the generation's model (same spec forms)")
    parser.add_argument("--out", required=True, help="results JSON: {root}/eval/genG/vs_<opponent>.json")
    parser.add_argument("--games", type=int, default=None, help="games (default: config evaluate.games)")
    parser.add_argument("--readouts", type=int, default=None, help="readouts (default: evaluate.readouts)")
    parser.add_argument(
        "--softpick-moves",
        type=int,
        default=None,
        help="opening moves drawn in proportion to visits (default: evaluate.softpick_moves)",
    )
    parser.add_argument(
        "--resign-threshold",
        type=float,
        default=None,
        help="models resign below this root value (default: selfplay.resign_threshold)",
    )
    parser.add_argument(
        "--early-stop",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stop once the result against 50%% is decided (default: evaluate.early_stop)",
    )
    parser.add_argument("--backend", choices=("dsp", "torch"), default=None, help="default: model.backend")
    parser.add_argument("--threads", type=int, default=None, help="DSP cores (default: selfplay.threads)")
    parser.add_argument("--max-moves", type=int, default=None, help="move cap (default 2 N^2)")
    parser.add_argument("--sgf-dir", default=None, help="also write each game as SGF into this directory")
    parser.add_argument("--root", default=None, help="run root (default: the config's root)")
    parser.set_defaults(argv=list(argv))
    return cmd.run(argv, evaluate)
