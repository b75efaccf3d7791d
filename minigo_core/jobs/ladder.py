"""`minigo ladder`: the fixed Elo ladder of a board size: calibrate it, show it, rate a player on it.

    minigo ladder calibrate --board-size 9 [--rungs random,uct:2,...] [--games-per-pair G] [--jobs J]
                            [--seed S] [--extend | --fit-only] [--out-dir config/ladder]
    minigo ladder calibrate --board-size 9 --target-ci 50 [--max-cpu-hours H] [--batch 20] [--jobs J]
    minigo ladder show --board-size 9 [--json]
    minigo ladder rate SPEC --board-size 9 [--config C] [--out JSON] [--without RUNG[,RUNG...]]
                       [--start-elo E | --start-from JSON | --continue-from JSON]
    minigo ladder check RUNG RUNG --board-size 9 --seed S [--games 60] [--out JSON]  (the table predicts?)
    minigo ladder check --rating JSON RUNG --board-size 9 --seed S [--games 60]   (does a rating hold?)

The calibration is `minigo_core.rating.calibration`; the rating walk `minigo_core.rating.ladder_rate`; the
checks `minigo_core.rating.ladder_check`; the table and the fits `minigo_core.rating.ladder`.
"""

from __future__ import annotations

import argparse
import json
import logging

from minigo_core.base.command import Command, UsageError
from minigo_core.base.config import RunConfig, load_config
from minigo_core.data import storage
from minigo_core.play import match
from minigo_core.play.players import PlayerError
from minigo_core.rating import calibration as cal
from minigo_core.rating import ladder_check, ladder_rate
from minigo_core.rating.ladder import CGOS_ANCHOR, CGOS_ANCHOR_ELO, LadderError
from minigo_core.report import tensorboard

log = logging.getLogger(__name__)


def calibrate(args: argparse.Namespace) -> None:
    cfg = load_config(args.config) if args.config else RunConfig()
    keys = ("rungs", "games_per_pair", "reach", "seed", "komi")
    options = {k: getattr(args, k) for k in keys} | {"ladder_dir": args.out_dir}
    adaptive = args.target_ci is not None
    if adaptive:
        if (
            args.target_ci <= 0
            or (args.max_cpu_hours is not None and args.max_cpu_hours <= 0)
            or args.batch < 1
        ):
            raise UsageError("--target-ci, --max-cpu-hours and --batch must be > 0")
        if args.fit_only:
            raise UsageError("--target-ci plays games; use it without --fit-only")
        if options["games_per_pair"] is None:
            options["games_per_pair"] = cal.ADAPTIVE_FIRST_GAMES
    try:
        design = cal.design_from_options(args.board_size, cfg, options, args.extend or adaptive)
    except LadderError as exc:
        raise UsageError(str(exc)) from None
    if adaptive:
        _calibrate_adaptive(args, design)
        return
    log.info(
        "%d rungs, %d pairs of %d games: %s",
        len(design.rungs),
        len(design.pairs()),
        design.games_per_pair,
        design.pair_dir,
    )
    ladder, played = cal.calibrate(
        design,
        cal.FitSettings(args.anchor, args.anchor_elo, ["minigo", "ladder", *args.argv]),
        jobs=args.jobs,
        max_new_games=args.max_new_games,
        fit_only=args.fit_only,
        log=log.info,
        progress=args.verbose,
    )
    if ladder is None:
        print(f"{played} new game(s); some pairs still miss games: run the same command again to go on")
        return
    print(cal.format_table(ladder))
    print(f"\nwritten {design.ladder_file} ({played} new game(s))")


def _calibrate_adaptive(args: argparse.Namespace, design: cal.CalibrationDesign) -> None:
    from minigo_core.rating import adaptive_calibration as adaptive  # lazy: only the adaptive calibration

    log.info("%d rungs to +-%g Elo: %s", len(design.rungs), args.target_ci, design.pair_dir)
    aim = adaptive.AdaptiveSettings(
        target=args.target_ci,
        batch=args.batch,
        max_cpu_s=None if args.max_cpu_hours is None else 3600 * args.max_cpu_hours,
        round_cpu_s=args.round_cpu_seconds,
    )
    ladder, played = adaptive.run_adaptive(
        design,
        cal.FitSettings(args.anchor, args.anchor_elo, ["minigo", "ladder", *args.argv]),
        aim,
        jobs=args.jobs,
        log=log.info,
        progress=args.verbose,
    )
    if ladder is None:
        print(f"{played} new game(s); no table yet: run the same command again to go on")
        return
    print(cal.format_table(ladder))
    worst = max((r.ci95[1] - r.ci95[0]) / 2 for r in ladder.rungs)
    state = "reached" if worst <= args.target_ci else "not reached yet (run the same command to go on)"
    print(f"\nwritten {design.ladder_file} ({played} new game(s)); +-{args.target_ci:g} {state}")


def show(args: argparse.Namespace) -> None:
    try:
        ladder = cal.read_ladder_at(args.board_size, args.ladder_dir)
    except LadderError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(ladder.to_json(), indent=1) if args.json else cal.format_table(ladder))


def rate(args: argparse.Namespace) -> None:
    cfg = load_config(args.config) if args.config else None
    if cfg is not None and cfg.board_size != args.board_size:
        raise UsageError(f"{args.config}: board_size is {cfg.board_size}, not --board-size {args.board_size}")
    for name in ("target_half_width", "max_games", "batch", "min_games_per_rung"):
        if getattr(args, name) <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}")
    try:
        start_elo = ladder_rate.start_from(args.start_from) if args.start_from else args.start_elo
    except ValueError as exc:
        raise UsageError(f"--start-from {exc}") from None
    setup = match.player_setup(cfg)
    try:
        resolved = setup.resolve(args.spec, cfg.root if cfg else None)
        table, without = ladder_rate.without_rungs(
            cal.read_ladder_at(args.board_size, args.ladder_dir), _names(args.without)
        )
        ladder, left_out, note = ladder_rate.playable_rungs(table, setup.gnugo)
    except (LadderError, PlayerError) as exc:
        raise UsageError(str(exc)) from None
    if note:
        log.warning("%s", note)
    if resolved.kind == "model" and cfg is None:
        raise UsageError(f"rating the model {args.spec!r} needs --config (its search: evaluate.readouts)")
    komi = float(ladder.provenance.get("komi", cfg.komi if cfg else RunConfig().komi))
    if cfg is not None and cfg.komi != komi:
        log.warning(
            "the ladder was calibrated at komi %g; rating at %g, not the config's %g", komi, komi, cfg.komi
        )
    carried: tuple = ()
    if args.continue_from:  # its own earlier rating: its games count here
        try:
            start_elo, carried = ladder_rate.continue_from(args.continue_from, resolved.name, ladder, komi)
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"--continue-from {exc}") from None
    request = ladder_rate.RatingRequest(
        komi=komi,
        seed=args.seed,
        start_elo=start_elo,
        carried=carried,
        target_half_width=args.target_half_width,
        max_games=args.max_games,
        batch=args.batch,
        min_games_per_rung=args.min_games_per_rung,
    )
    result = ladder_rate.rate_player(resolved, ladder, request, setup, log=log.info)
    result["without"] = without
    if args.continue_from:
        result["continued_from"] = {"file": args.continue_from, "games": sum(n for _, _, n in carried)}
    if left_out:
        result["rungs_left_out"] = {"rungs": left_out, "why": note}
    result["command"] = ["minigo", "ladder", *args.argv]
    if args.out:
        storage.remove_stale_temporaries([args.out])  # what a killed attempt left
        storage.write_text(args.out, json.dumps(result, indent=1) + "\n")
        if cfg is not None:  # the run's ladder.json (or first rating): its Elo for TensorBoard
            tensorboard.update(cfg.root, tensorboard.write_rating, cfg.root, args.out)
    print(ladder_rate.rating_line(result))


def _names(text: str | None) -> list[str]:
    """`--without uct:64,gnugo:1` -> ["uct:64", "gnugo:1"]."""
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def check(args: argparse.Namespace) -> None:
    cfg = load_config(args.config) if args.config else None
    if args.games < 1:
        raise UsageError(f"--games must be >= 1, got {args.games}")
    if len(args.players) != (1 if args.rating else 2):
        got = f"got {len(args.players)}: {' '.join(args.players)}"
        if args.rating:
            raise UsageError(f"with --rating, give one opponent (a rung the rating did not play), {got}")
        raise UsageError(f"give two rungs (minigo ladder check A B), or --rating FILE and one rung; {got}")
    gnugo = cfg.evaluate.gnugo if cfg else None
    out_dir = args.out_dir or storage.join(str(cal.REPO / cal.LADDER_DIR), "checks")
    try:
        ladder = cal.read_ladder_at(args.board_size, args.ladder_dir)
        if args.rating:
            result = ladder_check.check_rating_file(
                ladder, args.rating, args.players[0], args.games, args.seed, out_dir, cfg
            )
        else:
            names = cal.rung_names(args.players, gnugo)
            for name in names:
                ladder.rung(name)
            result = ladder_check.check(ladder, names[0], names[1], args.games, args.seed, out_dir, gnugo)
    except (LadderError, PlayerError) as exc:
        raise UsageError(str(exc)) from None
    if args.out:
        storage.write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(ladder_check.check_line(result))


def _add_subcommands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{calibrate,show,rate,check}")
    c = sub.add_parser("calibrate", help="play the calibration matches (resumable) and fit the ladder")
    c.add_argument(
        "--rungs", default=None, help="comma-separated player specs, weakest first (default: built in)"
    )
    c.add_argument("--games-per-pair", type=int, default=None, help="games per pair (9x9: 100, 5x5: 40)")
    c.add_argument("--reach", type=int, default=None, help="each rung plays the next R above it (default 2)")
    c.add_argument("--seed", type=int, default=None, help=f"calibration seed (default {cal.DEFAULT_SEED})")
    c.add_argument("--komi", type=float, default=None, help="default: the config's komi (7.5)")
    c.add_argument("--config", default=None, help="run config: komi and the GNU Go path")
    c.add_argument("--jobs", type=int, default=1, help="pairs played at once, one process each")
    c.add_argument("--max-new-games", type=int, default=None, help="at most this many new games per pair now")
    c.add_argument(
        "--target-ci",
        type=float,
        default=None,
        help="adaptive: play the games that narrow the widest interval most per CPU-second until every "
        "rung's 95%% interval (the other rungs held fixed) is within +-H Elo (first --games-per-pair "
        "games per neighbours, default 10)",
    )
    c.add_argument("--max-cpu-hours", type=float, default=None, help="with --target-ci: stop after this")
    c.add_argument("--batch", type=int, default=20, help="with --target-ci: games per chosen pair a round")
    c.add_argument(
        "--round-cpu-seconds",
        type=float,
        default=60.0,
        help="with --target-ci: a cheap pair plays this many CPU-seconds of games a round (at most 2000)",
    )
    c.add_argument("--anchor", default=CGOS_ANCHOR, help=f"the rung held fixed (default {CGOS_ANCHOR})")
    c.add_argument("--anchor-elo", type=float, default=CGOS_ANCHOR_ELO, help="its rating (default 1800)")
    c.add_argument("--out-dir", default=None, help="ladder folder (default: the repository's config/ladder)")
    mode = c.add_mutually_exclusive_group()
    mode.add_argument("--extend", action="store_true", help="add rungs or games to a stored calibration")
    mode.add_argument("--fit-only", action="store_true", help="refit from the stored games, play nothing")
    s = sub.add_parser("show", help="the table: rung, Elo, 95%% interval, games")
    s.add_argument("--json", action="store_true", help="exactly the ladder file's JSON")
    r = sub.add_parser("rate", help="rate a player (any player spec) against the rungs around it")
    r.add_argument("spec", help="a model file, genN (with --config), gnugo:L, uct:N, random, 'gtp:<cmd>'")
    r.add_argument("--config", default=None, help="run config: a model's search (evaluate.readouts)")
    start = r.add_mutually_exclusive_group()
    start.add_argument("--start-elo", type=float, default=None, help="where to start (the previous rating)")
    start.add_argument("--start-from", default=None, help="start at the rating in this --out file")
    start.add_argument("--continue-from", default=None,
                       help="go on from this --out file of the same player: its games count")  # fmt: skip
    r.add_argument("--target-half-width", type=float, default=100.0, help="stop at a 95%% interval of +-this")
    r.add_argument("--max-games", type=int, default=400, help="game budget (default 400)")
    r.add_argument("--batch", type=int, default=ladder_rate.DEFAULT_BATCH, help="games per step (default 4)")
    r.add_argument("--min-games-per-rung", type=int, default=10, help="before a rung counts (default 10)")
    r.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    r.add_argument("--without", default=None, metavar="RUNG[,...]", help="rate on the table less these rungs")
    r.add_argument("--out", default=None, help="write the rating as JSON here")
    k = sub.add_parser("check", help="does the table (or a rating) predict a new match? (seeded anew)")
    k.add_argument("players", nargs="+", metavar="RUNG", help="two rungs; with --rating one it did not play")
    k.add_argument("--rating", default=None, help="a `ladder rate --out` file: check its player against RUNG")
    k.add_argument("--games", type=int, default=60, help="games, colours alternating (default 60)")
    k.add_argument(
        "--seed",
        type=int,
        required=True,
        help="a seed the calibration (with --rating: the rating) did not use",
    )
    k.add_argument("--config", default=None, help="run config: the GNU Go path; a rated model's search")
    k.add_argument("--out-dir", default=None, help="where the games are kept (default config/ladder/checks)")
    k.add_argument("--out", default=None, help="write the result as JSON here")
    for p in (c, s, r, k):
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="more output")
        p.add_argument("--board-size", type=int, required=True, help="the ladder's board size (9, 5, ...)")
        p.set_defaults(func={c: calibrate, s: show, r: rate, k: check}[p])
    for p in (s, r, k):
        p.add_argument("--ladder-dir", default=None, help="ladder folder (default: config/ladder)")


def cli_main(argv: list[str]) -> int:
    cmd = Command("ladder", __doc__.split("\n\n")[0], errors=(PlayerError, LadderError, OSError))
    _add_subcommands(cmd.parser)
    cmd.parser.set_defaults(argv=list(argv))
    return cmd.run(argv, lambda args: args.func(args))
