"""`minigo selfplay`: one job plays K games with one model and writes one game file per game, then its record.

The games and the job live in the library: `minigo_core.selfplay.selfplay_game` (one game: seeds, moves,
record), `minigo_core.selfplay.selfplay_job` (K games, keeping an earlier attempt's, the job record of
`minigo_core.data.jobrecord`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from minigo_core.base import preempt
from minigo_core.base.command import Command
from minigo_core.base.runtime import Runtime
from minigo_core.nn import modelfile
from minigo_core.selfplay import selfplay_job

log = logging.getLogger(__name__)


def cli_main(argv: list[str] | None = None) -> int:
    """`minigo selfplay --config C --model M --generation G --game I --out GAMEFILE`: one game, one file.

    With `--count K`, the job plays games I .. I+K-1 (one file each; `--out` holds `{game}`, for example
    `games/gen0003/game{game:05d}.arrow`) and pays the start-up (imports, model load) once. With `--record`,
    the job writes its record after its last game (`games/gen0003/job00002.json`: each game's file name,
    size and SHA-256; the attempt's host and timings). A game whose file an earlier attempt of the same job
    already wrote (same model, seed, settings and software) is kept, not replayed; the rest are played to
    the same bytes as in an uninterrupted job. SIGTERM (a preemption or a time limit) stops the job within
    the time a file write takes, exit code 143: the game files written stay, and its retry keeps them.
    """
    t_process = selfplay_job.process_start_time()
    t_wall0 = time.time()
    start = t_process if t_process is not None else t_wall0
    cmd = Command("selfplay", cli_main.__doc__ or "", errors=(modelfile.ModelFileError,))
    parser = cmd.parser
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    cmd.add_config(help="run config YAML")
    parser.add_argument("--model", required=True, help="model file (e.g. {root}/models/gen0003.safetensors)")
    parser.add_argument("--generation", type=int, required=True, help="generation of the games")
    parser.add_argument(
        "--model-generation",
        type=int,
        default=None,
        help="generation of --model, recorded in the game files (default: --generation; with "
        "selfplay.model_lag 1 the workflow passes generation - 1)",
    )
    parser.add_argument("--game", type=int, required=True, help="game index within the generation")
    parser.add_argument("--out", required=True, help="game file (e.g. {root}/games/gen0003/game00042.arrow)")
    parser.add_argument("--count", type=int, default=1, help="games to play, from --game on (default 1)")
    parser.add_argument("--backend", choices=("dsp", "torch"), default=None, help="default: model.backend")
    parser.add_argument(
        "--threads", type=int, default=None, help="DSP cores / torch threads (selfplay.threads)"
    )
    parser.add_argument(
        "--engine",
        choices=("compiled", "python"),
        default=None,
        help="compiled: the C++ engine, all games at once (default with the dsp backend); python: the "
        "reference search (mcts.py), one game after another (always with the torch backend)",
    )
    parser.add_argument(
        "--record",
        default=None,
        help="the job record to write after the last game (e.g. {root}/games/gen0003/job00002.json)",
    )
    parser.add_argument(
        "--replay", action="store_true", help="play every game, even those an earlier attempt wrote"
    )
    return cmd.run(argv, lambda args: _selfplay(cmd, args, start))


def _selfplay(cmd: Command, args: argparse.Namespace, start: float) -> None:
    if args.count < 1 or args.game < 0 or args.generation < 0:
        cmd.parser.error("--count must be >= 1 and --game, --generation >= 0")
    if args.model_generation is not None and not 0 <= args.model_generation <= args.generation:
        cmd.parser.error("--model-generation must be between 0 and --generation: a model plays the games "
                         "of its own or a later generation")  # fmt: skip
    if args.count > 1 and "{game" not in args.out:
        cmd.parser.error(
            f"--count {args.count} needs an --out pattern with {{game}}, e.g. game{{game:05d}}.arrow"
        )
    run_cfg = cmd.config(args)
    backend = args.backend or run_cfg.model.backend
    games = selfplay_job.JobGames(args.generation, args.game, args.count, args.out, args.model_generation)
    job = selfplay_job.open_job(
        run_cfg,
        games,
        config=args.config,
        model=args.model,
        backend=backend,
        runtime=Runtime.from_environ(os.environ, threads=args.threads or run_cfg.selfplay.threads),
        engine_name=args.engine or ("compiled" if backend == "dsp" else "python"),
        start=start,
    )
    # a scheduler's SIGTERM (preemption, time limit) ends the job at once; the files written stay
    with preempt.exit_on_sigterm(
        job.write_lock, lambda: log.warning("%s", selfplay_job.stopped_message(job))
    ):
        selfplay_job.run_job(job, replay=args.replay, record=args.record)


if __name__ == "__main__":
    sys.exit(cli_main())
