"""Data-parallel training (issue 5): 2 ranks == 1 rank, resume == uninterrupted, rendezvous, dead ranks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from minigo_core.base import config
from minigo_core.cluster.slurm import free_port, node_name
from minigo_core.data import layout, storage, window
from minigo_core.game import features
from minigo_core.jobs import train as train_cmd
from minigo_core.nn import model, train_job

BOARD = 9
PER_RANK = 8


def _run(batch_per_rank: int) -> dict:
    return {
        "board_size": BOARD,
        "seed": 11,
        "model": {"blocks": 1, "filters": 8, "fc_width": 16, "backend": "torch"},
        "window": {"generations": 3},
        "train": {
            "ranks": 2,
            "batch_per_rank": batch_per_rank,
            "checkpoint_every": 3,
            "backend": "torch",
            "learning_rate": [[0, 0.05], [6, 0.01]],
            "threads_per_rank": 1,
            "prefetch_batches": 3,
            "replay_ratio": None,  # one pass over the window (the replay-ratio test below sets one)
        },
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory, training_inputs) -> dict:
    """Generation 3's window (5 games of each generation before it) and parent; two configs of one run:
    "two" (2 ranks x PER_RANK) and "one" (the same global batch on one rank)."""
    parent = {"generation": 2, "global_step": 4}
    made = training_inputs(tmp_path_factory.mktemp("train"), _run(PER_RANK), generation=3, games=5,
                           max_moves=50, recorded_fraction=0.9, provenance=parent)  # fmt: skip
    one = made["base"] / "one.json"
    one.write_text(json.dumps({"root": made["root"], **_run(2 * PER_RANK)}))
    return {**made, "cfg": {"two": made["config"], "one": str(one)}}


def _job(setup: dict, name: str, out: str, work: str, **kw) -> train_job.TrainJob:
    return train_job.TrainJob(
        cfg=config.load_config(setup["cfg"][name]),
        generation=3,
        window_dir=setup["window"],
        parent=setup["parent"],
        out=out,
        work_dir=work,
        quiet=True,
        log_every=1,
        **kw,
    )


def _weights(url: str) -> dict:
    return model.load_model(url, backend="torch").state_dict()


def _assert_same_weights(a: str, b: str, atol: float = 1e-6) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=0, atol=atol, msg=f"{k} differs")


@pytest.fixture(scope="module")
def one_rank(setup) -> str:
    """The reference: one rank over both shards with twice the per-rank batch (same global batch)."""
    out = str(setup["base"] / "one.safetensors")
    prov = train_job.train(_job(setup, "one", out, str(setup["base"] / "work-one"), record_wall_time=False))
    assert prov is not None and prov["steps"] >= 5
    return out


def test_one_rank_model_and_provenance(setup, one_rank):
    manifest = setup["manifest"]
    net = model.load_model(one_rank, backend="torch")
    prov = net.provenance
    steps = min(s["rows"] for s in manifest["shards"]) // PER_RANK
    assert prov["steps"] == steps and prov["examples"] == steps * 2 * PER_RANK
    assert prov["global_step"] == 4 + steps  # carried on from the parent's global step
    assert prov["parent"] == setup["parent"] and prov["parent_sha256"] == model.model_digest(setup["parent"])
    manifest = json.loads(storage.read_bytes(storage.join(setup["window"], "manifest.json")))
    assert prov["window_manifest_sha256"] == window.manifest_digest(manifest)  # wall-clock fields left out
    assert np.isfinite(prov["final_losses"]["policy"]) and "wall_time_s" not in prov
    planes = features.num_planes(config.load_config(setup["cfg"]["one"]).features)
    probs, values = net.predict(np.zeros((2, planes, BOARD, BOARD), dtype=np.uint8))
    assert probs.shape == (2, BOARD * BOARD + 1) and values.shape == (2,)
    assert any(
        (a != b).any()
        for a, b in zip(_weights(one_rank).values(), _weights(setup["parent"]).values(), strict=True)
    )
    lines = [json.loads(x) for x in open(setup["base"] / "work-one" / "metrics.jsonl")]
    steps_logged = [x for x in lines if x["event"] == "step"]
    assert [x["global_step"] for x in steps_logged] == list(range(5, 5 + steps))
    # The schedule is indexed by the global step: lr 0.05 before global step 6, 0.01 from it.
    assert [x["lr"] for x in steps_logged][:3] == [0.05, 0.05, 0.01]
    assert lines[-1]["event"] == "end" and "data_wait_fraction" in lines[-1]
    assert not os.path.exists(setup["base"] / "work-one" / layout.CHECKPOINT)


def test_two_ranks_match_one_rank(setup, one_rank, capfd):
    out = str(setup["base"] / "two.safetensors")
    work = setup["base"] / "work-two"
    argv = [
        "--config",
        setup["cfg"]["two"],
        "--generation",
        "3",
        "--window-dir",
        setup["window"],
        "--parent",
        setup["parent"],
        "--out",
        out,
        "--ranks",
        "2",
        "--work-dir",
        str(work),
    ]
    assert train_cmd.cli_main(argv) == 0, capfd.readouterr().err
    _assert_same_weights(out, one_rank)
    prov = model.load_model(out, backend="torch").provenance
    assert prov["ranks"] == 2 and prov["wall_time_s"] > 0
    assert _last(str(work), "start")["nodes"] == [node_name()] * 2  # each rank's node, in rank order


def _last(work: str, event: str) -> dict:
    with open(os.path.join(work, layout.METRICS)) as fh:
        return [r for r in map(json.loads, fh) if r["event"] == event][-1]


def test_resume_matches_uninterrupted(setup, one_rank):
    out = str(setup["base"] / "resumed.safetensors")
    work = str(setup["base"] / "work-resume")
    assert train_job.train(_job(setup, "one", out, work, stop_after=4, record_wall_time=False)) is None
    assert not os.path.exists(out)
    ckpt = torch.load(os.path.join(work, layout.CHECKPOINT), weights_only=True)
    assert ckpt["step"] == 4
    train_job.train(_job(setup, "one", out, work, record_wall_time=False))
    assert _last(work, "end")["resumed_from_step"] == 4
    _assert_same_weights(out, one_rank)
    # Same inputs, same file: weights, optimiser path and provenance (final losses included) are identical.
    assert open(out, "rb").read() == open(one_rank, "rb").read()


def test_checkpoint_of_other_inputs_is_ignored(setup, one_rank, tmp_path):
    work = str(tmp_path / "work")
    train_job.train(_job(setup, "one", str(tmp_path / "a.safetensors"), work, stop_after=2))
    other = tmp_path / "other-parent.safetensors"
    net = model.random_model(model.ModelConfig.from_run(config.load_config(setup["cfg"]["one"])), seed=6)
    model.save_model(str(other), net, {"generation": 2, "global_step": 4})
    job = _job(setup, "one", str(tmp_path / "b.safetensors"), work)
    job.parent = str(other)
    train_job.train(job)
    assert _last(work, "end")["resumed_from_step"] == 0


def test_srun_tasks_find_each_other_without_talking(setup, one_rank, tmp_path):
    """Two processes with the environment srun gives its tasks (and no --ranks) train together as 2 ranks."""
    work, out = tmp_path / "work", str(tmp_path / "m.safetensors")
    argv = [sys.executable, "-m", "minigo_core.jobs.train", "--config", setup["cfg"]["two"],
            "--generation", "3", "--window-dir", setup["window"], "--parent", setup["parent"], "--out", out,
            "--work-dir", str(work), "--no-wall-time", "--timeout", "60"]  # fmt: skip
    procs = []
    for rank in range(2):
        env = {**os.environ, "SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": str(rank),
               "SLURM_NTASKS": "2", "SLURM_LOCALID": str(rank),
               "SLURM_STEP_NODELIST": "localhost"}  # fmt: skip
        for key in ("MASTER_ADDR", "MASTER_PORT"):
            env.pop(key, None)
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outputs = [p.communicate(timeout=120)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert "2 ranks x 8" in outputs[0]
    _assert_same_weights(out, one_rank)


def test_dead_rank_fails_the_job_naming_it(setup, tmp_path, capfd):
    broken = str(tmp_path / "window")
    shutil.copytree(setup["window"], broken)
    with open(os.path.join(broken, "shard001.arrow"), "r+b") as fh:
        fh.seek(200)
        fh.write(b"\x00" * 64)
    work = tmp_path / "work"
    argv = [
        "--config",
        setup["cfg"]["two"],
        "--generation",
        "3",
        "--window-dir",
        broken,
        "--parent",
        setup["parent"],
        "--out",
        str(tmp_path / "m.safetensors"),
        "--ranks",
        "2",
        "--work-dir",
        str(work),
        "--timeout",
        "60",
    ]
    t0 = time.monotonic()
    assert train_cmd.cli_main(argv) == 1
    assert time.monotonic() - t0 < 120
    err = capfd.readouterr().err
    assert "rank 1 of 2 exited with code 1" in err
    assert "shard001.arrow does not match the checksum" in err
    assert not os.path.exists(tmp_path / "m.safetensors")


def test_bad_inputs_say_what_to_do(setup, tmp_path):
    job = _job(setup, "two", str(tmp_path / "m.safetensors"), str(tmp_path / "w"))
    job.world_size = 3
    with pytest.raises(train_job.TrainError, match="cannot be split over 3 ranks"):
        train_job.train(job)
    job = _job(setup, "one", str(tmp_path / "m.safetensors"), str(tmp_path / "w"))
    job.window_dir = str(tmp_path / "nowhere")
    with pytest.raises(window.WindowError, match="run `minigo window`"):
        train_job.train(job)


def test_dsp_backend_resume_is_bit_exact(setup, one_rank, tmp_path):
    """The default backend (compiled DSP-emulation kernels): a resumed run ends with the same file."""
    pytest.importorskip("minigo_core.nn.dsp.ops", reason="the DSP-emulation extension is not built")
    cfg = config.load_config(setup["cfg"]["one"])
    cfg = config.from_dict({**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "backend": "dsp"}})

    def job(out: str, work: str, **kw) -> train_job.TrainJob:
        return train_job.TrainJob(cfg=cfg, generation=3, window_dir=setup["window"], parent=setup["parent"],
                              out=out, work_dir=work, quiet=True, record_wall_time=False, **kw)  # fmt: skip

    whole, resumed = str(tmp_path / "whole.safetensors"), str(tmp_path / "resumed.safetensors")
    train_job.train(job(whole, str(tmp_path / "w1")))
    assert train_job.train(job(resumed, str(tmp_path / "w2"), stop_after=3)) is None
    train_job.train(job(resumed, str(tmp_path / "w2")))
    assert open(whole, "rb").read() == open(resumed, "rb").read()
    # The torch backend's result, to float rounding (the kernels sum in another order).
    _assert_same_weights(whole, one_rank, atol=1e-4)


def test_rank_that_never_arrives_fails_in_bounded_time(setup, tmp_path, capfd):
    """Rank 0 alone (rank 1 of 2 never starts): the store times out after --timeout and the job fails."""
    port = free_port()
    argv = ["--config", setup["cfg"]["two"], "--generation", "3", "--window-dir", setup["window"],
            "--parent", setup["parent"], "--out", str(tmp_path / "m.safetensors"), "--work-dir",
            str(tmp_path / "work"), "--rank", "0", "--world-size", "2", "--master-addr", "127.0.0.1",
            "--master-port", str(port), "--timeout", "3"]  # fmt: skip
    t0 = time.monotonic()
    assert train_cmd.cli_main(argv) != 0
    assert time.monotonic() - t0 < 60
    err = capfd.readouterr().err
    assert f"rank 0 of 2 (node {node_name()}) could not meet the other ranks" in err, err[-2000:]
    assert f"127.0.0.1:{port} within --timeout 3 s" in err
    assert not os.path.exists(tmp_path / "m.safetensors")


@pytest.mark.parametrize("ratio", [0.5, 3.0])
def test_replay_ratio_is_what_training_does(setup, tmp_path, ratio):
    """`train.replay_ratio` R: R training examples per recorded position of the window's newest generation
    (more than one pass over the window when needed: the shards are read again from the start)."""
    with open(setup["cfg"]["one"]) as fh:
        data = json.load(fh)
    data["train"]["replay_ratio"] = ratio
    path = tmp_path / "replay.yaml"
    path.write_text(json.dumps(data))
    manifest = setup["manifest"]
    newest = max(manifest["window_generations"])
    new = sum(g["positions"] for g in manifest["games"] if g["generation"] == newest)
    assert new > 0 and window.new_positions(manifest) == new
    job = train_job.TrainJob(
        cfg=config.load_config(str(path)), generation=3, window_dir=setup["window"], parent=setup["parent"],
        out=str(tmp_path / "m.safetensors"), work_dir=str(tmp_path / "work"), quiet=True, log_every=1,
        record_wall_time=False,
    )  # fmt: skip
    plan = train_job.make_plan(job)
    batch = 2 * PER_RANK
    assert plan.steps == max(1, round(ratio * new / batch))
    per_pass = min(s["rows"] for s in manifest["shards"]) // PER_RANK  # one rank reads both shards
    assert plan.steps_per_pass == per_pass and (plan.steps > per_pass) == (ratio == 3.0)
    prov = train_job.train(job)
    assert prov is not None and prov["steps"] == plan.steps and prov["examples"] == plan.steps * batch
    assert prov["new_positions"] == new
    assert prov["replay_ratio"] == pytest.approx(plan.steps * batch / new, abs=1e-4)
    assert abs(prov["replay_ratio"] - ratio) <= batch / new / 2 + 1e-9  # the config's, up to one batch
    start = _last(str(tmp_path / "work"), "start")
    assert start["replay_ratio"] == prov["replay_ratio"] and start["steps"] == plan.steps
    # past one pass the steps read the shards again: every step trained on a full batch
    assert np.isfinite(prov["final_losses"]["policy"])
    assert start["window_passes"] == pytest.approx(plan.steps / per_pass, abs=1e-4)
