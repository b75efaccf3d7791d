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

a, b = Path(sys.argv[1]), Path(sys.argv[2])
TIME = re.compile(
    r"(^|_)(s|ms|seconds|unix|at|time|rss_mb|timings|per_s|wall|started|finished|elapsed|hours|wait)($|_)|_s$|_ms$|per_s$|^timings$|rss"
)


def strip(x):
    if isinstance(x, dict):
        return {
            k: strip(v)
            for k, v in x.items()
            if not TIME.search(k) and k not in ("command", "model_time_s", "evaluated_time_s")
        }
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and "logs" not in p.parts)
bad = []
exact = 0
normal = 0
for rel in files:
    pa, pb = a / rel, b / rel
    if not pb.exists():
        bad.append(f"missing in after: {rel}")
        continue
    if (
        rel.suffix in (".arrow", ".safetensors")
        or rel.name in ("config.yaml",)
        or rel.name.endswith(".complete.json")
    ):
        if pa.read_bytes() != pb.read_bytes():
            bad.append(f"bytes differ: {rel}")
        else:
            exact += 1
    elif rel.suffix == ".json" and not rel.name.endswith("timing.json"):
        if strip(json.loads(pa.read_text())) != strip(json.loads(pb.read_text())):
            bad.append(f"json differs: {rel}")
        else:
            normal += 1
    elif rel.suffix == ".jsonl":
        la = [strip(json.loads(l)) for l in pa.read_text().splitlines()]
        lb = [strip(json.loads(l)) for l in pb.read_text().splitlines()]
        if la != lb:
            bad.append(f"jsonl differs: {rel}")
        else:
            normal += 1
extra = sorted(
    p.relative_to(b)
    for p in b.rglob("*")
    if p.is_file() and "logs" not in p.parts and not (a / p.relative_to(b)).exists()
)
print(
    f"{exact} files byte-identical, {normal} JSON files equal apart from wall-clock fields; extra in after: {[str(e) for e in extra]}"
)
print("\n".join(bad) or "no differences")
sys.exit(1 if bad else 0)
