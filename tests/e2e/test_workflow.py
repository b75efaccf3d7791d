"""The Snakemake workflow: dry runs of the bounded plan, start-up validation, lint/format, and a real tiny run
end to end (the plan itself, without Snakemake: tests/unit/test_plan.py).

The end-to-end run (5x5, a 1x8 net, 4 games per generation in 2 self-play jobs of 3 and 1, 2 generations,
2 training ranks) goes through `minigo run` with the local profile, then every artifact is opened with the
library's readers, parts of generations are rerun to show that they reproduce byte-identical game
files, shards and model, and its HTML report is rendered in headless Chromium, whose graph must draw a whole
generation's rules.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from minigo_core.base.config import load_config
from minigo_core.bench.dag import build_run
from minigo_core.data import layout, schedule
from minigo_core.rating import calibration, ladder_walk

REPO = Path(__file__).resolve().parents[2]


def snakemake(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = ["timeout", "-k", "10", str(timeout), sys.executable, "-m", "snakemake", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)


def dry_run(run_config: Path, *config: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`snakemake -n --quiet rules --cores 1 --configfile RUN_CONFIG [--config ...]` of the repository."""
    args = ["-n", "--quiet", "rules", "--cores", "1", "--configfile", str(run_config)]
    return snakemake(*args, *(["--config", *config] if config else []), *extra)


def job_counts(output: str) -> dict[str, int]:
    """The `Job stats` table of a Snakemake dry run: jobs per rule."""
    counts: dict[str, int] = {}
    for line in output.split("Job stats:", 1)[-1].splitlines():
        match = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if match and match.group(1) == "total":
            break  # the end of the (first) table
        if match:
            counts[match.group(1)] = int(match.group(2))
    return counts


def planned_jobs(output: str) -> list[dict]:
    """The jobs a Snakemake dry run lists: rule, output files, log and wildcards of each."""
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", output, flags=re.M)[1:]:
        lines = block.splitlines()
        job = {"rule": lines[0].split()[-1].rstrip(":"), "output": [], "log": None, "wildcards": ""}
        for line in lines[1:]:
            key, _, value = line.strip().partition(": ")
            if key == "output":
                job["output"] = value.split(", ")
            elif key in ("log", "wildcards"):
                job[key] = value
        jobs.append(job)
    return jobs


# --------------------------------------------------------------------------------------- dry runs (DAG)
def test_dry_run_plans_only_unfinished_generations_without_their_history(finished_run):
    cfg, run_config = finished_run(done=3, games=5)
    for g in range(3):  # older game files are never looked at: the markers stand for them
        for i in range(5):
            os.remove(layout.game_path(cfg.root, g, i))
    out = dry_run(run_config, "plan_max_jobs=1")
    assert out.returncode == 0, out.stderr[-3000:]
    counts = job_counts(out.stdout + out.stderr)
    # generation 3's games only: 5 games in jobs of 3 (config/tiny.yaml's games_per_job)
    assert counts["selfplay"] == schedule.selfplay_job_count(cfg) == 2 and counts["games_complete"] == 1
    assert counts["window"] == 1 and counts["train"] == 1
    # generation 3's evaluations are left to the next invocation (they run alongside generation 4)
    assert "evaluate" not in counts
    assert "generations 3..3 of 6" in out.stdout + out.stderr
    assert "bootstrap" not in counts


def test_dry_run_runs_deferred_evaluations_alongside_the_next_generation(finished_run):
    cfg, run_config = finished_run(done=4, games=5)
    for path in schedule.evaluation_files(cfg, 3):
        os.remove(path)
    out = dry_run(run_config, "plan_max_jobs=1")
    assert out.returncode == 0, out.stderr[-3000:]
    counts = job_counts(out.stdout + out.stderr)
    assert counts["evaluate"] == 2 and counts["selfplay"] == 2 and counts["train"] == 1
    assert counts["ladder_rating"] == 1  # generation 3's, started from generation 2's (5x5 has a ladder)
    assert counts["ladder_first_rating"] == 1  # and its first rating, from generation 2's first one


def test_dry_run_explicit_rerun_of_one_generation(finished_run):
    cfg, run_config = finished_run(done=3, games=4)
    records = [layout.selfplay_job_path(cfg.root, 1, j) for j in range(2)]
    out = dry_run(run_config, "first_generation=1", "last_generation=1", extra=("--forcerun", *records))
    assert out.returncode == 0, out.stderr[-3000:]
    counts = job_counts(out.stdout + out.stderr)
    assert counts == {"selfplay": 2, "games_complete": 1, "all": 1}  # 4 games in jobs of 3 and 1


def test_report_generation_puts_a_finished_generations_jobs_in_the_graph_and_runs_none(finished_run):
    _, run_config = finished_run(done=7)  # every generation finished (the summary is not)

    def rules(out: subprocess.CompletedProcess) -> set[str]:  # the nodes of `snakemake --rulegraph`
        return set(re.findall(r'label = "(\w+)"', out.stdout))

    plain = snakemake("--rulegraph", "--cores", "1", "--configfile", str(run_config))
    assert plain.returncode == 0 and rules(plain) == {"run_config", "ratings", "plots", "all"}, plain.stderr
    shown = snakemake("--rulegraph", "--cores", "1", "--configfile", str(run_config), "--config",
                      "report_generation=5")  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert rules(shown) == rules(plain) | {"window", "train", "selfplay", "games_complete", "evaluate",
                                           "ladder_first_rating", "ladder_rating"}  # fmt: skip
    out = dry_run(run_config, "report_generation=5")  # its jobs are in the DAG, finished: none runs
    assert out.returncode == 0, out.stderr[-3000:]
    assert job_counts(out.stdout + out.stderr) == {"ratings": 1, "plots": 1, "all": 1}
    assert "generation 5's finished jobs in the DAG for the report" in out.stdout + out.stderr


def test_dry_run_packs_what_left_the_window_and_asks_nothing_of_packed_generations(tmp_path, write_config):
    # generations 0..4 finished, 0..2 packed (their windows 2..4 built): nothing but placeholders' packs left
    config = write_config(
        tmp_path, generations=6, selfplay={"games": 5}, storage={"pack_old_generations": True}
    )
    run_config = build_run(str(tmp_path / "run"), config, 5, 5, 6)
    cfg = load_config(str(run_config))
    assert not os.path.exists(layout.games_dir(cfg.root, 2)) and os.path.exists(layout.games_dir(cfg.root, 3))
    out = dry_run(run_config, "plan_max_jobs=1")
    assert out.returncode == 0, out.stderr[-3000:]
    counts = job_counts(out.stdout + out.stderr)
    assert (
        counts["pack"] == 1 and counts["window"] == 1
    )  # generation 3, once window 5 (which reads it) is built
    assert "packs of generations 3" in out.stdout + out.stderr
    os.remove(layout.packed_marker_path(cfg.root, 1))  # a pack a killed run left undone
    out = dry_run(run_config, "plan_max_jobs=1")
    assert job_counts(out.stdout + out.stderr)["pack"] == 2, out.stderr[-3000:]
    out = dry_run(run_config, "first_generation=2", "last_generation=2")
    assert out.returncode != 0 and "minigo unpack" in out.stdout + out.stderr


@pytest.mark.parametrize(
    ("games", "per_job", "jobs"),
    [(4, 1, [[0], [1], [2], [3]]), (6, 3, [[0, 1, 2], [3, 4, 5]]), (7, 3, [[0, 1, 2], [3, 4, 5], [6]])],
    ids=["K=1", "K divides games", "K does not divide games"],
)
def test_dry_run_plans_one_selfplay_job_per_games_per_job_games(tmp_path, write_config, games, per_job, jobs):
    config = write_config(tmp_path, generations=1, selfplay={"games": games, "games_per_job": per_job})
    cfg = load_config(str(config))
    assert [list(r) for r in schedule.selfplay_jobs(cfg)] == jobs
    # and the ladder rating and its first rating (5x5 has a ladder; the budget counts both per generation)
    matches = len(schedule.opponent_specs(cfg)) + 2
    assert schedule.jobs_per_generation(cfg) == len(jobs) + 3 + matches
    out = snakemake("-n", "-p", "--cores", "1", "--configfile", str(config))
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout + out.stderr
    planned = [j for j in planned_jobs(text) if j["rule"] == "selfplay"]
    logs = layout.logs_dir(cfg.root, "selfplay", "gen0000")
    # one rule; each job's output is its record, one log per job
    expected = [
        ([layout.selfplay_job_path(cfg.root, 0, j)], f"{logs}/job{j:05d}.log") for j in range(len(jobs))
    ]
    assert sorted((j["output"], j["log"]) for j in planned) == sorted(expected)
    assert {j["wildcards"] for j in planned} == {f"generation=0000, job={j:05d}" for j in range(len(jobs))}
    for j, g in enumerate(jobs):  # the shell command plays the job's games
        assert f"--game {g[0]} --count {len(g)} " in text and f"job{j:05d}.json" in text
    assert job_counts(out.stdout + out.stderr)["selfplay"] == len(jobs)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"board_size": 4}, "board_size"),  # minigo_core.base.config: out of range
        (
            {"selfplay": {"readouts": 4}},
            "selfplay.readouts",
        ),  # minigo_core.base.config: below parallel_readouts
        ({"evaluate": {"opponents": ["gen9"]}}, "gen9"),  # an opponent beyond the run's generations
        ({"train": {"rankz": 2}}, "rankz"),  # unknown key
    ],
)
def test_bad_config_fails_at_start_up_naming_the_key(tmp_path, write_config, override, message):
    config = write_config(tmp_path, **override)
    out = snakemake("-n", "-p", "--cores", "1", "--configfile", str(config))
    assert out.returncode != 0
    assert message in out.stdout + out.stderr
    assert not (tmp_path / "run").exists()  # nothing ran


def test_snakemake_lint_has_only_the_accepted_deployment_lint(tmp_path, write_config):
    # Policy (docs/CONTRACTS.md, workflow): every job runs in the project's own environment (`make setup`,
    # the same .venv on the shared filesystem), so the lint asking for a conda env or container per rule is
    # accepted; any other lint fails this test.
    out = snakemake("--lint", "--configfile", str(write_config(tmp_path)))
    text = out.stdout + out.stderr
    lints = re.findall(r"^    \* (.+?):?$", text, flags=re.M)
    assert lints, "snakemake --lint printed no lints at all; has its output format changed?"
    others = [lint for lint in lints if not lint.startswith("Specify a conda environment or container")]
    assert others == [], text[-4000:]


def test_snakefmt_check():
    snakefmt = shutil.which("snakefmt") or str(Path(sys.executable).parent / "snakefmt")
    out = subprocess.run(
        [snakefmt, "--check", "Snakefile", "workflow/rules"], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


# --------------------------------------------------------------------------------------- end to end
def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


DEAD_PID = 4_000_001  # above Linux's pid_max (4194304 at most, 2^22): no process has it


def killed_writers_leftovers(cfg, scratch: Path) -> list[tuple[Path, Path]]:
    """Plant, before the run, what killed attempts of every job would have left: a temporary sibling of each
    file the run writes (`storage.temporary_name`'s form, a dead writer's pid) and a killed window build's
    spill directory under the scratch directory (TMPDIR). Each with a file that shows its job ran."""
    root, gens = cfg.root, range(cfg.generations + 1)
    finals = [layout.effective_config_path(root), *(layout.model_path(root, g) for g in gens)]
    for g in schedule.selfplay_generations(cfg):
        finals += [layout.game_path(root, g, i) for i in range(cfg.selfplay.games)]
        finals += [layout.selfplay_job_path(root, g, j) for j in range(len(schedule.selfplay_jobs(cfg)))]
        finals.append(layout.complete_marker_path(root, g))
    for g in range(1, cfg.generations + 1):
        finals += [layout.shard_path(root, g, r) for r in range(cfg.train.ranks)]
        finals += [layout.window_manifest_path(root, g), layout.train_metrics_path(root, g)]
        finals += [layout.eval_path(root, g, spec.slug) for spec in schedule.evaluation_specs(cfg, g)]
        finals += [layout.ladder_rating_path(root, g), layout.ladder_first_rating_path(root, g)]
    finals += [layout.summary_path(root, name) for name in layout.SUMMARY_FILES]
    planted = [(Path(f).with_name(f".tmp-{Path(f).name}.{DEAD_PID}.deadbeef"), Path(f)) for f in finals]
    for g in range(1, cfg.generations + 1):
        metrics = Path(layout.train_metrics_path(root, g))  # the checkpoint: removed once the model is
        planted.append((metrics.with_name(f".tmp-{layout.CHECKPOINT}.{DEAD_PID}.deadbeef"), metrics))
        for kind in ("train", "selfplay"):  # an events file's temporary is named without `tfevents`
            events = Path(layout.tensorboard_path(root, kind, g))
            hidden = events.name.replace(layout.TFEVENTS, "events")
            planted.append((events.with_name(f".tmp-{hidden}.{DEAD_PID}.deadbeef"), events))
    lock = Path(root) / layout.RUN_LOCK  # a launcher's: its host and pid (pipeline/run_lock.py)
    planted.append((lock.with_name(f".tmp-{lock.name}.{socket.gethostname()}.{DEAD_PID}"), Path(root)))
    for tmp, _ in planted:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(b"half a file")
    spill = scratch / f"minigo-window-{DEAD_PID}-k1ll3d"
    (spill / "bucket0").mkdir(parents=True)
    (spill / "bucket0" / "rows.arrow").write_bytes(b"spilled rows")
    return [*planted, (spill, Path(layout.window_manifest_path(root, 1)))]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, write_config):
    """A real tiny run through `minigo run --profile profiles/local` (what `make run` does), over the
    leftovers of killed writers (`killed_writers_leftovers`: its 4th element lists them)."""
    tmp_path = tmp_path_factory.mktemp("tiny")
    config = write_config(tmp_path)
    scratch = tmp_path / "scratch"
    planted = killed_writers_leftovers(load_config(str(config)), scratch)
    cmd = [
        "timeout",
        "-k",
        "10",
        "900",
        sys.executable,
        "-m",
        "minigo_core.cli",
        "run",
        "--profile",
        "profiles/local",
        "--config",
        str(config),
        "--",
        "--cores",
        "2",
    ]
    out = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ, "TMPDIR": str(scratch)}
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    return load_config(str(config)), config, out.stdout, planted


@pytest.mark.slow
def test_each_job_removed_what_a_killed_attempt_of_it_left(tiny_run):
    # every writer's temporary file is removed by the job that writes that file (the retry of a killed one)
    # (one whose file the run does not write, as generation 2's first rating, no job owns: it stays)
    cfg, _, _, planted = tiny_run
    assert [str(tmp) for tmp, final in planted if tmp.exists() and final.exists()] == []
    unowned = {str(tmp) for tmp, final in planted if not final.exists()}
    assert len(unowned) <= 2, unowned  # the list above names the run's files
    assert sorted(str(p) for p in Path(cfg.root).rglob(".tmp-*") if str(p) not in unowned) == []


@pytest.mark.slow
def test_local_run_produces_every_artifact_and_each_validates(tiny_run):
    from minigo_core.data import gamefile
    from minigo_core.data.matchfile import read_match
    from minigo_core.nn import model

    cfg, _, stdout, _ = tiny_run
    root = cfg.root
    assert load_config(layout.effective_config_path(root)) == cfg
    for g in range(cfg.generations + 1):
        net = model.load_model(layout.model_path(root, g), backend="torch")
        assert net.cfg.board_size == cfg.board_size
    for g in schedule.selfplay_generations(cfg):
        marker = json.loads(Path(layout.complete_marker_path(root, g)).read_text())
        assert marker["games"] == cfg.selfplay.games and marker["bad_files"] == []
        lengths = []
        for i in range(cfg.selfplay.games):
            record = gamefile.read_game(layout.game_path(root, g, i))
            assert record.metadata["seed"] == {"run_seed": cfg.seed, "generation": g, "game": i}
            # selfplay.model_lag 1 (config/tiny.yaml): games g are played by model g-1 while model g trains
            played_by = schedule.selfplay_model_generation(cfg, g)
            assert played_by == max(0, g - 1) and record.metadata["model"]["generation"] == played_by
            assert record.metadata["model"]["sha256"] == model.model_digest(
                layout.model_path(root, played_by)
            )
            lengths.append(len(record.moves))
        assert marker["game_lengths"] == lengths
        assert marker["positions"] == sum(
            gamefile.read_game(layout.game_path(root, g, i)).metadata["num_positions"]
            for i in range(cfg.selfplay.games)
        )
    for g in range(1, cfg.generations + 1):
        manifest = json.loads(Path(layout.window_manifest_path(root, g)).read_text())
        assert manifest["generation"] == g and manifest["rows"] > 0
        assert all(Path(layout.shard_path(root, g, r)).stat().st_size > 0 for r in range(cfg.train.ranks))
        steps = [
            json.loads(line) for line in Path(layout.train_metrics_path(root, g)).read_text().splitlines()
        ]
        assert steps[-1]["event"] == "end" and steps[0]["ranks"] == cfg.train.ranks
        # train.replay_ratio (config/tiny.yaml): steps x global batch per new position, up to one batch
        batch = cfg.train.ranks * cfg.train.batch_per_rank
        assert abs(steps[0]["replay_ratio"] - cfg.train.replay_ratio) <= batch / steps[0]["new_positions"] / 2
        for spec in schedule.evaluation_specs(cfg, g):
            match = read_match(layout.eval_path(root, g, spec.slug))
            assert match.player == f"gen{g:04d}" and match.games == cfg.evaluate.games
    elo = json.loads(Path(layout.ratings_path(root)).read_text())
    assert {p["player"] for p in elo["players"]} >= {f"gen{g:04d}" for g in range(cfg.generations + 1)}
    for name in (*layout.SUMMARY_FILES, layout.REPORT_FILE):
        assert Path(layout.summary_path(root, name)).stat().st_size > 0, name
    # `minigo run` printed where the results are and the fixed-scale table (the run-relative fit: a file)
    assert f"results of the run in {root}" in stdout and "strength on the fixed Elo ladder (5x5" in stdout
    assert "ratings (Elo" not in stdout and "run-relative Bradley-Terry fit, anchor gen0000 = 0" in stdout
    assert Path(layout.ladder_first_rating_path(root, 1)).stat().st_size > 0  # a first rating of generation 1


def tensorboard_scalars(folder: str) -> dict[str, list[int]]:
    """tag -> its steps in a TensorBoard run folder, as TensorBoard's own accumulator reads them."""
    from tensorboard.backend.event_processing import event_accumulator

    acc = event_accumulator.EventAccumulator(folder)
    acc.Reload()
    return {tag: [e.step for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.mark.slow
def test_the_run_wrote_tensorboard_events_as_it_went(tiny_run):
    cfg, _, _, _ = tiny_run
    root, evaluated = cfg.root, list(range(1, cfg.generations + 1))
    lines = [
        line for g in evaluated for line in Path(layout.train_metrics_path(root, g)).read_text().splitlines()
    ]
    records = [json.loads(line) for line in lines]
    steps = [r["global_step"] for r in records if r["event"] == "step"]
    train = tensorboard_scalars(layout.tensorboard_dir(root, "train"))
    assert {"train/loss_policy", "train/loss_score", "train/policy_accuracy", "train/learning_rate",
            "train/examples_per_second"} <= set(train)  # fmt: skip
    assert all(points == steps for points in train.values())  # one point per step record
    selfplay = tensorboard_scalars(layout.tensorboard_dir(root, "selfplay"))
    games = list(schedule.selfplay_generations(cfg))
    assert selfplay == dict.fromkeys(
        ["generation/games", "generation/positions", "generation/selfplay_positions_per_second"], games
    )
    matches = [(g, spec.slug) for g in evaluated for spec in schedule.evaluation_specs(cfg, g)]
    for slug in {slug for _, slug in matches}:  # one folder per opponent, a point per generation's match
        kind = layout.tensorboard_eval_kind(slug)
        expected = [g for g, s in matches if s == slug]
        assert tensorboard_scalars(layout.tensorboard_dir(root, kind)) == {
            f"generation/winrate_{slug}": expected
        }
    ladder = tensorboard_scalars(layout.tensorboard_dir(root, "ladder"))
    tags = ["generation/elo_fixed", "generation/elo_fixed_low", "generation/elo_fixed_high"]
    assert ladder == dict.fromkeys(tags, evaluated)
    # the folders grew while the run went: generation 1's files were there before model 2 was written
    model2 = os.stat(layout.model_path(root, 2)).st_mtime_ns
    assert os.stat(layout.tensorboard_path(root, "train", 1)).st_mtime_ns <= model2
    assert os.stat(layout.tensorboard_path(root, "selfplay", 0)).st_mtime_ns <= model2


@pytest.mark.slow
def test_artifacts_are_inspectable_from_the_command_line(tiny_run):
    cfg, _, _, _ = tiny_run
    for path in (layout.game_path(cfg.root, 1, 0), layout.model_path(cfg.root, 2)):
        out = subprocess.run(
            [sys.executable, "-m", "minigo_core.cli", "inspect", path],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0 and out.stdout.strip(), out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "minigo_core.cli", "status", cfg.root],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if re.match(r"^\s*\d+\s", line)]
    assert [int(r[0]) for r in rows] == list(range(cfg.generations + 1))
    assert rows[0][1] == f"{cfg.selfplay.games}/{cfg.selfplay.games}"
    assert rows[2][4] == "models/gen0002.safetensors"
    assert "all 2 generations are done" in out.stdout


def rerun(config: Path, generation: int, *options: str) -> str:
    """Snakemake (local profile) on one generation; returns its output."""
    span = [f"first_generation={generation}", f"last_generation={generation}"]
    out = snakemake("--profile", "profiles/local", "--cores", "2", "--configfile", str(config), "--config",
                    *span, *options, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout + out.stderr


def fingerprints(files: list[str]) -> dict[str, tuple[str, int]]:
    return {f: (sha256(f), os.stat(f).st_mtime_ns) for f in files}


@pytest.mark.slow
def test_rerunning_a_generations_training_and_selfplay_reproduces_model_and_games(tiny_run):
    cfg, config, _, _ = tiny_run
    g = 1
    files = [layout.model_path(cfg.root, g)] + [layout.game_path(cfg.root, g, i) for i in range(4)]
    before = fingerprints(files)
    others = [
        layout.model_path(cfg.root, 2),
        layout.game_path(cfg.root, 0, 0),
        layout.shard_path(cfg.root, g, 0),
    ]
    untouched = {f: os.stat(f).st_mtime_ns for f in others}
    # A lagged generation (selfplay.model_lag 1): its games are model g-1's, which the rerun does not rewrite,
    # so a job would keep them; deleted, they are played again
    assert schedule.selfplay_model_generation(cfg, g) == g - 1
    for f in files[1:]:
        os.remove(f)
    rerun(config, g, "--forcerun", "train", "selfplay", "games_complete")
    after = fingerprints(files)
    assert [f for f in files if after[f][1] == before[f][1]] == []  # every file was written again
    assert [f for f in files if after[f][0] != before[f][0]] == []  # ... byte for byte the same
    assert {f: os.stat(f).st_mtime_ns for f in others} == untouched  # the window and other generations kept


LADDER_WALL_CLOCK = ("date", "wall_seconds", "cpu_seconds", "startup_cpu_seconds")


def ladder_rating(cfg, g: int) -> dict:
    return json.loads(Path(layout.ladder_rating_path(cfg.root, g)).read_text())


@pytest.mark.slow
def test_every_evaluated_generation_is_rated_on_the_fixed_ladder_and_a_rerun_reproduces_it(tiny_run):
    cfg, config, _, _ = tiny_run
    assert schedule.ladder_rated(cfg)  # 5x5: config/ladder/5x5.json
    first, second = ladder_rating(cfg, 1), ladder_rating(cfg, 2)
    for g, rating in ((1, first), (2, second)):
        assert rating["player"] == f"gen{g:04d}" and rating["board_size"] == cfg.board_size
        assert all(math.isfinite(x) for x in (rating["elo"], *rating["ci95"]))
        assert rating["ci95"][0] < rating["elo"] < rating["ci95"][1]
        assert 0 < rating["games"] <= cfg.evaluate.ladder_max_games
        assert rating["seed"] == schedule.ladder_seed(cfg, g)
    # no chain: each rating starts from its own generation's first rating, or (the last generation, which
    # has none) at the table's middle rung; never from another generation's result
    own = schedule.first_rating_file(cfg, 1)
    if own is not None:
        assert own in first["command"] and first["start_elo"] == json.loads(Path(own).read_text())["elo"]
    else:
        assert "--start-from" not in first["command"]
    table = calibration.read_ladder_at(cfg.board_size, None)
    assert "--start-from" not in second["command"] and second["start_elo"] == ladder_walk.middle_elo(table)
    assert layout.ladder_rating_path(cfg.root, 1) not in second["command"]
    assert Path(layout.summary_path(cfg.root, layout.LEARNING_CURVE_PLOT)).stat().st_size > 0
    path = layout.ladder_rating_path(cfg.root, 2)
    before = os.stat(path).st_mtime_ns
    output = rerun(config, 2, "--forcerun", path)
    ran = re.findall(r"^(?:local)?rule (\w+):$", output, flags=re.M)
    assert ran.count("ladder_rating") == 1, output[-3000:]
    assert os.stat(path).st_mtime_ns != before
    again = ladder_rating(cfg, 2)
    strip = lambda r: {k: v for k, v in r.items() if k not in LADDER_WALL_CLOCK}  # noqa: E731
    assert strip(again) == strip(second)
    assert ladder_rating(cfg, 1) == first


@pytest.mark.slow
def test_a_deleted_game_file_is_replayed_by_its_job_which_keeps_the_others(tiny_run):
    cfg, config, _, _ = tiny_run
    g = 1
    jobs = schedule.selfplay_jobs(cfg)
    assert [list(r) for r in jobs] == [[0, 1, 2], [3]]  # config/tiny.yaml: 4 games in jobs of 3
    games = {i: layout.game_path(cfg.root, g, i) for i in range(cfg.selfplay.games)}
    record = layout.selfplay_job_path(cfg.root, g, 0)
    log = layout.logs_dir(cfg.root, "selfplay", f"gen{g:04d}", "job00000.log")
    before = fingerprints(list(games.values()) + [log, record])
    files_before = json.loads(Path(record).read_text())["files"]
    os.remove(games[1])
    # The generation's marker is still there: rerun the job that owns the game (as README.md says) ...
    output = rerun(config, g, "--forcerun", record)
    ran = re.findall(r"^(?:local)?rule (\w+):$", output, flags=re.M)
    assert sorted(ran) == sorted(["selfplay", "games_complete", "all"]), output[-3000:]
    # ... which keeps its two other game files and plays game 1 again, to the same bytes
    after = fingerprints(list(games.values()) + [log, record])
    assert {i for i, f in games.items() if after[f][1] != before[f][1]} == {1}
    assert {i for i, f in games.items() if after[f][0] != before[f][0]} == set()
    assert after[log][1] != before[log][1]  # one log per job, written again
    assert "kept 2 game files of an earlier attempt: 0,2" in Path(log).read_text()
    assert json.loads(Path(record).read_text())["files"] == files_before  # names, sizes, digests


@pytest.mark.slow
def test_rerunning_a_generations_window_and_training_reproduces_shards_and_model(tiny_run):
    cfg, config, _, _ = tiny_run
    g = 2
    files = [layout.shard_path(cfg.root, g, r) for r in range(cfg.train.ranks)]
    files += [layout.model_path(cfg.root, g)]
    before = fingerprints(files)
    rerun(config, g, "--forcerun", "window", "train", "--until", "train")
    after = fingerprints(files)
    assert [f for f in files if after[f][1] == before[f][1]] == []  # every file was written again
    assert [f for f in files if after[f][0] != before[f][0]] == []  # ... byte for byte the same


# ----------------------------------------------------------------------------------------- the report
# What the report's graph must draw: every rule of generation 1 of config/tiny.yaml (the latest generation
# that plays self-play; evaluated, rated on the 5x5 ladder, nothing packed), and the summary rules.
GENERATION_RULES = {"window", "train", "selfplay", "games_complete", "evaluate", "ladder_first_rating",
                    "ladder_rating"}  # fmt: skip
SUMMARY_RULES = {"run_config", "ratings", "plots", "all"}
# vega-embed draws the graph on a canvas, whose labels are pixels: the copy of the report that the test
# reads asks it for SVG instead, so that the labels it draws are elements of the rendered page
SVG_GRAPH = (
    "<script>const embedOnCanvas = vegaEmbed;"
    ' vegaEmbed = (el, spec, options) => embedOnCanvas(el, spec, {...options, renderer: "svg"});</script>'
)


@pytest.fixture(scope="session")
def chromium_binary(unavailable) -> str:
    """Chromium's path; without it the test skips (CI=true: fails), before the tiny run is made for it."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        unavailable("Chromium is not installed (workflow/scripts/install_system_deps.sh test installs it)")
    return binary


def chromium(binary: str, page: Path, *options: str, profile: Path) -> str:
    """Headless Chromium's rendering of `page` once its scripts have run (10 s of virtual time): with
    `--dump-dom`, the page's DOM (stdout)."""
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=10000", *options, page.as_uri()]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


class RenderedPage(HTMLParser):
    """The text of a rendered page (no scripts or styles), and the text of the SVG labels inside the element
    with id `rulegraph`."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self, dom: str):
        super().__init__()
        self.text: list[str] = []
        self.labels: list[str] = []
        self.canvas = False
        self._open: list[str] = []  # the tags open around the current position
        self._graph_depth: int | None = None
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        self._open.append(tag)
        if dict(attrs).get("id") == "rulegraph":
            self._graph_depth = len(self._open)
        elif tag == "canvas" and self._graph_depth is not None:
            self.canvas = True

    def handle_endtag(self, tag):
        if tag in self.VOID or tag not in self._open:
            return
        while self._open.pop() != tag:
            pass
        if self._graph_depth is not None and len(self._open) < self._graph_depth:
            self._graph_depth = None

    def handle_data(self, data):
        if self._open and self._open[-1] in ("script", "style"):
            return
        if self._graph_depth is not None and self._open[-1] == "text":
            self.labels.append(data.strip())
        self.text.append(data)


@pytest.mark.slow
def test_the_report_draws_a_whole_generation_beside_the_summary_rules(chromium_binary, tiny_run, tmp_path):
    cfg, _, _, _ = tiny_run
    report = Path(layout.summary_path(cfg.root, layout.REPORT_FILE))

    def render(page: Path, *options: str) -> str:
        return chromium(chromium_binary, page, *options, profile=tmp_path / "profile")

    # the report as a person opens it: vega draws the graph (on a canvas) beside the text
    assert RenderedPage(render(report, "--dump-dom")).canvas, "no graph drawn in the report"
    shot = tmp_path / "report.png"  # not blank (docs/img/report.png is one)
    render(report, "--window-size=1100,700", f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000, shot
    # the same report with the graph drawn as SVG: its labels are the rules of a whole generation
    html = report.read_text()
    assert '<script id="workflow-desc">' in html, "the report's layout changed: see SVG_GRAPH"
    svg = tmp_path / "report-svg.html"
    svg.write_text(html.replace('<script id="workflow-desc">', SVG_GRAPH + '<script id="workflow-desc">', 1))
    page = RenderedPage(render(svg, "--dump-dom"))
    assert set(page.labels) == GENERATION_RULES | SUMMARY_RULES, page.labels
    # and the text beside it, in words: "1 data-parallel rank", "2 data-parallel ranks"
    text = " ".join("".join(page.text).split())
    assert "The graph shows the rules of generation 1, which stands for every generation" in text, text[:3000]
    assert "with 2 data-parallel ranks, and plays 4 self-play games in 2 jobs of up to 3 games" in text
