"""The paper's board and net through `--profile profiles/slurm` on the real 2-node test cluster.

`config/paper.yaml` as it is (19x19, 6 blocks x 64 filters, `mlperf07` features, PUCT with 25% full searches,
the paper's learning-rate schedule, the dsp backend), scaled down only in what a CI machine cannot afford:
3 generations of 4 games in self-play jobs of 2, 8 readouts (4 on fast moves), a window of 1 generation,
2 training ranks of batch 32 (one on each node), evaluation against the previous model in 2 games. Every
artifact is checked: the models' shapes, every game file (19x19, its features, its record's digest), the
markers, the shards, the training metrics (2 ranks on node1 and node2), the match files, the ratings and the
summary; and the generations that left the window are packed (`storage.pack_old_generations`, on in the
paper config), their games, records and SGF export still readable by their old paths.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import load_config
from minigo_core.data import gamefile, layout, pack, schedule
from minigo_core.data.matchfile import read_match
from minigo_core.data.shards import read_shard_info

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slurm, pytest.mark.slow]
GENERATIONS = 3


def paper_config(tmp_path: Path) -> Path:
    data = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    data.update(root=str(tmp_path / "run"), generations=GENERATIONS)
    data["selfplay"].update(games=4, games_per_job=2, readouts=8, fast_readouts=4)
    data["window"].update(generations=1, read_threads=1)
    data["train"].update(ranks=2, batch_per_rank=32, threads_per_rank=1, checkpoint_every=1000)
    data["evaluate"].update(games=2, readouts=8, opponents=["previous"], target="previous", final_games=0)
    config = tmp_path / "paper19.yaml"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


@pytest.fixture(scope="module")
def paper_run(cluster, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("slurm19")
    config = paper_config(tmp_path)
    cmd = [
        "timeout", "-k", "10", "1200", sys.executable, "-m", "snakemake", "--profile", "profiles/slurm",
        "--configfile", str(config), "--printshellcmds", "--slurm-logdir", str(tmp_path / "slurm_logs"),
        "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5", "--retries", "0",
        "--default-resources", "slurm_partition=debug", "mem_mb_per_cpu=1000", "runtime=30",
        "--set-resources", "train:mpi='srun'", "train:nodes=2",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=cluster.env)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-6000:] + "\n" + cluster.log_tail()
    return load_config(str(config)), text


def test_paper_board_runs_every_rule_on_slurm(paper_run):
    cfg, text = paper_run
    assert (cfg.board_size, cfg.model.blocks, cfg.model.filters, cfg.features) == (19, 6, 64, "mlperf07")
    for rule in ("bootstrap", "selfplay", "games_complete", "window", "train", "evaluate"):
        assert f"rule_{rule}/" in text, f"rule {rule} was not submitted to Slurm"
    assert "srun -n 2 -N 2 --ntasks-per-node 1 -c 1 --kill-on-bad-exit=1 " in text


def test_paper_models_shards_and_training(paper_run):
    from minigo_core.nn import model

    cfg, _ = paper_run
    root = cfg.root
    for g in range(GENERATIONS + 1):
        net = model.load_model(layout.model_path(root, g), backend="torch")
        assert (net.cfg.board_size, net.cfg.blocks, net.cfg.filters) == (19, 6, 64)
    for g in range(1, GENERATIONS + 1):
        infos = [read_shard_info(layout.shard_path(root, g, r)) for r in range(2)]
        assert all(i.board_size == 19 and i.rows > 0 for i in infos)
        metrics = [json.loads(x) for x in Path(layout.train_metrics_path(root, g)).read_text().splitlines()]
        assert metrics[0]["ranks"] == 2 and metrics[-1]["event"] == "end"
        assert sorted(metrics[0]["nodes"]) == ["node1", "node2"], metrics[0]


def test_paper_games_packed_readable_and_matched(paper_run):
    cfg, _ = paper_run
    root, w = cfg.root, cfg.window.generations
    assert cfg.storage.pack_old_generations  # config/paper.yaml packs
    for g in schedule.selfplay_generations(cfg):
        # generation g is packed once the last window reading it, g + W's, is built
        assert pack.is_packed(root, g) == (g + w <= GENERATIONS), g
        if pack.is_packed(root, g):
            assert not Path(layout.games_dir(root, g)).exists()  # its loose files are gone
            assert json.loads(Path(layout.packed_marker_path(root, g)).read_text())["games"] == 4
        for job in range(schedule.selfplay_job_count(cfg)):
            record = json.loads(pack.read_member(layout.selfplay_job_path(root, g, job)))
            for entry in record["files"]:
                url = layout.game_path(root, g, entry["game"])
                data = pack.read_member(url)
                assert hashlib.sha256(data).hexdigest() == entry["sha256"]
                game = gamefile.game_from_bytes(data, url)
                assert game.board_size == 19 and game.metadata["features"] == "mlperf07"
                assert game.num_positions > 0
        marker = json.loads(Path(layout.complete_marker_path(root, g)).read_text())
        assert marker["games"] == cfg.selfplay.games
    # a packed game reads by its old path in `minigo inspect`, and exports SGF
    packed = layout.game_path(root, 0, 0)
    out = subprocess.run([sys.executable, "-m", "minigo_core.cli", "inspect", packed, "--sgf", "-"],
                         capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert out.returncode == 0 and "SZ[19]" in out.stdout, out.stderr
    for g in range(1, GENERATIONS + 1):
        for spec in schedule.evaluation_specs(cfg, g):
            assert read_match(layout.eval_path(root, g, spec.slug)).games >= 1
    assert Path(layout.ratings_path(root)).exists()
    assert Path(layout.summary_path(root, layout.STATUS_FILE)).exists()
