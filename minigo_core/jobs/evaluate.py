"""`minigo evaluate`: play a match between two players; write its results file (and SGF), say the win rate.

The match itself is `minigo_core.play.match` (the players, the results, the totals; its games are
`minigo_core.play.referee`'s); its file is `minigo_core.data.matchfile`.

By default the models search a fixed number of readouts a move (`--readouts`, `evaluate.readouts`) and a
rerun replays the match exactly. `--move-time MS` makes every model side search MS milliseconds a move
instead, and `--equal-time` gives the player the opponent's measured mean time per move on this machine
(`equal_time.measure_time_per_move`: `--equal-time-probe-games` probe games before the match). A timed search
makes at least its first chunk of readouts (`SearchSettings.chunk_readouts`, or Gumbel's considered moves)
and at most `--max-readouts` (the same semantics as `minigo gtp --move-time`): the floor is that small, not
`--readouts`, so a model given a short budget does not take more time than it was given. Time-budgeted games
depend on the machine's speed and load: their results file says `"reproducible": false`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from minigo_core.base.command import Command, UsageError
from minigo_core.data import storage
from minigo_core.play import equal_time, match
from minigo_core.play.players import PlayerError, PlayerSetup
from minigo_core.play.referee import MatchSettings, match_seed
from minigo_core.report import tensorboard
from minigo_core.search.timed_search import DEFAULT_MAX_READOUTS


def evaluate(args: argparse.Namespace) -> None:
    cfg = Command.config(args)
    root = args.root or cfg.root
    e = cfg.evaluate
    games = e.games if args.games is None else args.games
    if games < 0:
        raise UsageError(f"--games must be >= 0, got {games}")
    search = match.match_search(cfg, args.readouts, args.softpick_moves, args.resign_threshold)
    player_spec, opponent_spec = match.resolve_players(cfg, args.player, args.opponent, args.generation, root)
    if args.max_readouts < 1:
        raise UsageError(f"--max-readouts must be at least 1, got {args.max_readouts}")
    if args.equal_time_probe_games < 1:
        raise UsageError(f"--equal-time-probe-games must be at least 1, got {args.equal_time_probe_games}")
    opponent_search = None
    if args.move_time is not None:
        if args.equal_time:
            raise UsageError("give --move-time MS or --equal-time, not both")
        if not args.move_time > 0:
            raise UsageError(f"--move-time must be a positive number of milliseconds, got {args.move_time:g}")
        if "model" not in (player_spec.kind, opponent_spec.kind):
            raise UsageError(
                f"--move-time: neither {player_spec.name} nor {opponent_spec.name} is a model; only a model "
                "searches by a time budget per move"
            )
        search = replace(search, move_time=args.move_time / 1000.0, max_readouts=args.max_readouts)
    elif args.equal_time:
        if player_spec.kind != "model":
            raise UsageError(
                f"--equal-time: the player {player_spec.name} is not a model; only a model searches by a "
                "time budget per move"
            )
        opponent_search = search  # the opponent plays as it always does: its time is the measure
        search = replace(search, max_readouts=args.max_readouts)
    settings = MatchSettings(
        games=games,
        board_size=cfg.board_size,
        komi=cfg.komi,
        seed=match_seed(cfg.seed, args.generation, player_spec.name, opponent_spec.name),
        early_stop=e.early_stop if args.early_stop is None else args.early_stop,
        max_moves=args.max_moves,
    )
    setup = PlayerSetup(
        search=search,
        backend=args.backend or cfg.model.backend,
        threads=cfg.selfplay.threads if args.threads is None else max(1, args.threads),
        gnugo=cfg.evaluate.gnugo,
    )
    results = match.run_match(
        player_spec,
        opponent_spec,
        settings,
        setup,
        opponent_search=opponent_search,
        generation=args.generation,
        equal_time=equal_time.EqualTime(args.equal_time_probe_games, args.equal_time_clock)
        if args.equal_time
        else None,
    )
    results["command"] = ["minigo", "evaluate", *args.argv]
    storage.remove_stale_temporaries([args.out])  # what a killed attempt left
    storage.write_text(args.out, json.dumps(results, indent=1) + "\n")
    tensorboard.update(root, tensorboard.write_match, root, args.out)  # a match file of the run's: its point
    if args.sgf_dir:
        match.export_sgf(results, args.sgf_dir)
    print(match.summary_line(results))


def cli_main(argv: list[str]) -> int:
    # PlayerError: an outside program failed mid-match; ValueError includes ModelFileError
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
    parser.add_argument(
        "--move-time",
        type=float,
        default=None,
        metavar="MS",
        help="every model side searches MS milliseconds a move instead of --readouts (the games are then not "
        "reproducible)",
    )
    parser.add_argument(
        "--equal-time",
        action="store_true",
        help="the player (a model) searches, each move, the opponent's mean time per move measured on this "
        "machine in probe games before the match (not reproducible)",
    )
    parser.add_argument(
        "--equal-time-probe-games",
        type=int,
        default=equal_time.EQUAL_TIME_PROBE_GAMES,
        metavar="N",
        help=f"games of the probe that measures the opponent's time per move (default "
        f"{equal_time.EQUAL_TIME_PROBE_GAMES})",
    )
    parser.add_argument(
        "--equal-time-clock",
        choices=equal_time.CLOCKS,
        default=equal_time.EQUAL_TIME_CLOCK,
        help="what --equal-time measures and the player's budget runs on: cpu, the opponent's CPU seconds a "
        "move against this process's (the same computing a move on a loaded machine), or wall (default "
        f"{equal_time.EQUAL_TIME_CLOCK})",
    )
    parser.add_argument(
        "--max-readouts",
        type=int,
        default=DEFAULT_MAX_READOUTS,
        metavar="N",
        help=f"the ceiling of a search by time (default {DEFAULT_MAX_READOUTS}); its floor is one chunk of "
        "readouts",
    )
    parser.add_argument("--sgf-dir", default=None, help="also write each game as SGF into this directory")
    parser.add_argument("--root", default=None, help="run root (default: the config's root)")
    parser.set_defaults(argv=list(argv))
    return cmd.run(argv, evaluate)
