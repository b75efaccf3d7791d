"""The workflow with `--profile profiles/slurm` against a real two-node Slurm (slurm_cluster.py).

The cluster (the session fixture `cluster` of conftest.py) is started by the first Slurm test of a session
and stopped at its end, so no other test pays for Slurm's client commands probing a controller. The run:
the tiny config with one generation: bootstrap; 4 self-play games in 2 jobs of the rule `selfplay`, one
sbatch each (games_per_job 3; no job arrays); games-complete; window; 2-rank training started by
`srun -n 2 -N 2 --ntasks-per-node 1 -c 1 --kill-on-bad-exit=1` inside its job of 2 nodes
(`--set-resources train:nodes=2`), so one rank on each node; evaluation; summary. Skipped, with the
reason, where Slurm/munge are not installed or we are not root (CI=true fails instead).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import load_config
from minigo_core.data import layout, schedule
from minigo_core.pipeline import plan as planning

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slurm, pytest.mark.slow]


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("slurm")
    data = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    data.update(root=str(tmp_path / "run"), generations=1)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    cmd = [
        "timeout", "-k", "10", "900", sys.executable, "-m", "snakemake", "--profile", "profiles/slurm",
        "--configfile", str(config), "--printshellcmds", "--slurm-logdir", str(tmp_path / "slurm_logs"),
        # test-cluster settings: a fast first status check, a local disk, no resubmission of failures
        "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5", "--retries", "0",
        "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=1000", "runtime=30",
        # the ranks on 2 nodes; on the command line --set-resources replaces the profile's, so mpi is repeated
        "--set-resources", "train:mpi='srun'", "train:nodes=2",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=cluster.env)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-6000:] + "\n" + cluster.log_tail()
    return load_config(str(config)), text


def test_slurm_run_submits_every_job_to_slurm(slurm_run):
    cfg, text = slurm_run
    jobs = schedule.selfplay_job_count(cfg)
    assert jobs == 2  # 4 games in jobs of 3 (config/tiny.yaml)
    for rule in ("bootstrap", "selfplay", "games_complete", "window", "train", "evaluate"):
        assert f"rule_{rule}/" in text, f"rule {rule} was not submitted to Slurm"
    # the training ranks are the tasks of one srun step, one per node of the job's 2 nodes
    assert "srun -n 2 -N 2 --ntasks-per-node 1 -c 1 --kill-on-bad-exit=1 " in text


def test_slurm_run_artifacts_validate(slurm_run):
    from minigo_core.data import gamefile
    from minigo_core.data.matchfile import read_match
    from minigo_core.nn import model

    cfg, _ = slurm_run
    root = cfg.root
    for g in (0, 1):
        assert model.load_model(layout.model_path(root, g), backend="torch").cfg.board_size == cfg.board_size
    for i in range(cfg.selfplay.games):
        assert gamefile.read_game(layout.game_path(root, 0, i)).metadata["seed"]["game"] == i
    assert json.loads(Path(layout.complete_marker_path(root, 0)).read_text())["games"] == cfg.selfplay.games
    metrics = [json.loads(line) for line in Path(layout.train_metrics_path(root, 1)).read_text().splitlines()]
    assert metrics[0]["ranks"] == 2 and metrics[-1]["event"] == "end"
    assert sorted(metrics[0]["nodes"]) == ["node1", "node2"], metrics[0]  # the 2 ranks ran on 2 nodes
    for spec in schedule.evaluation_specs(cfg, 1):
        assert read_match(layout.eval_path(root, 1, spec.slug)).games == cfg.evaluate.games
    assert Path(layout.ratings_path(root)).exists()
    assert Path(layout.summary_path(root, layout.STATUS_FILE)).exists()
    assert planning.plan(cfg).finished
