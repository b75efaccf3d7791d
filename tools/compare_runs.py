"""Compare two run directories: are they the same run?

    python -m tools.compare_runs RUN_A RUN_B

What is compared how is `minigo_core.data.compare`'s one answer: game files, shards, model files, the
effective config, the games-complete markers and the plots must be byte-identical; JSON results
(evaluations, manifests, job records, ratings) and training metrics must be equal once their wall-clock
fields (times, durations, throughput, memory, a job's attempt) are left out. Logs, the status table, the time
to target, the wall-clock plots and TensorBoard's events files (`tensorboard/`) are not compared. Exit 1 on
a difference. Use it to check that a rerun, a refactoring or another machine reproduces a run (same root
path: the root is part of the config and so of every game file's seed record).
"""

from __future__ import annotations

import sys
from pathlib import Path

from minigo_core.data import compare

# How each structured artifact's difference is told, by file suffix (other artifacts: "bytes differ").
DATA_WORDS = {".jsonl": "JSON lines differ", ".csv": "CSV differs"}


def describe(diff: compare.Difference, b: Path) -> str:
    """One line for a difference: `missing in B: REL`, `only in B: REL`, `bytes differ: REL`, ..."""
    if diff.kind == "missing":
        return f"missing in {b}: {diff.rel}"
    if diff.kind == "extra":
        return f"only in {b}: {diff.rel}"
    if diff.kind == "bytes":
        return f"bytes differ: {diff.rel}"
    return f"{DATA_WORDS.get(Path(diff.rel).suffix, 'JSON differs')}: {diff.rel}"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = Path(argv[0]), Path(argv[1])
    files = compare.artifacts(a)
    problems = [describe(diff, b) for diff in compare.differences(a, b)]
    exact = sum(1 for rel in files if compare.wall_clock_fields(rel) is None)
    print(f"compared {len(files)} files of {a} with {b} ({exact} byte for byte)")
    print("\n".join(problems) or "the same run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
