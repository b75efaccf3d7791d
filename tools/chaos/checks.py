"""The checks of the chaos run: every artifact and TensorBoard events file valid (also while run B runs:
`Watcher`), no temporary file left, retried self-play jobs kept their games, run B the same run as run A
(`minigo_core.data.compare`, each difference described), and the report's table of the kinds.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from minigo_core.data import compare as comparison
from minigo_core.data import gamefile, layout, pack, shards, storage
from minigo_core.nn import modelfile
from minigo_core.report import tfevents
from tools.chaos.kills import Chaos, Kill
from tools.chaos.processes import Proc
from tools.chaos.runs import ROOT, Runner, nothing_left_to_do

# The artifacts the checks open with the library's readers, as patterns relative to the run root (`layout`).
MODEL_FILES = layout.model_path("", "*").lstrip("/")
GAME_FILES = layout.game_path("", "*", "*").lstrip("/")
SHARD_FILES = storage.join(layout.window_dir("", "*"), "shard*" + layout.GAME_SUFFIX).lstrip("/")
MANIFESTS = layout.window_manifest_path("", "*").lstrip("/")
PACK_FILES = layout.pack_path("", "*").lstrip("/")
TENSORBOARD = layout.tensorboard_dir("").lstrip("/")  # events files: no artifacts, but never half written


def checked_files(root: Path) -> dict[str, Path]:
    """What must be valid under its final name: the artifacts (`compare.artifacts`) and TensorBoard's events
    files (relative path -> path)."""
    files = comparison.artifacts(root)
    for path in sorted((root / TENSORBOARD).rglob(f"*{layout.TFEVENTS}*")):
        if path.is_file() and not storage.is_temporary(path.name):
            files[path.relative_to(root).as_posix()] = path
    return files


def validate(path: Path, rel: str, manifest_sha: dict[str, str] | None = None) -> str | None:
    """None if the artifact at `path` is complete and valid, else what is wrong with it."""
    from minigo_core.nn import model  # lazy: torch, only for the model files

    try:
        if fnmatch.fnmatch(rel, MODEL_FILES):
            model.load_model(str(path), backend="torch")
        elif fnmatch.fnmatch(rel, GAME_FILES):
            gamefile.read_game(str(path)).training_examples()
        elif fnmatch.fnmatch(rel, PACK_FILES):
            return validate_pack(path)
        elif fnmatch.fnmatch(rel, SHARD_FILES):
            shard = shards.load_shard(str(path), (manifest_sha or {}).get(rel))
            shard.rows(0, shard.num_rows)
        elif rel.endswith(".jsonl"):
            for line in path.read_text().splitlines():
                json.loads(line)
        elif rel.endswith(".json"):
            json.loads(path.read_text())
        elif rel.endswith(".yaml"):
            yaml.safe_load(path.read_text())
        elif layout.TFEVENTS in rel:
            tfevents.read_points(path.read_bytes(), rel)
        elif rel.endswith(".png"):
            if not path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"):
                return "not a PNG file"
    except FileNotFoundError:
        return None  # removed meanwhile (Snakemake cleans up the outputs of a failed job)
    except Exception as exc:  # noqa: BLE001 - any failure to read is the finding
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


def validate_pack(path: Path) -> str | None:
    """None if every member of a pack is its recorded bytes and every packed game reads, else what is not."""
    packed = pack.Pack(str(path))
    problems = packed.damaged()
    for m in packed.members():
        if m.kind == "game":
            gamefile.game_from_bytes(packed.read(m.path), f"{path}:{m.path}").training_examples()
    return "; ".join(problems[:5]) or None


def manifest_checksums(root: Path) -> dict[str, str]:
    sums = {}
    for manifest in root.glob(MANIFESTS):
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
        for rel, path in checked_files(self.root).items():
            if rel.endswith(
                ".jsonl"
            ):  # metrics.jsonl is a log, appended to (no temporary file: see artifacts)
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


def describe_difference(rel: str, a: Path, b: Path, ignored: frozenset[str] = frozenset()) -> str:
    """What differs between the reference's and the chaos run's version of one artifact (`ignored`: keys
    left out of the comparison)."""
    da, db = a.read_bytes(), b.read_bytes()
    offset = next((i for i, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), min(len(da), len(db)))
    head = f"{rel}: {len(da)} vs {len(db)} bytes, first difference at byte {offset}"
    try:
        if rel.endswith(".safetensors"):
            fa, fb = modelfile.read(str(a)), modelfile.read(str(b))
            sa, sb = fa.tensors, fb.tensors
            tensors = [k for k in sa if k not in sb or not np.array_equal(sa[k], sb[k])]
            fields = _json_diff(
                {"config": fa.config.to_dict(), "provenance": fa.provenance},
                {"config": fb.config.to_dict(), "provenance": fb.provenance},
            )
            return f"{head}; weights differ in {tensors[:5] or 'none'}; other fields: {fields[:6] or 'none'}"
        if fnmatch.fnmatch(rel, PACK_FILES):
            return f"{rel}: members differ: {comparison.pack_differences(a, b)[:8]}"
        if fnmatch.fnmatch(rel, GAME_FILES):
            ra, rb = gamefile.read_game(str(a)), gamefile.read_game(str(b))
            fields = _json_diff(ra.metadata, rb.metadata)
            same_rows = bool(
                np.array_equal(ra.visits, rb.visits) and np.array_equal(ra.root_value, rb.root_value)
            )
            rows = "equal" if same_rows else "differ"
            return f"{head}; metadata differs in {fields[:6] or 'nothing'}; rows {rows}"
        if rel.endswith((".jsonl", ".json", ".csv")):
            data_a, data_b = comparison.load_structured(a), comparison.load_structured(b)
            diff = _json_diff(comparison.strip(data_a, ignored), comparison.strip(data_b, ignored))
            return f"{head}; {diff[:8]}"
    except Exception as exc:  # noqa: BLE001 - the byte offset is still a useful description
        return f"{head} ({type(exc).__name__} while describing: {exc})"
    return head


def compare(reference: Path, chaos: Path) -> list[str]:
    """Every way the chaos run differs from the reference (empty: the same run), each described.
    Temporary files are not compared: check_run reports them."""
    ra, rb = comparison.artifacts(reference), comparison.artifacts(chaos)
    diffs = comparison.differences(reference, chaos)
    problems = [f"{d.rel}: missing from the chaos run" for d in diffs if d.kind == "missing"]
    problems += [f"{d.rel}: only in the chaos run" for d in diffs if d.kind == "extra"]
    for d in diffs:
        if d.kind == "data":
            ignored = comparison.wall_clock_fields(d.rel)
            described = describe_difference(d.rel, ra[d.rel], rb[d.rel], ignored)
            problems.append(f"{described} (wall-clock fields ignored)")
        elif d.kind == "bytes":
            problems.append(describe_difference(d.rel, ra[d.rel], rb[d.rel]))
    return problems


def check_run(root: Path, label: str, killed: dict[int, str] | None = None) -> list[str]:
    """Temporary files left behind and invalid artifacts in one run (`killed`: pid -> what the chaos run
    killed, to name the writer of a temporary file, whose name ends in `.PID.RANDOM`)."""
    problems = []
    for path in sorted(root.rglob(f"{storage.TMP_PREFIX}*")):
        parts = path.name.rsplit(".", 2)
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        writer = f" (written by pid {pid}: {killed[pid]})" if killed and pid in killed else ""
        problems.append(f"{label}: temporary file left behind: {path.relative_to(root)}{writer}")
    sums = manifest_checksums(root)
    for rel, path in checked_files(root).items():
        problem = validate(path, rel, sums)
        if problem is not None:
            problems.append(f"{label}: {rel} is invalid: {problem}")
    return problems


def check_selfplay_retries(workdir: Path, kills: list[Kill]) -> list[str]:
    """For each killed self-play job: did its retry keep the game files the killed attempt had written (its
    record's `attempt.kept_from_earlier_attempt`, its log's "kept N game files of an earlier attempt")?"""
    problems = []
    for kill in kills:
        d = kill.detail
        if kill.status != "killed" or not d.get("record"):
            continue
        if kill.kind == "disk-full" and len(d["game_files_at_kill"]) == d["games_per_job"]:
            continue  # every game was written before the disk filled: the job may have ended, no retry
        try:  # loose, or in its generation's pack
            kept = json.loads(pack.read_member(str(workdir / d["record"])))["attempt"][
                "kept_from_earlier_attempt"
            ]
        except (OSError, ValueError, KeyError, TypeError):
            kept = None
        try:
            lines = pack.read_member(str(workdir / d["log"])).decode(errors="replace").splitlines()
        except OSError:
            lines = []
        d["retry"] = {"kept": kept, "log": next((line for line in lines if line.startswith("kept ")), None)}
        if kept is not None and not set(d["game_files_at_kill"]) <= set(kept):
            problems.append(
                f"self-play job {d['record']} was killed with games {d['game_files_at_kill']} "
                f"written, but its final attempt kept only {kept}"
            )
    return problems


def per_kind(kills: list[Kill], misses: dict[str, int]) -> dict[str, dict]:
    """The report per kind: planned, killed, not reached (with the reasons), each kill's detail, and the
    processes of the kind that ended before their drawn moment (missed: the next one was aimed at)."""
    out: dict[str, dict] = {}
    for kill in kills:
        entry = out.setdefault(kill.kind, {"planned": 0, "killed": 0, "not_reached": 0, "reasons": [],
                                           "missed": misses.get(kill.kind, 0), "kills": []})  # fmt: skip
        entry["planned"] += 1
        if kill.status == "killed":
            entry["killed"] += 1
            entry["kills"].append(kill.detail)
        else:
            entry["not_reached"] += 1
            repeat = " (a soak's repeat: as the run allows)" if kill.optional else ""
            entry["reasons"].append((kill.reason or kill.status) + repeat)
    return out


def kind_table(kinds: dict[str, dict]) -> str:
    """A short table of `per_kind`: one line per kind, then the reasons of the kills not reached."""
    head = f"{'kind':17}{'planned':>8}{'killed':>7}{'not reached':>12}{'missed':>7}"
    lines = [f"{head}  kills: attempt, wall s (CPU s) into the process, ..."]
    notes = []
    for kind, e in kinds.items():
        parts = []
        for d in e["kills"]:
            cpu = f" ({d['cpu_s']:.2f})" if d.get("cpu_s") is not None else ""
            text = f"a{d['attempt']} {d['seconds_into_process']:.2f}s{cpu}"
            if "games_per_job" in d:
                kept = (d.get("retry") or {}).get("kept")
                text += (
                    f" K={d['games_per_job']}, {len(d['game_files_at_kill'])} game files, retry kept {kept}"
                )
            text += f" on {d['node']}" if "node" in d else ""
            parts.append(text)
        counts = f"{e['planned']:>8}{e['killed']:>7}{e['not_reached']:>12}{e['missed']:>7}"
        lines.append(f"{kind:17}{counts}  {'; '.join(parts)}")
        notes += [f"  {kind} not reached: {reason}" for reason in e["reasons"]]
    return "\n".join(lines + notes)


def final_checks(
    work: Path, runner: Runner, chaos: Chaos, result: dict, watcher: Watcher, left: list[Proc]
) -> list[str]:
    """Every problem of the chaos run: kills not reached, leftovers, invalid or different artifacts."""
    problems: list[str] = []
    if result["final_exit"] != 0:
        problems.append(f"the chaos run never finished (last exit {result['final_exit']})")
    problems += [
        f"kill {i + 1} of {len(chaos.kills)} ({k.kind}) not reached: {k.reason}"
        for i, k in enumerate(chaos.kills)
        if k.status != "killed" and not k.optional  # a soak's repeat: as the run allows
    ]
    if left:
        problems.append(f"processes of the run still alive after it finished: {[p.kind for p in left]}")
    problems += watcher.problems
    if result["final_exit"] == 0:
        problem = nothing_left_to_do(work / "B", runner)
        problems += [problem] if problem else []
    problems += check_selfplay_retries(work / "B", chaos.kills)
    problems += check_run(work / "A" / ROOT, "reference")
    killed = {k.detail["pid"]: f"the {k.kind} process killed in attempt {k.detail['attempt']}, whose "
              "retry left it there" for k in chaos.kills if k.status == "killed"}  # fmt: skip
    problems += check_run(work / "B" / ROOT, "chaos run", killed)
    problems += compare(work / "A" / ROOT, work / "B" / ROOT)
    return problems
