"""The harness every `minigo COMMAND` runs in: arguments, the run config, logging, exit codes.

    def cli_main(argv):
        cmd = Command("evaluate", "Play a match.", errors=(PlayerError, ValueError, OSError))
        cmd.parser.add_argument("--games", type=int)
        cmd.add_config()
        return cmd.run(argv, lambda args: evaluate(cmd.config(args), args))

Conventions, the same for every command:
- exit 0: done; exit 2: bad arguments or config (`UsageError`, `ConfigError`, argparse); exit 1: the work
  failed (one of the command's `errors`: a damaged file, an outside program that died; or a full disk,
  ENOSPC/EDQUOT). Nothing else is caught: a bug shows its traceback.
- Results go to stdout (`print`); diagnostics go through `logging` to stderr as `minigo COMMAND: message`
  (`-v` for debug messages). Module loggers are `logging.getLogger(__name__)`.
"""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from collections.abc import Callable

from minigo_core.base import project_files
from minigo_core.base.config import ConfigError, RunConfig, load_config

log = logging.getLogger("minigo_core")


class UsageError(Exception):
    """The command was called wrongly (an argument out of range, a missing option): exit 2."""


def setup_logging(prog: str, verbose: bool = False) -> None:
    """Messages of the library's loggers to stderr as `prog: message` (INFO, or DEBUG when verbose)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: %(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.DEBUG if verbose else logging.INFO)
    log.propagate = False


class Command:
    """One `minigo NAME` subcommand: its parser, and `run` with the shared error handling."""

    def __init__(self, name: str, description: str, errors: tuple[type[BaseException], ...] = ()) -> None:
        self.name = name
        self.prog = f"minigo {name}"
        self.errors = errors
        self.parser = argparse.ArgumentParser(prog=self.prog, description=description)
        self.parser.add_argument("-v", "--verbose", action="store_true", help="also print debug messages")

    def add_config(self, required: bool = True, help: str = "run config (config.yaml)") -> None:
        self.parser.add_argument("--config", required=required, help=help)

    @staticmethod
    def config(args: argparse.Namespace) -> RunConfig:
        """The validated run config named by --config (ConfigError, exit 2, names the file and key): the
        path as given, else the same path among the project's files (`config/tiny.yaml` from anywhere with
        an installed wheel: base/project_files.py)."""
        try:
            return load_config(project_files.find(args.config, "config file"))
        except FileNotFoundError:
            return load_config(args.config)  # says it cannot be read

    def run(
        self, argv: list[str] | None, main: Callable[[argparse.Namespace], int | None], pass_on: bool = False
    ) -> int:
        """Parse `argv`, set up logging, call `main(args)` and map errors to exit codes. With `pass_on`,
        unknown arguments (after an optional `--`) are kept in `args.extra` for another program."""
        if pass_on:
            args, extra = self.parser.parse_known_args(argv)
            args.extra = [a for a in extra if a != "--"]
        else:
            args = self.parser.parse_args(argv)
        setup_logging(self.prog, args.verbose)
        try:
            return int(main(args) or 0)
        except (ConfigError, UsageError) as exc:
            log.error("%s", exc)
            return 2
        except self.errors as exc:
            log.error("%s", exc)
            return 1
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            log.error("%s", exc)  # a full disk is no bug: the message (storage.DiskFullError) says what to do
            return 1
