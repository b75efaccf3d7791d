"""Compare two run directories: are they the same run?

    python workflow/scripts/compare_runs.py RUN_A RUN_B

Game files, shards, model files, the effective config and the games-complete markers must be byte-identical;
JSON results (evaluations, manifests, ratings) and training metrics must be equal once their wall-clock
fields (times, durations, throughput, memory) are left out. Logs are not compared. Exit 1 on a difference.
Use it to check that a rerun, a refactoring or another machine reproduces a run (same root path: the root
is part of the config and so of every game file's seed record).
"""

import json
import re
import sys
from pathlib import Path

# Keys of wall-clock facts: times, durations, throughput, memory; and the command line that ran.
WALL_CLOCK = re.compile(
    r"(^|_)(s|ms|seconds|unix|at|time|rss_mb|timings|wall|started|finished|elapsed|hours|wait)($|_)|per_s$|rss"
)
# attempt: a self-play job record's host, clocks and kept games
IGNORED = ("command", "model_time_s", "evaluated_time_s", "attempt")
EXACT_SUFFIXES = (".arrow", ".safetensors", ".complete.json")


def strip(value):
    """`value` without its wall-clock fields (recursively)."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not WALL_CLOCK.search(k) and k not in IGNORED}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def artifacts(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and "logs" not in p.parts)


def compare(a: Path, b: Path, rel: Path) -> str | None:
    """None if the artifact `rel` is the same in both runs (or is not compared), else what differs."""
    pa, pb = a / rel, b / rel
    if not pb.exists():
        return f"missing in {b}: {rel}"
    if rel.name.endswith(EXACT_SUFFIXES) or rel.name == "config.yaml":
        return None if pa.read_bytes() == pb.read_bytes() else f"bytes differ: {rel}"
    if rel.suffix == ".json":
        same = strip(json.loads(pa.read_text())) == strip(json.loads(pb.read_text()))
        return None if same else f"JSON differs: {rel}"
    if rel.suffix == ".jsonl":
        la = [strip(json.loads(line)) for line in pa.read_text().splitlines()]
        lb = [strip(json.loads(line)) for line in pb.read_text().splitlines()]
        return None if la == lb else f"JSON lines differ: {rel}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = Path(argv[0]), Path(argv[1])
    files = artifacts(a)
    problems = [p for p in (compare(a, b, rel) for rel in files) if p]
    problems += [f"only in {b}: {rel}" for rel in artifacts(b) if not (a / rel).exists()]
    exact = sum(1 for rel in files if rel.name.endswith(EXACT_SUFFIXES) or rel.name == "config.yaml")
    print(f"compared {len(files)} files of {a} with {b} ({exact} byte for byte)")
    print("\n".join(problems) or "the same run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
