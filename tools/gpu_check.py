"""`make test-gpu`: check the CUDA paths on a machine with an NVIDIA GPU in a few minutes; one summary.

    python3 tools/gpu_check.py [--python PY] [--wheels DIR] [--no-build] [--budget-s 480]

Runs with any Python 3 (standard library only) and drives a Python that has torch with CUDA, which need not
be the project's `.venv` (a GPU node often has its own torch and no network):

1. finds that Python: `--python`, else the first of `.venv/bin/python`, `python3` and this Python whose torch
   sees a GPU. None: prints "no CUDA GPU: skipped" with what each candidate has, and exits 0;
2. checks the modules the checks import (numpy, pyyaml, fsspec, safetensors, pytest; pyarrow for the
   self-play test) and what the build needs (setuptools, a C++ compiler, Python.h). Missing ones are named
   with the command that installs them; `--wheels DIR` installs them offline from a folder of wheels into
   a scratch folder (`pip install --no-index --find-links DIR --target ...`);
3. copies the repository (without .git, .venv, runs, built libraries) to a scratch folder and runs there
   the tests marked `cuda` (tests/gpu, with `--noconftest`: no fixture of tests/conftest.py, whose imports
   need the whole pipeline) that need no compiled library; then builds the compiled libraries against that
   Python's torch (`setup.py build_ext --inplace`, no build isolation; the checkout's own build, for the
   `.venv`'s torch, is left as it is) and runs the dsp backend's tests, which need them (`--no-build`: all
   the tests at once in the checkout, with what is built there);
4. runs the training-step benchmark (`python -m minigo_core.bench train_step`: the GPU against the CPU);
5. prints one summary (the GPU, torch, what ran, passed, failed and skipped, the step times) and writes it,
   with the logs, to `$OUT/gpu_summary.txt` when the environment sets OUT, else `runs/gpu/summary.txt`.

Exit status: 0 passed or skipped (no GPU); 1 something failed (the build, a test, the benchmark); 2 it
could not run (a module missing). `--rehearse-on-cpu` runs every step with a Python without a GPU (the
tests skip, the benchmark runs on the CPU): a way to try this script where there is no GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# import name -> pip name: what tests/gpu and the benchmark import besides torch (minigo_core's own imports)
REQUIRED = {
    "numpy": "numpy",
    "yaml": "pyyaml",
    "fsspec": "fsspec",
    "safetensors": "safetensors",
    "pytest": "pytest",
}
OPTIONAL = {"pyarrow": "pyarrow"}  # the self-play test writes a game record (it skips without)
BUILD = {"setuptools": "setuptools"}
NEEDS_BUILD = "dsp_backend"  # -k: the tests of tests/gpu that import the compiled dsp extension
COPY_IGNORE = (".git", ".venv", "runs", "build", "*.egg-info", ".snakemake", "__pycache__", "*.pyc", "*.so",
               ".pytest_cache", ".ruff_cache", ".hypothesis")  # fmt: skip

PROBE = r"""
import importlib, json, os, shutil, sys, sysconfig, warnings
out = {"executable": sys.executable, "python": sys.version.split()[0], "modules": {}, "errors": {}}
for name in sys.argv[1:]:
    try:
        out["modules"][name] = str(getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as exc:
        out["errors"][name] = f"{type(exc).__name__}: {exc}"
out["python_h"] = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
out["cxx"] = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch
        out["torch"], out["torch_cuda"] = torch.__version__, torch.version.cuda
        out["cuda"] = bool(torch.cuda.is_available())
    out["warnings"] = [str(w.message).splitlines()[0] for w in caught][:3]
    if out["cuda"]:
        import torch.distributed as dist
        out["nccl"] = bool(dist.is_available() and dist.is_nccl_available())
        out["gpus"] = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            out["gpus"].append(f"{p.name} (compute {p.major}.{p.minor}, {p.total_memory / 2**30:.0f} GiB)")
        out["cudnn"] = torch.backends.cudnn.version()
except Exception as exc:
    out["torch_error"] = f"{type(exc).__name__}: {exc}"
print("PROBE" + json.dumps(out))
"""


class Clock:
    """The time left of the check's budget."""

    def __init__(self, budget_s: float) -> None:
        self.start, self.budget_s = time.monotonic(), budget_s

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.start)


def say(message: str) -> None:
    print(f"[gpu-check] {message}", flush=True)


def probe(python: str, env: dict | None = None) -> dict:
    """What `python` has: its version, torch and CUDA, the GPUs, the modules the checks import."""
    names = [*REQUIRED, *OPTIONAL, *BUILD]
    try:
        done = subprocess.run(
            [python, "-c", PROBE, *names], capture_output=True, text=True, timeout=180, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"executable": python, "failed": f"{type(exc).__name__}: {exc}"}
    for line in done.stdout.splitlines():
        if line.startswith("PROBE"):
            return json.loads(line[len("PROBE") :])
    return {"executable": python, "failed": (done.stderr.strip().splitlines() or ["no output"])[-1]}


def describe(info: dict) -> str:
    """One line: the Python, its torch and whether it sees a GPU."""
    if "failed" in info:
        return f"{info['executable']}: did not run ({info['failed']})"
    head = f"{info['executable']} (Python {info['python']})"
    if "torch" not in info:
        return f"{head}: no torch ({info.get('torch_error', 'not importable')})"
    cuda = f"CUDA {info['torch_cuda']}" if info.get("torch_cuda") else "a CPU-only build"
    seen = "sees " + "; ".join(info.get("gpus", [])) if info.get("cuda") else "sees no GPU"
    note = f" [{info['warnings'][0]}]" if info.get("warnings") else ""
    return f"{head}: torch {info['torch']} ({cuda}), {seen}{note}"


def candidates(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = [str(REPO / ".venv" / "bin" / "python"), shutil.which("python3"), sys.executable]
    out: list[str] = []
    for path in found:
        if path and os.path.exists(path) and path not in out:
            out.append(path)
    return out


def missing(info: dict, names: dict) -> list[str]:
    return [n for n in names if n not in info.get("modules", {})]


def install_wheels(python: str, wheels: str, packages: list[str], target: Path) -> str:
    """Install `packages` from the wheel folder `wheels` (no index) into `target`; '' or the error's tail."""
    argv = [python, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheels, "--target",
            str(target), *packages]  # fmt: skip
    say(f"installing {' '.join(packages)} from {wheels} into {target}")
    done = subprocess.run(argv, capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr.strip() or done.stdout.strip())[-800:]


def copy_tree(dest: Path) -> None:
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(*COPY_IGNORE), symlinks=True)


def run_logged(argv: list[str], cwd: Path, env: dict, log: Path, timeout: float) -> tuple[int | None, float]:
    """Run `argv` with its output in `log`; (exit code, or None when it ran past `timeout` and was stopped
    with everything it started, seconds)."""
    start = time.monotonic()
    with open(log, "w") as fh:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the compilers and rank processes too
            proc.wait()
            code = None
    return code, time.monotonic() - start


def tail(path: Path, lines: int = 12) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def minor(info: dict) -> str:
    """'3.12' of a probe's Python version '3.12.3'."""
    return ".".join(info["python"].split(".")[:2])


def build_hint(info: dict, log: Path) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    if not info.get("python_h") or "Python.h" in text:
        return f"Python.h is missing: install this Python's headers (apt-get install python{minor(info)}-dev)"
    if not info.get("cxx"):
        return "no C++ compiler (c++/g++): install g++ (apt-get install g++)"
    return f"see {log.name}"


def junit_results(path: Path) -> list[dict]:
    """[{name, outcome (passed, failed, error, skipped), message}] from pytest's --junitxml file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):  # none written, or cut short by the time limit
        return []
    out = []
    for case in root.iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or child.text or "").strip().splitlines()[0:1]
                message = message[0] if message else ""
                break
        out.append({"name": case.get("name", "?"), "outcome": outcome, "message": message[:300],
                    "time_s": float(case.get("time") or 0)})  # fmt: skip
    return out


def run_tests(python: str, tree: Path, env: dict, select: str, junit: Path, log: Path, timeout: float):
    """pytest -m cuda on tests/gpu (`select`: a -k expression, or '' for all) -> (exit code or None when
    stopped at `timeout`, results, seconds). CUDA_LAUNCH_BLOCKING=1: a kernel's fault is raised at the op that
    launched it, so the log names it (asynchronous, it surfaces at a later call, often in another test)."""
    env = {**env, "CUDA_LAUNCH_BLOCKING": "1"}
    argv = [python, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", "--noconftest", "-m", "cuda",
            f"--junitxml={junit}", "tests/gpu"]  # fmt: skip
    code, secs = run_logged([*argv, "-k", select] if select else argv, tree, env, log, timeout)
    return code, junit_results(junit), secs


def bench_lines(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):  # none written, or cut part way
        return []
    lines = [f"  device: {data['device']}"]
    for r in data["rows"]:
        line = (f"  {r['setup']:11s} {r['blocks']}x{r['filters']} batch {r['batch']:4d}: "
                f"{r['ms_per_step']:8.2f} ms/step {r['examples_per_s']:9.0f} ex/s")  # fmt: skip
        if "cpu_ms_per_step" in r:
            line += (
                f"; CPU ({r['cpu_threads']} threads) {r['cpu_ms_per_step']:8.1f} ms/step: {r['speedup']:.1f}x"
            )
        lines.append(line)
    return lines


def out_dir() -> tuple[Path, str]:
    """Where the summary and logs go, and the summary's file name."""
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"]), "gpu_summary.txt"
    return REPO / "runs" / "gpu", "summary.txt"


def finish(lines: list[str], status: str, code: int, logs: dict[str, Path]) -> int:
    folder, name = out_dir()
    prefix = "gpu_" if name.startswith("gpu_") else ""
    summary = ["== minigo GPU check (make test-gpu) ==", *lines, f"result: {status}"]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for label, path in logs.items():
            if path.exists():
                shutil.copyfile(path, folder / f"{prefix}{label}")
        (folder / name).write_text("\n".join(summary) + "\n")
        summary.append(f"(written to {folder / name})")
    except OSError as exc:
        summary.append(f"(could not write {folder / name}: {exc})")
    print("\n".join(summary), flush=True)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--python",
        default=os.environ.get("GPU_PYTHON") or None,
        help="the Python with torch and CUDA [env GPU_PYTHON; else the first that sees a GPU]",
    )
    p.add_argument(
        "--wheels",
        default=os.environ.get("GPU_WHEELS") or None,
        help="a folder of wheels to install missing modules from, offline [env GPU_WHEELS]",
    )
    p.add_argument("--no-build", action="store_true", help="run in the checkout with what is built there")
    p.add_argument(
        "--budget-s", type=float, default=480, help="the whole check's time limit in seconds [480]"
    )
    p.add_argument("--work", default=None, help="scratch folder (default: a new temporary folder, removed)")
    p.add_argument(
        "--rehearse-on-cpu",
        action="store_true",
        help="run every step with a Python without a GPU (tests skip; benchmark on the CPU)",
    )
    args = p.parse_args(argv)  # fmt: skip
    clock = Clock(args.budget_s)
    lines: list[str] = []

    say("looking for a Python whose torch sees a CUDA GPU")
    infos = [probe(c) for c in candidates(args.python)]
    chosen = next((i for i in infos if i.get("cuda")), None)
    if chosen is None and args.rehearse_on_cpu:
        chosen = next((i for i in infos if "torch" in i), None)
    if chosen is None:
        lines += ["no CUDA GPU: skipped (nothing was built or run)", *(f"  {describe(i)}" for i in infos)]
        lines.append("  on a GPU node: `make test-gpu`, or GPU_PYTHON=/path/to/python make test-gpu")
        return finish(lines, "SKIPPED (no CUDA GPU)", 0, {})
    python = chosen["executable"]
    rehearsal = not chosen.get("cuda")
    lines.append(f"python: {describe(chosen)}")
    if chosen.get("cuda"):
        lines.append(f"GPUs: {len(chosen['gpus'])}; cuDNN {chosen.get('cudnn')}; nccl {chosen.get('nccl')}")
    else:
        lines.append(
            "REHEARSAL on the CPU (--rehearse-on-cpu): the cuda tests skip, the benchmark runs on the CPU"
        )

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="minigo-gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS under torch's deterministic algorithms
    extra_path: list[str] = []
    try:
        # ---- modules -------------------------------------------------------------------------------------
        absent = (
            missing(chosen, REQUIRED)
            + missing(chosen, OPTIONAL)
            + ([] if args.no_build else missing(chosen, BUILD))
        )
        if absent and args.wheels:
            target = work / "deps"
            error = install_wheels(
                python, args.wheels, [{**REQUIRED, **OPTIONAL, **BUILD}[n] for n in absent], target
            )
            if error:
                lines.append(f"installing from {args.wheels} failed: {error}")
            extra_path.append(str(target))
            env["PYTHONPATH"] = os.pathsep.join([*extra_path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
            chosen = {**probe(python, env), "executable": python}
        needed = missing(chosen, REQUIRED) + ([] if args.no_build else missing(chosen, BUILD))
        optional = missing(chosen, OPTIONAL)
        if optional:
            lines.append(f"optional modules missing: {', '.join(optional)} (the self-play test skips)")
        if needed:
            pips = " ".join({**REQUIRED, **BUILD}[n] for n in needed)
            lines += [
                f"cannot run: {python} lacks {', '.join(needed)}",
                f"  with a network: {python} -m pip install {pips}",
                "  without: on a machine with one, `pip download --only-binary=:all: --python-version "
                f"{minor(chosen)} --platform manylinux2014_x86_64 -d gpu-wheels {pips}`, "
                "copy gpu-wheels/ here and run `GPU_WHEELS=gpu-wheels make test-gpu`",
            ]
            return finish(lines, "CANNOT RUN (modules missing)", 2, {})

        # ---- tests, the build, the tests that need it -----------------------------------------------------
        # The compiled libraries take minutes to build (one large file at a time), and only the dsp backend's
        # tests need them: the torch backend's run first, so their results are in even if the build is slow.
        failed: list[str] = []
        build_log, test_log = work / "build.log", work / "pytest.log"
        tree = REPO if args.no_build else work / "tree"
        if not args.no_build:
            copy_tree(tree)
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *extra_path, os.environ.get("PYTHONPATH", "")])
        env["PYTHONPATH"] = env["PYTHONPATH"].rstrip(os.pathsep)
        runs = []  # (pytest's exit code, results, seconds)
        first = "" if args.no_build else f"not ({NEEDS_BUILD})"
        say(f"running the tests marked cuda (tests/gpu){' that need no build' if first else ''}")
        runs.append(run_tests(python, tree, env, first, work / "junit1.xml", test_log, clock.left() - 150))
        if args.no_build:
            lines.append(f"build: skipped (--no-build): the checkout's libraries, {REPO}")
        else:
            jobs = str(len(os.sched_getaffinity(0)))
            say(f"building the compiled libraries against torch {chosen['torch']} in {tree} ({jobs} jobs)")
            code, secs = run_logged(
                [python, "setup.py", "build_ext", "--inplace", "-j", jobs],
                tree, {**env, "MAX_JOBS": jobs}, build_log, clock.left() - 120,
            )  # fmt: skip
            if code == 0:
                lines.append(f"build: ok in {secs:.0f} s (setup.py build_ext --inplace, scratch copy {tree})")
                say("running the tests marked cuda that need the build")
                junit2, log2 = work / "junit2.xml", work / "pytest2.log"
                runs.append(run_tests(python, tree, env, NEEDS_BUILD, junit2, log2, clock.left() - 90))
            else:
                why = "ran past its time" if code is None else f"exit {code}: {build_hint(chosen, build_log)}"
                lines += [f"build: FAILED after {secs:.0f} s ({why}); the dsp backend's tests did not run"]
                lines += [f"  | {x}" for x in tail(build_log, 6)]
                failed.append("build")
        results = [r for _, rs, _ in runs for r in rs]
        counts = {
            k: sum(r["outcome"] == k for r in results) for k in ("passed", "failed", "error", "skipped")
        }
        lines.append(
            f"tests (-m cuda, tests/gpu): {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['error']} errors, {counts['skipped']} skipped in {sum(t for _, _, t in runs):.0f} s"
        )
        for r in results:
            reason = f": {r['message']}" if r["outcome"] != "passed" and r["message"] else ""
            lines.append(f"  {r['outcome'].upper():7s} {r['name']} ({r['time_s']:.1f} s){reason}")
        for i, (code, rs, _) in enumerate(runs):
            log = test_log if i == 0 else work / "pytest2.log"
            if code is None:
                lines.append(f"  pytest ran past its time and was stopped ({log.name})")
            if code not in (0, 5) or not rs:
                failed.append("tests")
                lines += [f"  | {x}" for x in tail(log, 8)] if not rs else []
        if counts["failed"] or counts["error"]:
            failed.append("tests")
        elif not rehearsal and not counts["passed"]:
            failed.append("tests (none passed on the GPU)")
        failed = list(dict.fromkeys(failed))

        # ---- benchmark -----------------------------------------------------------------------------------
        bench_json, bench_log = work / "bench.json", work / "bench.log"
        bench = [python, "-m", "minigo_core.bench", "train_step", "--json", str(bench_json), "--cpu-steps"]
        bench += ["0", "--device", "cpu", "--setups", "9x9", "--steps", "2"] if rehearsal else ["2"]
        say("timing training steps (python -m minigo_core.bench train_step)")
        code, secs = run_logged(bench, tree, env, bench_log, clock.left() - 5)
        rows = bench_lines(bench_json)  # written after each setup: a run cut short keeps what it measured
        if code == 0 or (code is None and len(rows) > 1):
            cut = "" if code == 0 else ", stopped at the check's time limit"
            lines += [f"benchmark (training step, torch backend; {secs:.0f} s{cut}):", *rows]
        else:
            why = "ran past the check's time" if code is None else f"exit {code}"
            lines += [f"benchmark: FAILED ({why})", *(f"  | {x}" for x in tail(bench_log, 6))]
            failed.append("benchmark")

        lines.append(f"total {args.budget_s - clock.left():.0f} s (budget {args.budget_s:.0f} s)")
        logs = {
            "build.log": build_log,
            "pytest.log": test_log,
            "pytest2.log": work / "pytest2.log",
            "bench.json": bench_json,
            "bench.log": bench_log,
        }
        if failed:
            return finish(lines, f"FAILED ({', '.join(failed)})", 1, logs)
        return finish(lines, "REHEARSAL OK (no GPU)" if rehearsal else "PASSED", 0, logs)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
