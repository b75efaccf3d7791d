"""Verify one generation's self-play game files and write its `games/genGGGG.complete.json` marker.

    minigo games-complete --config ROOT/config.yaml --generation G [--out MARKER] [--threads N]

The check and the marker are `minigo_core.data.games_complete`'s. Unreadable or changed files are listed; if
more than `window.max_bad_fraction` of the games are bad the step fails and says which job records to delete:
Snakemake then reruns those jobs, which keep their good game files and replay exactly the bad ones. From the
bytes it checks, it samples the games for every window that will read them and writes the generation's
window parts (`minigo_core.data.parts`, `window/parts/genGGGG/`), parts.json after them, before the marker.
"""

from __future__ import annotations

import argparse
import logging

from minigo_core.base.command import Command
from minigo_core.base.config import load_config
from minigo_core.data import games_complete as complete
from minigo_core.data import layout, parts, storage
from minigo_core.report import tensorboard

log = logging.getLogger(__name__)


def games_complete(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    expected = cfg.selfplay.games
    threads = args.threads or cfg.window.read_threads
    sampled = parts.write_parts(cfg, args.generation, threads, workers="processes")
    games, bad = sampled.summaries, sampled.bad
    for message in bad:
        log.warning("unreadable game file %s", message)
    if len(bad) > cfg.window.max_bad_fraction * expected:
        records = sorted({complete.job_record_of(cfg, args.generation, m.split(": ", 1)[0]) for m in bad})
        log.error(
            "%d of %d game files of generation %d are bad (more than window.max_bad_fraction = %s). "
            "Delete the records of their jobs and rerun the workflow: each job keeps its good games and "
            "replays exactly the bad ones: rm %s%s",
            len(bad),
            expected,
            args.generation,
            cfg.window.max_bad_fraction,
            " ".join(records[:20]),
            " ..." if len(records) > 20 else "",
        )
        return 1
    parts.commit(cfg, args.generation, sampled.manifest)
    marker = complete.summarise(args.generation, games, bad, expected)
    out = args.out or layout.complete_marker_path(cfg.root, args.generation)
    storage.remove_stale_temporaries([out])  # what a killed attempt left
    complete.write_marker(out, marker)
    tensorboard.update(cfg.root, tensorboard.write_selfplay, cfg, args.generation, marker, out)
    rate = marker["resign_false_positive_rate"]
    print(
        f"generation {args.generation}: {marker['games']}/{expected} games, {marker['positions']} positions, "
        f"mean length {marker['mean_game_length']}, resign false positives "
        f"{'n/a' if rate is None else f'{rate:.3f}'}"
    )
    return 0


def cli_main(argv: list[str]) -> int:
    cmd = Command("games-complete", __doc__.split("\n\n")[0])
    cmd.add_config(help="the run's effective config ({root}/config.yaml)")
    cmd.parser.add_argument("--generation", type=int, required=True)
    cmd.parser.add_argument("--out", help="the marker to write (default: {root}/games/genGGGG.complete.json)")
    cmd.parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="parallel readers, processes for more than 1 [window.read_threads]",
    )
    return cmd.run(argv, games_complete)
