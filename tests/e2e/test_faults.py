"""Faults through the real command line: corrupt game and model files, a training rank killed mid-run, and
a second Snakemake on a run directory that is in use.

Good inputs come from the library on the tiny config (a random generation-0 model, self-play games); every
fault is then injected and the `minigo ...` commands are run as a user would run them.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
import torch

from minigo_core.base import config
from minigo_core.data import gamefile, layout, storage
from minigo_core.nn import model
from minigo_core.selfplay import selfplay_game

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
SNAKEMAKE = str(Path(PYTHON).with_name("snakemake"))
GOOD_GAMES = 6
RANK_DEATH_LIMIT_S = 120  # a dead rank must fail the job well within this

torch.set_num_threads(1)


def minigo(*args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "minigo_core.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, **kwargs)  # fmt: skip


# The tiny run with GOOD_GAMES whole games per generation; write_config(directory, FAULTS, ...) writes it.
FAULTS = {
    "selfplay": {
        "games": GOOD_GAMES,
        "full_search_fraction": 1.0,  # every position recorded: enough rows for 2 ranks
        "resign_disabled_fraction": 1.0,
    },
    "window": {"max_bad_fraction": 0.5},
}


def foreign_arrow_stream() -> bytes:
    table = pa.table({"move": pa.array([1, 2, 3], pa.int16()), "who": pa.array(["b", "w", "b"])})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def no_temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(f"{storage.TMP_PREFIX}*")]


class Run(dict):
    """The fixture's paths; a short repr keeps failure reports readable."""

    def __repr__(self) -> str:
        return f"Run(root={self['root']})"


@pytest.fixture(scope="module")
def run(tmp_path_factory, write_config) -> Run:
    """A run root with generation 0 (model and good games), bad game files among them, and the window of
    generation 1 built over all of it by `minigo window`."""
    base = tmp_path_factory.mktemp("faults")
    root = base / "run"
    cfg_path = write_config(base, FAULTS, name="config.yaml", root=str(root))
    run_cfg = config.load_config(str(cfg_path))
    model_url = layout.model_path(str(root), 0)
    net = model.random_model(model.ModelConfig.from_run(run_cfg), seed=run_cfg.seed)
    model.save_model(model_url, net, {"generation": 0, "parent": None})
    net = model.load_model(model_url, backend="dsp")
    for i in range(GOOD_GAMES):
        record = selfplay_game.play_selfplay_game(net, run_cfg, 0, i, model_url)
        gamefile.write_game(layout.game_path(str(root), 0, i), record)
    good = Path(layout.game_path(str(root), 0, 0)).read_bytes()
    games = Path(layout.games_dir(str(root), 0))
    bad = {
        games / "game00090.arrow": good[: len(good) // 2],  # truncated
        games / "game00091.arrow": b"",  # empty
        games / "game00092.arrow": os.urandom(2000),  # garbage
        games / "game00093.arrow": foreign_arrow_stream(),  # an Arrow file of another program
    }
    for path, data in bad.items():
        path.write_bytes(data)
    # A writer killed mid-write leaves a temporary name: ignored, never read, never reported as bad.
    (games / f"{storage.TMP_PREFIX}game00094.arrow.123.abcd").write_bytes(good[:100])
    out_dir = Path(layout.window_dir(str(root), 1))
    proc = minigo("window", "--config", str(cfg_path), "--generation", "1", "--out-dir", str(out_dir))
    return Run(
        base=base, root=root, config=cfg_path, bad=bad, window=out_dir, proc=proc, model=Path(model_url)
    )


# ------------------------------------------------------------------------------------------ bad game files
def test_window_skips_and_reports_each_bad_game_file(run):
    proc = run["proc"]
    assert proc.returncode == 0, f"minigo window failed (bad files under the limit):\n{proc.stderr[-3000:]}"
    manifest = json.loads((run["window"] / "manifest.json").read_text())
    skipped = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert set(skipped) == {str(p) for p in run["bad"]}, f"manifest 'skipped' is {sorted(skipped)}"
    assert all(reason for reason in skipped.values())
    assert len(manifest["games"]) == GOOD_GAMES
    for path in run["bad"]:
        assert str(path) in proc.stderr, f"the window's log does not name the skipped file {path}"
    assert "game00094" not in json.dumps(manifest) and "game00094" not in proc.stderr, (
        "a temporary (half-written) file was read or reported"
    )
    assert sorted(p.name for p in run["window"].glob("shard*.arrow")) == ["shard000.arrow", "shard001.arrow"]
    assert not no_temporaries(run["window"])


def test_status_reports_skipped_game_files(run):
    """`minigo status` shows a generation whose window skipped files (issue 8: manifest, log, status)."""
    root = run["root"]
    (root / "config.yaml").write_text(run["config"].read_text())  # what the workflow writes into the root
    proc = minigo("status", str(root))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln for ln in proc.stdout.splitlines() if re.search(r"skip|bad", ln, re.I)]
    assert any(str(len(run["bad"])) in ln for ln in lines), (
        f"`minigo status` does not report the {len(run['bad'])} skipped game files of generation 1's window:"
        f"\n{proc.stdout}"
    )


def test_status_counts_only_the_planned_games_of_an_unfinished_generation(run):
    """Files no self-play job of this config writes (game00090.arrow, 6 games planned) are not games."""
    from minigo_core.report import status

    rows = status.collect(config.load_config(str(run["config"])))
    assert rows[0].games_total == GOOD_GAMES and not rows[0].games_complete
    assert rows[0].games_done == GOOD_GAMES, f"counted {rows[0].games_done} games, {GOOD_GAMES} were played"


def test_window_fails_past_max_bad_fraction_naming_the_files(run, tmp_path, write_config):
    cfg_path = write_config(
        tmp_path, FAULTS, name="strict.yaml", root=str(run["root"]), window={"max_bad_fraction": 0.2}
    )
    out_dir = tmp_path / "window"
    proc = minigo("window", "--config", str(cfg_path), "--generation", "1", "--out-dir", str(out_dir))
    assert proc.returncode != 0, "the window succeeded with 4 of 10 files bad and max_bad_fraction 0.2"
    for path in run["bad"]:
        assert str(path) in proc.stderr, f"the failure message does not name {path}:\n{proc.stderr[-3000:]}"
    assert "max_bad_fraction" in proc.stderr
    assert "Traceback" not in proc.stderr, f"a traceback instead of a message:\n{proc.stderr[-3000:]}"
    assert not (out_dir / "manifest.json").exists(), "a failed window left a manifest (it looks finished)"
    assert not no_temporaries(tmp_path)


# ---------------------------------------------------------------------------------------- bad model files
def test_corrupt_model_file_is_named_by_selfplay_and_train(run, tmp_path):
    good = run["model"].read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(good[: len(good) // 3])
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(os.urandom(len(good)))
    cfg = str(run["config"])
    commands = {
        "selfplay": ["selfplay", "--config", cfg, "--model", str(truncated), "--generation", "0",
                     "--game", "7", "--out", str(tmp_path / "game.arrow")],
        "train": ["train", "--config", cfg, "--generation", "1", "--window-dir", str(run["window"]),
                  "--parent", str(garbage), "--out", str(tmp_path / "gen0001.safetensors"), "--ranks", "1",
                  "--work-dir", str(tmp_path / "train")],
    }  # fmt: skip
    procs = {name: subprocess.Popen([PYTHON, "-m", "minigo_core.cli", *argv], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=REPO)
             for name, argv in commands.items()}  # fmt: skip
    problems = []
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        bad_file = truncated if name == "selfplay" else garbage
        if proc.returncode == 0:
            problems.append(f"minigo {name} accepted a corrupt model file")
        elif str(bad_file) not in err:
            problems.append(f"minigo {name}: the error does not name {bad_file}:\n{err[-2000:]}")
        elif "Traceback" in err:
            problems.append(f"minigo {name}: a traceback instead of (only) a message:\n{err[-3000:]}")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "game.arrow").exists() and not (tmp_path / "gen0001.safetensors").exists()
    assert not no_temporaries(tmp_path)


# ------------------------------------------------------------------------------------ a training rank dies
def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _rank_pid(launcher: int, rank: int) -> int | None:
    for child in _children(launcher):
        argv = _cmdline(child)
        if "--rank" in argv and argv[argv.index("--rank") + 1] == str(rank):
            return child
    return None


def _listening(port: int) -> bool:
    """Whether something listens on TCP `port` (rank 0's store), read from /proc/net/tcp{,6}."""
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                return True
    return False


def test_killed_training_rank_fails_the_job_in_bounded_time_then_retry_succeeds(run, tmp_path):
    out = tmp_path / "gen0001.safetensors"
    work = tmp_path / "train"
    argv = [PYTHON, "-m", "minigo_core.cli", "train", "--config", str(run["config"]), "--generation", "1",
            "--window-dir", str(run["window"]), "--parent", str(run["model"]), "--out", str(out),
            "--ranks", "2", "--work-dir", str(work), "--no-wall-time"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        # Freeze rank 1 the moment it exists, so it cannot finish first (a tiny job trains in well under a
        # second), then kill it while rank 0 waits for it: rank 0 would otherwise wait for it for the whole
        # collective timeout.
        deadline = time.monotonic() + 180
        victim = None
        while time.monotonic() < deadline and proc.poll() is None and victim is None:
            victim = _rank_pid(proc.pid, 1)
            if victim is None:
                time.sleep(0.01)
        assert victim is not None and proc.poll() is None, (
            f"rank 1 never appeared (exit {proc.poll()}):\n{''.join(stderr)[-3000:]}"
        )
        os.kill(victim, signal.SIGSTOP)
        argv1 = _cmdline(victim)
        port = int(argv1[argv1.index("--master-port") + 1])  # rank 0 hosts the TCP store there
        while time.monotonic() < deadline and proc.poll() is None and not _listening(port):
            time.sleep(0.05)
        assert proc.poll() is None and _listening(port), (
            f"rank 0 never reached the rendezvous (exit {proc.poll()}):\n{''.join(stderr)[-3000:]}"
        )
        time.sleep(0.5)  # rank 0 waits for rank 1 inside the job
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        try:
            code = proc.wait(timeout=RANK_DEATH_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"minigo train still runs {RANK_DEATH_LIMIT_S} s after rank 1 was killed (a hang)")
        waited = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=10)
    err = "".join(stderr)
    assert code != 0, f"minigo train exited 0 after rank 1 was killed {waited:.1f} s before:\n{err[-3000:]}"
    assert re.search(r"rank 1\b", err), f"the failure does not name rank 1:\n{err[-3000:]}"
    assert _rank_pid(proc.pid, 0) is None
    assert not out.exists(), "a failed training job left a model file under its final name"
    assert not no_temporaries(tmp_path)
    assert not _listening(port), "the failed attempt left its store listening"

    # The retry is a new attempt: a fresh rendezvous, and it succeeds.
    retry = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert retry.returncode == 0, f"the retry failed:\n{retry.stderr[-3000:]}"
    net = model.load_model(str(out), backend="torch")
    assert net.cfg.board_size == 5
    assert not no_temporaries(tmp_path)


# ------------------------------------------------------------------------------------------ Snakemake lock
def test_second_snakemake_on_the_same_run_is_refused_by_the_lock(tmp_path, write_config):
    cfg_path = write_config(tmp_path, FAULTS, root=str(tmp_path / "run"))
    cmd = ["timeout", "-k", "10", "240", SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"),
           "--configfile", str(cfg_path), "--directory", str(tmp_path), "--cores", "1"]  # fmt: skip
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                             start_new_session=True)  # fmt: skip
    try:
        locks = tmp_path / ".snakemake" / "locks"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and first.poll() is None and not any(locks.glob("*")):
            time.sleep(0.1)
        assert first.poll() is None and any(locks.glob("*")), "the first Snakemake never took its lock"
        second = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        out = second.stdout + second.stderr
        assert second.returncode != 0, f"a second Snakemake ran on a locked run directory:\n{out[-3000:]}"
        assert re.search(r"cannot be locked|LockException", out), f"no clear lock message:\n{out[-3000:]}"
        assert first.poll() is None, "the second Snakemake disturbed the first"
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        first.wait()


# ------------------------------------------------------------------------------- games-complete and records
def test_games_complete_checks_each_game_against_its_job_record(tmp_path, write_config):
    """A game file that is not the file its job wrote (here: another game's bytes copied over it) is bad;
    past `window.max_bad_fraction` the step fails naming the job record to delete."""
    root = tmp_path / "run"
    cfg_path = write_config(
        tmp_path, FAULTS, name="config.yaml", root=str(root), window={"max_bad_fraction": 0.0}
    )
    run_cfg = config.load_config(str(cfg_path))
    (root / "config.yaml").parent.mkdir(parents=True)
    (root / "config.yaml").write_text(cfg_path.read_text())
    model_url = layout.model_path(str(root), 0)
    model.save_model(
        model_url, model.random_model(model.ModelConfig.from_run(run_cfg), seed=1), {"generation": 0}
    )
    per_job = run_cfg.selfplay.games_per_job
    for job, first in enumerate(range(0, GOOD_GAMES, per_job)):
        count = min(per_job, GOOD_GAMES - first)
        proc = minigo("selfplay", "--config", str(cfg_path), "--model", model_url, "--generation", "0",
                      "--game", str(first), "--count", str(count),
                      "--out", layout.game_path_pattern(str(root), 0),
                      "--record", layout.selfplay_job_path(str(root), 0, job))  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    done = minigo("games-complete", "--config", str(cfg_path), "--generation", "0")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(Path(layout.complete_marker_path(str(root), 0)).read_text())["games"] == GOOD_GAMES
    swapped = Path(layout.game_path(str(root), 0, 4))
    swapped.write_bytes(Path(layout.game_path(str(root), 0, 0)).read_bytes())  # a valid game, not game 4
    proc = minigo("games-complete", "--config", str(cfg_path), "--generation", "0")
    assert proc.returncode == 1
    assert "is not the file its job wrote" in proc.stderr and str(swapped) in proc.stderr
    assert f"rm {layout.selfplay_job_path(str(root), 0, 4 // per_job)}" in proc.stderr, proc.stderr[-2000:]
