"""Self-play at scale through `--profile profiles/slurm` on the real 2-node test cluster (slurm_cluster.py).

One generation of 512 self-play games (5x5, the tiny net) in jobs of 32 games (16 Slurm jobs, as the paper's
8192 games go out in 128 jobs of 64): every game file valid and listed with its digest in its job's record,
the generation's marker counts 512 games, and the number of Slurm jobs per generation is printed. Then the
same generation again in another working directory while one self-play job is SIGKILLed after its first game
files are written: Snakemake resubmits it (`--retries 1`), the retry keeps the games its killed attempt
wrote and plays the rest, and every game file and record is byte-identical to the undisturbed run's.

Both runs use the same relative root (`run`) in their own working directory, so the model paths recorded in
the game files are the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import load_config
from minigo_core.data import gamefile, layout, schedule

REPO = Path(__file__).resolve().parents[2]
GAMES, PER_JOB = 512, 32
pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def write_config(workdir: Path) -> Path:
    data = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    data.update(root="run", generations=1)
    # more readouts than the tiny config's: a job lasts a few seconds, long enough to be killed mid-way
    data["selfplay"].update(games=GAMES, games_per_job=PER_JOB, readouts=64, fast_readouts=32)
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "scale.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def snakemake_cmd(workdir: Path, config: Path, retries: int) -> list[str]:
    return [
        "timeout", "-k", "10", "900", sys.executable, "-m", "snakemake",
        "--profile", str(REPO / "profiles" / "slurm"),
        "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--configfile", str(config),
        "--config", "last_generation=0", "--slurm-logdir", str(workdir / "slurm_logs"),
        # test-cluster settings: a fast first status check, a local disk
        "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5", "--retries", str(retries),
        "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=500", "runtime=30",
    ]  # fmt: skip


def submitted(text: str) -> dict[str, int]:
    """Slurm submissions per rule, from the plugin's `Job N has been submitted with SLURM jobid ...` lines
    and the rule names in its log paths."""
    counts: dict[str, int] = {}
    for rule in re.findall(r"rule_(\w+?)/", text):
        counts[rule] = counts.get(rule, 0) + 1
    return counts


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def undisturbed(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("scale") / "A"
    config = write_config(workdir)
    start = time.monotonic()
    out = subprocess.run(
        snakemake_cmd(workdir, config, retries=0), cwd=REPO, capture_output=True, text=True, env=cluster.env
    )
    seconds = time.monotonic() - start
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-6000:] + "\n" + cluster.log_tail()
    return workdir, config, text, seconds


def test_512_games_in_16_slurm_jobs_every_game_valid_and_recorded(undisturbed):
    workdir, config, text, seconds = undisturbed
    cfg = load_config(str(config))
    root = str(workdir / "run")
    jobs = schedule.selfplay_job_count(cfg)
    assert jobs == GAMES // PER_JOB == 16
    slurm_jobs = len(set(re.findall(r"submitted with SLURM jobid (\d+)", text)))
    print(
        f"\ngeneration 0: {GAMES} games in {jobs} self-play jobs; {slurm_jobs} Slurm jobs "
        f"(bootstrap, self-play, games-complete) in {seconds:.0f} s"
    )
    assert slurm_jobs == 1 + jobs + 1, submitted(text)
    listed = {}
    for j in range(jobs):
        record = json.loads(Path(layout.selfplay_job_path(root, 0, j)).read_text())
        assert [f["game"] for f in record["files"]] == list(range(j * PER_JOB, (j + 1) * PER_JOB))
        listed.update({f["game"]: f["sha256"] for f in record["files"]})
    for i in range(GAMES):
        path = Path(layout.game_path(root, 0, i))
        assert gamefile.read_game(str(path)).metadata["seed"]["game"] == i
        assert sha256(path) == listed[i]
    marker = json.loads(Path(layout.complete_marker_path(root, 0)).read_text())
    assert marker["games"] == GAMES and marker["bad_files"] == []
    # one log per job, not per game
    logs = sorted(os.listdir(layout.logs_dir(root, "selfplay", "gen0000")))
    assert logs == [f"job{j:05d}.log" for j in range(jobs)]


def _selfplay_process(workdir: Path) -> tuple[int, int] | None:
    """(pid, first game) of a running `minigo selfplay` of this run that has written a game file but not
    yet its record; None if there is none right now."""
    root = workdir / "run"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv]
        if "selfplay" not in args or "--record" not in args or cwd != str(workdir):
            continue
        first = int(args[args.index("--game") + 1])
        record = workdir / args[args.index("--record") + 1]
        written = [
            i for i in range(first, first + PER_JOB) if Path(layout.game_path(str(root), 0, i)).exists()
        ]
        if written and not record.exists() and len(written) < PER_JOB // 2:
            return int(pid), first
    return None


def test_a_killed_selfplay_job_is_retried_keeps_its_games_and_gives_the_same_files(cluster, undisturbed):
    reference, _, _, _ = undisturbed
    workdir = reference.parent / "B"
    config = write_config(workdir)
    proc = subprocess.Popen(
        snakemake_cmd(workdir, config, retries=1),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=cluster.env,
    )
    victim = None
    deadline = time.monotonic() + 600
    while victim is None and proc.poll() is None and time.monotonic() < deadline:
        victim = _selfplay_process(workdir)
        time.sleep(0.02)
    assert victim is not None, "no self-play job was caught between its first game and its record"
    pid, first = victim
    os.kill(pid, signal.SIGKILL)
    text = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, text[-6000:] + "\n" + cluster.log_tail()
    job = first // PER_JOB
    log = Path(layout.logs_dir(str(workdir / "run"), "selfplay", "gen0000", f"job{job:05d}.log")).read_text()
    assert "kept " in log and "game files of an earlier attempt" in log, log[-2000:]
    record = json.loads(Path(layout.selfplay_job_path(str(workdir / "run"), 0, job)).read_text())
    kept = record["attempt"]["kept_from_earlier_attempt"]
    assert 0 < len(kept) < PER_JOB
    print(f"\nkilled the job of games {first}..{first + PER_JOB - 1}; its retry kept {len(kept)} of them")
    names = [Path(layout.game_path("run", 0, i)) for i in range(GAMES)]
    names += [Path(layout.selfplay_job_path("run", 0, j)) for j in range(GAMES // PER_JOB)]
    different = []
    for rel in names:
        a, b = reference / rel, workdir / rel
        if rel.suffix == ".json":
            same = json.loads(a.read_text())["files"] == json.loads(b.read_text())["files"]
        else:
            same = a.read_bytes() == b.read_bytes()
        if not same:
            different.append(str(rel))
    assert different == []
