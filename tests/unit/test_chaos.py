"""The chaos driver's planning, without a run (`tools.chaos`): which kinds of process a config starts, the
kill plan a seed draws over them, and how a process or a dry run is classified. The run itself (kill
anything, rerun, same result) is tests/e2e/test_chaos_run.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

from minigo_core.pipeline import workflow
from tools.chaos.__main__ import parse_args as args_of
from tools.chaos.disk import SmallDisk
from tools.chaos.kills import (
    Chaos,
    kill_plan,
    kinds_of_dry_run,
    pack_stage,
    plannable_kinds,
    soak_kinds,
    soak_plan,
)
from tools.chaos.processes import KINDS, SIGTERM_KINDS, classify, strikes, target
from tools.chaos.runs import TRAIN_NODES, Runner, config_data

REPO = Path(__file__).resolve().parents[2]
KILLS, SEED = 3, 83  # plans selfplay (a job of 3 games), snakemake, train-rank (as test_chaos_run.py)
REDUCED = ["generations=1", "selfplay.games=4", "evaluate.opponents=[gen0]"]


def tiny(overrides=()):
    return workflow.run_config(config_data(REPO / "config" / "tiny.yaml", list(overrides)))


def test_the_plan_of_the_whole_tiny_config_spreads_8_kills_over_most_kinds():
    kinds = plannable_kinds(tiny())
    assert "selfplay" in kinds and "selfplay-single" not in kinds  # 4 games in jobs of 3: one job of K = 3
    plan = kill_plan(kinds, 8, np.random.default_rng(23))
    assert len(plan) == 8 and len(set(plan)) >= 5, plan
    # in the order the pipeline starts them (Snakemake anywhere)
    jobs = [k for k in plan if k != "snakemake"]
    assert jobs == sorted(jobs, key=KINDS.index)
    slurm = plannable_kinds(tiny(), slurm=True)
    assert "train-rank-node2" in slurm and "node-loss" in slurm and "node-loss" not in kinds
    assert target("node-loss") == "train-rank-node2" and target("selfplay") == "selfplay"
    assert plannable_kinds(tiny(["train.ranks=1"]), slurm=True).count("node-loss") == 0
    assert kill_plan(["node-loss", "bootstrap", "train"], 3, np.random.default_rng(0)) == [
        "bootstrap",
        "train",
        "node-loss",
    ]  # a node loss in the pipeline's order: after the training it strikes at has started
    reduced = kill_plan(plannable_kinds(tiny(REDUCED)), KILLS, np.random.default_rng(SEED))
    assert len(set(reduced)) == KILLS and "selfplay" in reduced, reduced


def test_a_run_that_packs_plans_pack_kills_at_three_stages(tmp_path):
    packing = ["storage.pack_old_generations=true", "window.generations=1"]
    kinds = plannable_kinds(tiny(packing))
    assert "pack" in kinds and "pack" not in plannable_kinds(tiny())
    assert kinds.index("pack") < kinds.index("evaluate")
    cli = [sys.executable, "-m", "minigo_core.cli", "pack", "--config", "run/config.yaml"]
    argv = [*cli, "--generation", "0000", "--out", "run/games/gen0000.packed.json"]
    assert classify(argv) == "pack"
    games = tmp_path / "run" / "games"
    games.mkdir(parents=True)
    writing, _ = pack_stage(argv, tmp_path, 1)
    packed, _ = pack_stage(argv, tmp_path, 2)
    assert not writing() and not packed()
    (games / ".tmp-gen0000.pack.arrow.123.abcdef01").write_bytes(b"")
    assert writing() and not packed()
    (games / "gen0000.pack.arrow").write_bytes(b"")
    assert packed()


def test_kinds_of_processes_and_of_a_dry_run():
    selfplay = [sys.executable, "-m", "minigo_core.cli", "selfplay", "--game", "0", "--count", "3"]
    assert classify(selfplay) == "selfplay"
    assert classify(selfplay[:-1] + ["1"]) == "selfplay-single"
    assert classify(["srun", "-n", "2", sys.executable, "-m", "minigo_core.cli", "train"]) == "train"
    assert classify([sys.executable, "-m", "minigo_core.jobs.train", "--rank", "1"]) == "train-rank"
    assert classify([sys.executable, "/x/snakemake", "--mode", "subprocess"]) == "snakemake-job"
    assert classify(["bash", "-c", "minigo_core.cli"]) is None
    dry_run = "rule selfplay:\n    wildcards: generation=0001, job=00001\nlocalrule ratings:\n    jobid: 3\n"
    kinds, planned = kinds_of_dry_run(dry_run, [3, 1])
    assert kinds == {"selfplay-single", "ratings", "snakemake"} and planned == "selfplay x1, ratings x1"
    assert kinds_of_dry_run("Nothing to be done (all requested files are present).", [3, 1]) == (
        set(),
        "nothing",
    )


def test_sigterm_and_disk_full_kinds_strike_at_their_process_and_only_when_asked(tmp_path):
    """selfplay-term and train-term send SIGTERM to a multi-game self-play job and to the training launcher;
    disk-full fills run B's disk while a self-play job runs. They are planned only through --kinds (a drawn
    plan, and so every seed's plan, stays as it was), and a dry run that plans their target keeps them."""
    new = ("selfplay-term", "train-term", "disk-full")
    assert [target(k) for k in new] == ["selfplay", "train", "selfplay"]
    assert SIGTERM_KINDS == ("selfplay-term", "train-term")
    for slurm in (False, True):
        assert not set(new) & set(plannable_kinds(tiny(), slurm=slurm))
    assert args_of(["--workdir", str(tmp_path), "--kinds", ",".join(new)]).kills == 3
    dry_run = "rule selfplay:\n    wildcards: generation=0001, job=00000\nrule train:\n    jobid: 4\n"
    kinds, _ = kinds_of_dry_run(dry_run, [3, 1])
    assert {target(k) for k in new} <= kinds


def test_the_disk_of_a_disk_full_fills_and_frees(tmp_path, unavailable):
    disk = SmallDisk(tmp_path / "run", 1)
    try:
        disk.mount()
    except RuntimeError as exc:
        unavailable(str(exc))
    try:
        (disk.root / "games").mkdir()
        assert 1_000_000 < disk.fill() <= 1 << 20
        with pytest.raises(OSError, match="No space left"):
            (disk.root / "games" / "game00000.arrow").write_bytes(b"x" * 5000)
        assert disk.free() and not disk.free()
        (disk.root / "games" / "game00000.arrow").write_bytes(b"x" * 5000)
    finally:
        disk.unmount()
    assert sorted(p.name for p in (tmp_path / "run").rglob("*")) == ["game00000.arrow", "games"]


def test_a_soak_spreads_every_kind_it_can_meet_over_the_default_run():
    default = workflow.run_config(config_data(REPO / "config.yaml", ["generations=12"]))
    kinds = soak_kinds(default)
    every = ["bootstrap", "selfplay", "selfplay-term", "train", "train-term", "window", "evaluate", "ladder"]
    every += ["games_complete", "disk-full", "ratings", "plots", "snakemake"]
    assert set(every) <= set(kinds), kinds  # (the default config trains in one rank)
    assert "disk-full" not in soak_kinds(default, disk=False)
    assert "ladder" not in soak_kinds(
        workflow.run_config(config_data(REPO / "config.yaml", ["evaluate.ladder=false"]))
    )
    plan = soak_plan(kinds, 20, np.random.default_rng(5))
    assert len(plan) == 20 and set(plan) == set(kinds)  # every kind at least once
    n = len(kinds)
    assert plan[0] == "bootstrap" and plan[n - 2 : n] == ["ratings", "plots"] and set(plan[:n]) == set(kinds)
    assert "snakemake" not in plan[n:] and "bootstrap" not in plan[n:]  # the repeats
    assert plan == soak_plan(kinds, 20, np.random.default_rng(5))  # seeded
    with pytest.raises(ValueError, match="needs --kills >= "):
        soak_plan(kinds, len(kinds) - 1, np.random.default_rng(5))
    chaos = Chaos(
        Path("w"), Runner(Path("c.yaml")), plan, np.random.default_rng(1), lambda kind: 1.0, 9, [1], n
    )
    assert chaos.due() == chaos.kills[:n]  # each kind once before any repeat
    chaos.gap_s, chaos.last_fault = 60.0, time.monotonic()
    assert chaos.due() == chaos.kills[n - 2 : n]  # within a minute of the last fault: the summary's only
    chaos.last_fault -= 61.0
    assert chaos.due() == chaos.kills[:n]
    for kill in chaos.kills[: n - 2]:
        kill.status = "killed"
    assert chaos.due() == chaos.kills[n - 2 :]  # only the summary's jobs left of the first round: repeats too
    dry_run = "rule ladder_first_rating:\n    jobid: 3\nrule ladder_rating:\n    jobid: 4\n"
    assert kinds_of_dry_run(dry_run, [1])[0] == {"ladder", "snakemake"}
    ladder = [
        sys.executable,
        "-m",
        "minigo_core.cli",
        "ladder",
        "rate",
        "--out",
        "run/eval/gen0006/ladder.json",
    ]
    assert classify(ladder) == "ladder"
    args = args_of(["--workdir", "w", "--soak"])
    assert args.config.endswith("config.yaml") and "tiny" not in args.config and args.kills is None
    with pytest.raises(SystemExit):
        args_of(["--workdir", "w", "--soak", "--kinds", "train"])


def test_a_node_loss_can_strike_at_a_selfplay_job_on_the_second_node():
    # only through --kinds or a soak (a drawn plan stays the same for a seed), and only at a job on node2
    assert "node-loss-selfplay" not in plannable_kinds(tiny(), slurm=True)
    assert "node-loss-selfplay" not in soak_kinds(tiny(), slurm=True)  # it puts the training on one node
    assert strikes("node-loss-selfplay", "selfplay", {"SLURMD_NODENAME": "node2"})
    assert not strikes("node-loss-selfplay", "selfplay", {"SLURMD_NODENAME": "node1"})
    assert not strikes("node-loss-selfplay", "selfplay", None) and not strikes(
        "node-loss-selfplay", "train", None
    )
    assert strikes("selfplay", "selfplay", None) and strikes("node-loss", "train-rank-node2", None)
    assert args_of(["--workdir", "w", "--profile", "slurm", "--kinds", "node-loss-selfplay"]).kills == 1
    with pytest.raises(SystemExit):
        args_of(["--workdir", "w", "--profile", "slurm", "--kinds", "node-loss-selfplay,node-loss"])
    runner = Runner(Path("c.yaml"), profile="slurm", selfplay_on_second_node=True)
    argv = runner.argv(Path("w"))
    assert "train:nodes=1" in argv and TRAIN_NODES not in argv
    assert "selfplay:slurm_extra='--nodelist=node2' if attempt == 1 else ''" in argv
    assert TRAIN_NODES in Runner(Path("c.yaml"), profile="slurm").argv(Path("w"))
