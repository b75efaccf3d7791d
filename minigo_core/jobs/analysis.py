"""`minigo analysis --model MODEL`: KataGo's JSON analysis protocol on stdin/stdout, for a model file.

What KaTrain and other analysis tools run as their engine (`katago analysis -model M -config C` for
KataGo): one JSON query a line in, one JSON answer a line out (`minigo_core.gtp.katago_analysis`; the user's
guide is docs/LOOK.md). The search is the GTP server's (`minigo gtp`'s options), up to `--batch` positions
searched at once with the network batched across them; nothing but answers goes to stdout.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import IO

from minigo_core.base import preempt
from minigo_core.base.command import Command
from minigo_core.base.config import load_config
from minigo_core.gtp.katago_analysis import AnalysisServer
from minigo_core.gtp.katago_query import REPORT_AS
from minigo_core.gtp.server import build_model_server
from minigo_core.jobs.gtp import add_search_arguments, available_cores, play_search
from minigo_core.search.timed_search import DEFAULT_MAX_READOUTS

log = logging.getLogger(__name__)


def cli_main(argv: list[str]) -> int:
    cmd = Command("analysis", "KataGo's JSON analysis protocol for a MiniGo model (KaTrain, analysis tools).")
    p = cmd.parser
    p.add_argument("--model", required=True, help="model file (path or fsspec URL)")
    p.add_argument("--config", default=None, help="run config: its search settings and resign threshold")
    p.add_argument("--visits", type=int, default=500, help="visits a position when a query sets no maxVisits")
    p.add_argument("--threads", type=int, default=None, help="DSP cores of the network (default: every core)")
    p.add_argument("--batch", type=int, default=8, help="positions searched at once (default 8)")
    p.add_argument("--visit-cap", type=int, default=100_000, help="most visits a position (memory)")
    p.add_argument("--report-as", choices=REPORT_AS, default="BLACK",
                   help="whose view winrates, scores, ownership take (reportAnalysisWinratesAs)")  # fmt: skip
    p.add_argument("--backend", choices=("dsp", "torch"), default="dsp", help=argparse.SUPPRESS)
    p.set_defaults(resign_threshold=-1.0, move_time=None, max_readouts=DEFAULT_MAX_READOUTS)
    add_search_arguments(p)
    return cmd.run(argv, serve_on_stdout)


def serve_on_stdout(args: argparse.Namespace) -> int:
    preempt.end_with_parent()  # a GUI that ends the shell it started this from ends this too
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # only answers may reach stdout
    try:
        return _serve(args, real_stdout.buffer)
    finally:
        sys.stdout = real_stdout


def _serve(args: argparse.Namespace, stdout: IO[bytes]) -> int:
    try:
        if args.config:
            load_config(args.config)  # a bad config: one clear line, exit 2
        gtp_server = build_model_server(
            args.model,
            play_search(args, args.visits),
            backend=args.backend,
            threads=max(1, args.threads or available_cores()),
            config=args.config,
        )
        server = AnalysisServer(
            gtp_server.player, default_visits=max(1, args.visits), slots=max(1, args.batch),
            visit_cap=max(1, args.visit_cap), report_as=args.report_as,
        )  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - start-up errors: one clear line, exit status 2
        log.error("%s", exc)
        return 2
    log.info("ready (%s)", gtp_server.version)
    try:
        return server.serve(sys.stdin.buffer, stdout)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
