"""The `minigo` command: one subcommand per pipeline step; each lives in its own module.

Every subcommand is `minigo_core.<module>.cli_main(argv) -> int`, imported only when used so that
`minigo inspect` does not pay for torch's start-up in modules it does not need.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "bootstrap": ("minigo_core.jobs.bootstrap", "generation 0: a randomly initialised model file"),
    "selfplay": (
        "minigo_core.jobs.selfplay",
        "play K self-play games, one game file each; then the job's record",
    ),
    "inspect": ("minigo_core.jobs.inspect", "show a game file or model file; export SGF"),
    "window": ("minigo_core.jobs.window", "sample the last W generations' games into N_train shards"),
    "train": ("minigo_core.jobs.train", "data-parallel training of generation g over its shards"),
    "evaluate": ("minigo_core.jobs.evaluate", "play a match between two players; win rate with interval"),
    "gtp": ("minigo_core.jobs.gtp", "a GTP server playing a model file"),
    "analysis": ("minigo_core.jobs.analysis", "KataGo's JSON analysis protocol for a model file (KaTrain)"),
    "ratings": (
        "minigo_core.jobs.ratings",
        "Bradley-Terry Elo over a run's evaluation games; time to target",
    ),
    "ladder": ("minigo_core.jobs.ladder", "the fixed Elo ladder: calibrate, show, rate a player"),
    "status": ("minigo_core.jobs.status", "one line per generation of a run, from its files alone"),
    "games-complete": (
        "minigo_core.jobs.games_complete",
        "verify a generation's game files; write its marker",
    ),
    "pack": ("minigo_core.jobs.pack", "pack a generation no window reads into one archive; verify; delete"),
    "unpack": ("minigo_core.jobs.unpack", "write a packed generation's files back; delete the pack"),
    "plots": ("minigo_core.jobs.plots", "the report's plots and status table of a run"),
    "tensorboard": ("minigo_core.jobs.tensorboard", "a run's TensorBoard events files, again from its files"),
    "cost": ("minigo_core.jobs.cost", "what a run of a config costs: core-hours, files, bytes (measured)"),
    "run": ("minigo_core.pipeline.runner", "run the Snakemake workflow end to end (what `make run` calls)"),
}


# Old names kept for one release: `minigo plan` was `minigo cost` (a "plan" is Snakemake's, pipeline/plan.py).
ALIASES = {"plan": "cost"}


def usage() -> str:
    lines = ["usage: minigo COMMAND [options]   (minigo COMMAND --help for a command's options)", ""]
    lines += [f"  {name:<15} {doc}" for name, (_, doc) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name in ALIASES:
        print(
            f"minigo: `{name}` is now `minigo {ALIASES[name]}` (the old name goes in the next release)",
            file=sys.stderr,
        )
        name = ALIASES[name]
    if name not in COMMANDS:
        print(f"minigo: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.cli_main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
