"""Chaos run: kill -9 random jobs of a running workflow, rerun until done, compare with an undisturbed run.

    python workflow/scripts/chaos.py --workdir /tmp/chaos [--config config/tiny.yaml] [--kills 10] [--seed 1]

1. Runs the config undisturbed (local profile) in WORKDIR/A: the reference.
2. Runs it again in WORKDIR/B and `kill -9`s running processes of the run, kinds drawn (seeded) and hit
   in the order the pipeline runs them, at a random moment of each: a self-play job, a training rank or
   its launcher, the window, an evaluation, the bootstrap, the games-complete check, or Snakemake itself.
   A killed Snakemake leaves its jobs running (as on a cluster); they are waited for, the lock is released
   with `--unlock`, and Snakemake is started again with `--rerun-incomplete` -- until the kills are spent
   and a run ends successfully.
3. Checks run B: a final dry run has nothing left to do; no temporary (`.tmp-*`) file is left; every artifact
   is valid (game files, shards against their manifest checksums, models, JSON); every artifact is
   byte-identical to run A, except the files that record wall-clock time (listed in WALL_CLOCK, compared with
   those fields removed). While run B runs, a watcher validates each artifact as soon as it appears under its
   final name: a half-written file under a final name is reported.

Both runs use the same relative root (`run`) inside their own working directory, so paths recorded inside
artifacts are the same. Prints a JSON report; exit status 0 when every check held, 1 otherwise (each
difference is described: which file, which fields or bytes), 2 when the reference run itself failed.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from minigo_core.data import storage  # noqa: E402

ROOT = "run"  # the run root, relative to each run's working directory
# Files that are not artifacts, or hold nothing but wall-clock facts: never compared.
SKIP = (
    "logs/*",
    "summary/status.txt",  # `minigo status`: elapsed times, "as of" clock time
    "summary/time_to_target.json",  # wall time to the target by definition
    "summary/winrate.png",  # win rate against wall-clock hours
)
# Artifacts that record wall-clock time next to deterministic content: compared with these keys (JSON, at
# any depth) or columns (CSV) removed.
WALL_CLOCK = {
    "games/*/job*.json": {"attempt"},  # a self-play job's record: this attempt's host, clocks, kept games
    "window/*/manifest.json": {"timings", "peak_rss_mb"},
    "train/*/metrics.jsonl": {
        "load_s",
        "examples_per_s",
        "step_ms",
        "data_wait_ms",
        "wall_s",
        "data_wait_s_per_rank",
        "first_batch_wait_s_per_rank",
        "data_wait_fraction",
        "resumed_from_step",
        "start_step",
    },  # fmt: skip
    "eval/*/*.json": {
        "started_unix",
        "finished_unix",
        "started_at",
        "finished_at",
        "wall_seconds",
        "seconds",
        "wall_time_s",
    },  # fmt: skip
    "summary/elo.json": {"model_time_s", "evaluated_time_s"},
    "summary/elo.csv": {"model_time_s", "evaluated_time_s"},
}
KIND_OF_SUBCOMMAND = {
    "selfplay": "selfplay",
    "train": "train",
    "window": "window",
    "evaluate": "evaluate",
    "bootstrap": "bootstrap",
    "ratings": "ratings",
    "games-complete": "games_complete",
    "plots": "plots",
}


# ------------------------------------------------------------------------------------------------ processes
def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def run_processes(workdir: Path) -> list[tuple[int, str, list[str]]]:
    """(pid, kind, argv) of every process of the run in `workdir` (found by working directory and argv)."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd != str(workdir):
            continue
        argv = _read(f"/proc/{pid}/cmdline").decode(errors="replace").split("\0")[:-1]
        kind = classify(argv)
        if kind is not None:
            found.append((pid, kind, argv))
    return found


def classify(argv: list[str]) -> str | None:
    """What a process of the run is, from its argv; None for shells, `timeout` and helper processes."""
    if not argv or os.path.basename(argv[0]) in ("timeout", "bash", "sh"):
        return None
    if any(os.path.basename(a) == "snakemake" for a in argv[:2]) or argv[1:3] == ["-m", "snakemake"]:
        return "snakemake"
    if "minigo_core.jobs.train" in argv and "--rank" in argv:
        return "train-rank"
    if "minigo_core.cli" in argv:
        i = argv.index("minigo_core.cli")
        return KIND_OF_SUBCOMMAND.get(argv[i + 1] if i + 1 < len(argv) else "", None)
    return None


def wait_for_no_jobs(workdir: Path, timeout_s: float) -> list[tuple[int, str, list[str]]]:
    """Wait until no process of the run is left (orphans of a killed Snakemake finish their jobs)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = run_processes(workdir)
        if not left:
            return []
        time.sleep(0.5)
    return run_processes(workdir)


# ------------------------------------------------------------------------------------------------ snakemake
def snakemake_argv(workdir: Path, config: Path, cores: int, timeout_s: int, *extra: str) -> list[str]:
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    return ["timeout", "-k", "10", str(timeout_s), snakemake, "--profile", str(REPO / "profiles" / "local"),
            "--snakefile", str(REPO / "Snakefile"), "--configfile", str(config), "--directory", str(workdir),
            "--cores", str(cores), "--rerun-incomplete", *extra]  # fmt: skip


def start_snakemake(
    workdir: Path, config: Path, cores: int, timeout_s: int, attempt: int
) -> subprocess.Popen:
    log = open(workdir / f"snakemake.attempt{attempt:02d}.log", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(snakemake_argv(workdir, config, cores, timeout_s), stdout=log,
                            stderr=subprocess.STDOUT, cwd=workdir)  # fmt: skip
    proc.log_file = log  # type: ignore[attr-defined]
    return proc


def stop_all(workdir: Path) -> None:
    """SIGKILL every process of the run (when the driver itself is stopped)."""
    for pid, _, _ in run_processes(workdir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def finish(proc: subprocess.Popen) -> int:
    code = proc.wait()
    proc.log_file.close()  # type: ignore[attr-defined]
    return code


def unlock(workdir: Path, config: Path) -> None:
    subprocess.run(snakemake_argv(workdir, config, 1, 300, "--unlock"), cwd=workdir, capture_output=True)


def undisturbed_run(workdir: Path, config: Path, cores: int, timeout_s: int) -> tuple[int, float]:
    t0 = time.monotonic()
    code = finish(start_snakemake(workdir, config, cores, timeout_s, 0))
    return code, time.monotonic() - t0


# ------------------------------------------------------------------------------------------------ validity
def validate(path: Path, rel: str, manifest_sha: dict[str, str] | None = None) -> str | None:
    """None if the artifact at `path` is complete and valid, else what is wrong with it."""
    from minigo_core.data import gamefile, shards
    from minigo_core.nn import model

    try:
        if fnmatch.fnmatch(rel, "models/*.safetensors"):
            model.load_model(str(path), backend="torch")
        elif fnmatch.fnmatch(rel, "games/*/*.arrow"):
            gamefile.read_game(str(path)).training_examples()
        elif fnmatch.fnmatch(rel, "window/*/shard*.arrow"):
            shard = shards.load_shard(str(path), (manifest_sha or {}).get(rel))
            shard.rows(0, shard.num_rows)
        elif rel.endswith(".jsonl"):
            for line in path.read_text().splitlines():
                json.loads(line)
        elif rel.endswith(".json"):
            json.loads(path.read_text())
        elif rel.endswith(".yaml"):
            yaml.safe_load(path.read_text())
        elif rel.endswith(".png"):
            if not path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"):
                return "not a PNG file"
    except FileNotFoundError:
        return None  # removed meanwhile (Snakemake cleans up the outputs of a failed job)
    except Exception as exc:  # noqa: BLE001 - any failure to read is the finding
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


def artifacts(root: Path) -> dict[str, Path]:
    """Every file of a run (relative path -> path), except logs and other files in SKIP."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            if not any(fnmatch.fnmatch(rel, pattern) for pattern in SKIP):
                out[rel] = path
    return out


def manifest_checksums(root: Path) -> dict[str, str]:
    sums = {}
    for manifest in root.glob("window/*/manifest.json"):
        data = json.loads(manifest.read_text())
        for shard in data.get("shards", []):
            rel = (manifest.parent / shard["name"]).relative_to(root).as_posix()
            sums[rel] = shard["sha256"]
    return sums


class Watcher(threading.Thread):
    """Validates each artifact as soon as it appears (or changes) under a final name during the chaos run."""

    def __init__(self, root: Path, period_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.root, self.period_s = root, period_s
        self.seen: dict[str, tuple[int, int]] = {}
        self.problems: list[str] = []
        self.checked = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.scan()
            self.stop.wait(self.period_s)

    def scan(self) -> None:
        if not self.root.exists():
            return
        for rel, path in artifacts(self.root).items():
            if storage.is_temporary(rel) or rel.endswith(".jsonl"):  # metrics.jsonl is a log, appended to
                continue
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            key = (st.st_size, st.st_mtime_ns)
            if self.seen.get(rel) == key:
                continue
            self.seen[rel] = key
            problem = validate(path, rel)
            self.checked += 1
            if problem is not None:
                self.problems.append(f"{rel} was visible under its final name while invalid: {problem}")


# ------------------------------------------------------------------------------------------------ comparing
def _strip(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_strip(v, keys) for v in value]
    return value


def _json_diff(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}/{k}: only in {'reference' if k in a else 'chaos run'}")
            else:
                out += _json_diff(a[k], b[k], f"{where}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in _json_diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where or '/'}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"]


def _load_json_lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _load_structured(path: Path) -> Any:
    """A JSON, JSON-lines or CSV artifact as plain data (CSV: a list of row dicts)."""
    if path.suffix == ".jsonl":
        return _load_json_lines(path)
    if path.suffix == ".csv":
        import csv

        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    return json.loads(path.read_text())


def describe_difference(rel: str, a: Path, b: Path, ignored: frozenset[str] = frozenset()) -> str:
    """What differs between the reference's and the chaos run's version of one artifact (`ignored`: keys
    left out of the comparison)."""
    da, db = a.read_bytes(), b.read_bytes()
    offset = next((i for i, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), min(len(da), len(db)))
    head = f"{rel}: {len(da)} vs {len(db)} bytes, first difference at byte {offset}"
    try:
        if rel.endswith(".safetensors"):
            from minigo_core.nn import modelfile

            fa, fb = modelfile.read(str(a)), modelfile.read(str(b))
            sa, sb = fa.tensors, fb.tensors
            tensors = [k for k in sa if k not in sb or not np.array_equal(sa[k], sb[k])]
            fields = _json_diff(
                {"config": fa.config.to_dict(), "provenance": fa.provenance},
                {"config": fb.config.to_dict(), "provenance": fb.provenance},
            )
            return f"{head}; weights differ in {tensors[:5] or 'none'}; other fields: {fields[:6] or 'none'}"
        if fnmatch.fnmatch(rel, "games/*/*.arrow"):
            from minigo_core.data import gamefile

            ra, rb = gamefile.read_game(str(a)), gamefile.read_game(str(b))
            fields = _json_diff(ra.metadata, rb.metadata)
            same_rows = bool(
                np.array_equal(ra.visits, rb.visits) and np.array_equal(ra.root_value, rb.root_value)
            )
            rows = "equal" if same_rows else "differ"
            return f"{head}; metadata differs in {fields[:6] or 'nothing'}; rows {rows}"
        if rel.endswith((".jsonl", ".json", ".csv")):
            diff = _json_diff(_strip(_load_structured(a), ignored), _strip(_load_structured(b), ignored))
            return f"{head}; {diff[:8]}"
    except Exception as exc:  # noqa: BLE001 - the byte offset is still a useful description
        return f"{head} ({type(exc).__name__} while describing: {exc})"
    return head


def compare(reference: Path, chaos: Path) -> list[str]:
    """Every way the chaos run's artifacts differ from the reference's (empty: identical)."""
    ra, rb = artifacts(reference), artifacts(chaos)
    problems = [f"{rel}: missing from the chaos run" for rel in sorted(set(ra) - set(rb))]
    problems += [f"{rel}: only in the chaos run" for rel in sorted(set(rb) - set(ra))]
    for rel in sorted(set(ra) & set(rb)):
        keys = next((k for pattern, k in WALL_CLOCK.items() if fnmatch.fnmatch(rel, pattern)), None)
        if keys is not None:
            if _strip(_load_structured(ra[rel]), keys) != _strip(_load_structured(rb[rel]), keys):
                described = describe_difference(rel, ra[rel], rb[rel], frozenset(keys))
                problems.append(f"{described} (wall-clock fields ignored)")
        elif ra[rel].read_bytes() != rb[rel].read_bytes():
            problems.append(describe_difference(rel, ra[rel], rb[rel]))
    return problems


def check_run(root: Path, label: str) -> list[str]:
    """Temporary files left behind and invalid artifacts in one run."""
    problems = [f"{label}: temporary file left behind: {p.relative_to(root)}"
                for p in root.rglob(f"{storage.TMP_PREFIX}*")]  # fmt: skip
    sums = manifest_checksums(root)
    for rel, path in artifacts(root).items():
        problem = validate(path, rel, sums)
        if problem is not None:
            problems.append(f"{label}: {rel} is invalid: {problem}")
    return problems


# ------------------------------------------------------------------------------------------------ chaos
# The kinds of process a kill can aim at, and the rule whose job each belongs to.
RULE_OF = {"bootstrap": "bootstrap", "selfplay": "selfplay", "games_complete": "games_complete",
           "window": "window", "train": "train", "train-rank": "train", "evaluate": "evaluate"}  # fmt: skip


def kill_plan(reference_log: Path, kills: int, rng: np.random.Generator) -> list[str]:
    """The kinds of process to kill, in the order the reference run started their rules (so each one is still
    to come when its turn arrives): kinds drawn without repeats while possible, Snakemake among them."""
    started = []
    for line in reference_log.read_text().splitlines():
        name = line.removeprefix("local").removeprefix("rule ").rstrip(":") if "rule " in line[:10] else ""
        if name and name not in started:
            started.append(name)
    kinds = [k for k, rule in RULE_OF.items() if rule in started] + ["snakemake"]
    chosen = [str(k) for k in rng.permutation(kinds)[:kills]]
    while len(chosen) < kills:
        chosen.append(str(kinds[int(rng.integers(0, len(kinds)))]))
    # Snakemake is killed at the time of a random job of the plan; the others in the order of the pipeline.
    when = {k: started.index(RULE_OF[k]) for k in kinds if k != "snakemake"}
    keyed = [
        (when[k] if k in when else int(rng.integers(0, len(started))), i, k) for i, k in enumerate(chosen)
    ]
    return [k for _, _, k in sorted(keyed)]


def pick_victim(workdir: Path, target: str, rng: np.random.Generator) -> tuple[int, str] | None:
    """A running process of kind `target` ('any': any job), while the run has at least one job running."""
    by_kind: dict[str, list[int]] = {}
    for pid, kind, _ in run_processes(workdir):
        by_kind.setdefault(kind, []).append(pid)
    jobs = sorted(set(by_kind) - {"snakemake"})
    if not jobs:
        return None  # Snakemake is planning or between jobs: not yet "mid-run"
    kind = jobs[int(rng.integers(0, len(jobs)))] if target == "any" else target
    return (min(by_kind[kind]), kind) if kind in by_kind else None


def chaos_run(workdir: Path, config: Path, plan: list[str], rng: np.random.Generator, cores: int,
              timeout_s: int, patience_s: float, max_attempts: int) -> dict:  # fmt: skip
    """Run while killing one process of each kind in `plan` in turn, then rerun until a run succeeds.

    Each kill waits up to `patience_s` for a process of its kind to run (any job after that), then a random
    fraction of a second into its life, and SIGKILLs it. Returns what happened.
    """
    log: list[dict] = []
    attempt, done, code = 0, 0, None
    kills = len(plan)
    t0 = time.monotonic()
    since = t0
    while attempt < max_attempts:
        attempt += 1
        proc = start_snakemake(workdir, config, cores, timeout_s, attempt)
        killed_snakemake = False
        while done < kills and proc.poll() is None:
            wanted = plan[done] if time.monotonic() - since < patience_s else "any"
            victim = pick_victim(workdir, wanted, rng)
            if victim is None:
                time.sleep(0.05)
                continue
            time.sleep(float(rng.uniform(0.0, 1.0)))  # a random moment inside the job
            pid, kind = victim
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue  # it finished meanwhile: wait for the next one
            done += 1
            since = time.monotonic()
            log.append(
                {"t_s": round(time.monotonic() - t0, 1), "attempt": attempt, "killed": kind, "pid": pid}
            )
            print(f"chaos: kill -9 {kind} (pid {pid}), attempt {attempt}, kill {done} of {kills}", flush=True)
            if kind == "snakemake":
                killed_snakemake = True
                break
        code = finish(proc)
        if killed_snakemake:
            left = wait_for_no_jobs(workdir, timeout_s)  # its orphaned jobs run to their end
            if left:
                log.append({"orphans_still_running": [k for _, k, _ in left]})
            unlock(workdir, config)
        if code == 0:
            break  # finished (if with kills left, the report says so)
    return {"attempts": attempt, "kills": log, "kills_done": done, "final_exit": code,
            "seconds": round(time.monotonic() - t0, 1)}  # fmt: skip


def nothing_left_to_do(workdir: Path, config: Path) -> str | None:
    # Modification times only: a developer editing the workflow meanwhile is not an incomplete run.
    argv = snakemake_argv(workdir, config, 1, 300, "--dry-run", "--rerun-triggers", "mtime")
    proc = subprocess.run(argv, cwd=workdir, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or "Nothing to be done" not in out:
        return f"a dry run after the chaos run still plans work:\n{out[-2000:]}"
    return None


def write_config(path: Path, source: Path, overrides: list[str]) -> Path:
    data = yaml.safe_load(source.read_text())
    data["root"] = ROOT
    for item in overrides:
        key, _, value = item.partition("=")
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", required=True, help="scratch directory (emptied first)")
    p.add_argument(
        "--config", default=str(REPO / "config" / "tiny.yaml"), help="run config (its root is ignored)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set selfplay.games=2 (YAML value)",
    )
    p.add_argument("--kills", type=int, default=10, help="kill -9s during the chaos run")
    p.add_argument("--seed", type=int, default=1, help="seed of the kill moments and victims")
    p.add_argument("--cores", type=int, default=2, help="Snakemake --cores")
    p.add_argument(
        "--patience",
        type=float,
        default=None,
        help="seconds a kill waits for its kind of process before hitting any job (default: the undisturbed "
        "run's duration / (kills + 1))",
    )
    p.add_argument("--timeout", type=int, default=1800, help="limit for each Snakemake call (timeout -k)")
    p.add_argument(
        "--max-attempts", type=int, default=None, help="Snakemake starts allowed (default kills + 4)"
    )
    p.add_argument("--report", default=None, help="also write the JSON report to this file")
    args = p.parse_args(argv)

    work = Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "A").mkdir(parents=True)
    (work / "B").mkdir()
    config = write_config(work / "config.yaml", Path(args.config), args.set)
    report: dict[str, Any] = {"config": str(config), "kills_requested": args.kills, "seed": args.seed}

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        code, seconds = undisturbed_run(work / "A", config, args.cores, args.timeout)
    except BaseException:
        stop_all(work / "A")
        raise
    report["reference"] = {"exit": code, "seconds": round(seconds, 1)}
    if code != 0:
        report["problems"] = [f"the undisturbed run failed (exit {code}); see {work / 'A'}/snakemake.*.log"]
        print(json.dumps(report, indent=1))
        return 2

    watcher = Watcher(work / "B" / ROOT)
    watcher.start()
    rng = np.random.default_rng(args.seed)
    attempts = args.max_attempts or args.kills + 4
    try:
        # Each kill waits at most its share of an undisturbed run for its kind, so every kill fits in the run.
        patience = args.patience if args.patience is not None else seconds / (args.kills + 1)
        plan = kill_plan(work / "A" / "snakemake.attempt00.log", args.kills, rng)
        report["kill_plan"] = plan
        report["chaos"] = chaos_run(
            work / "B", config, plan, rng, args.cores, args.timeout, patience, attempts
        )
    except BaseException:
        stop_all(work / "B")
        raise
    left = wait_for_no_jobs(work / "B", 120)
    watcher.stop.set()
    watcher.join()
    watcher.scan()

    problems: list[str] = []
    if report["chaos"]["final_exit"] != 0:
        problems.append(f"the chaos run never finished (last exit {report['chaos']['final_exit']})")
    if report["chaos"]["kills_done"] < args.kills:
        problems.append(f"only {report['chaos']['kills_done']} of {args.kills} kills happened before the run "
                        "finished")  # fmt: skip
    if left:
        problems.append(f"processes of the run still alive after it finished: {[k for _, k, _ in left]}")
    problems += watcher.problems
    if report["chaos"]["final_exit"] == 0:
        problem = nothing_left_to_do(work / "B", config)
        problems += [problem] if problem else []
    problems += check_run(work / "A" / ROOT, "reference")
    problems += check_run(work / "B" / ROOT, "chaos run")
    problems += compare(work / "A" / ROOT, work / "B" / ROOT)
    report["artifacts_compared"] = len(artifacts(work / "A" / ROOT))
    report["artifacts_validated_while_running"] = watcher.checked
    report["problems"] = problems
    text = json.dumps(report, indent=1)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
