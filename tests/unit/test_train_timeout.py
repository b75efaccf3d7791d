"""What a training rank says when a collective fails (a peer lost with its node, or silent past the process
group's timeout), and where the timeout comes from (`--timeout`, else $MINIGO_TRAIN_TIMEOUT_S, else the config
key `train.timeout_s`, 600 s by default). The node loss itself, through Slurm:
tests/cluster/test_slurm_node_loss.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from minigo_core.base.config import ConfigError, RunConfig, TrainSettings, from_dict
from minigo_core.base.runtime import (
    DEFAULT_TRAIN_TIMEOUT_S,
    TRAIN_TIMEOUT_ENV,
    Runtime,
    RuntimeSettingError,
)
from minigo_core.nn.peers import lost_peer_message
from minigo_core.nn.train_job import TrainJob


def test_the_rank_that_notices_names_the_step_its_peer_and_node_and_the_timeout():
    job = SimpleNamespace(rank=0, timeout_s=45.0, work_dir="/r/train/gen0001")
    exc = RuntimeError("[gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:4242\nmore")
    text = lost_peer_message(job, 2, ["node1", "node2"], "the all-reduce of step 7", exc)
    assert text.startswith("rank 0 of 2 (node node1): the all-reduce of step 7 failed")
    assert "Connection closed by peer [127.0.0.1]:4242" in text and "more" not in text
    assert "(rank 1 on node node2)" in text and "node lost" in text
    assert "timeout of 45 s" in text and TRAIN_TIMEOUT_ENV in text and "train.timeout_s" in text
    assert "/r/train/gen0001/checkpoint.pt" in text


def test_a_rank_of_four_names_the_three_others():
    job = SimpleNamespace(rank=2, timeout_s=600.0, work_dir="w")
    text = lost_peer_message(job, 4, ["a", "a", "b", "b"], "x", TimeoutError("Timed out"))
    assert "rank 2 of 4 (node b)" in text
    assert "(rank 0 on node a, rank 1 on node a, rank 3 on node b)" in text


def test_the_timeout_comes_from_the_command_line_else_the_environment_else_the_config():
    cfg = RunConfig(train=TrainSettings(timeout_s=120.0))
    assert DEFAULT_TRAIN_TIMEOUT_S == TrainSettings().timeout_s == 600
    assert Runtime.from_environ({}).train_timeout_s == 600.0
    assert Runtime.from_environ({}, cfg=cfg).train_timeout_s == 120.0
    assert Runtime.from_environ({TRAIN_TIMEOUT_ENV: "90"}, cfg=cfg).train_timeout_s == 90.0
    assert Runtime.from_environ({TRAIN_TIMEOUT_ENV: "90"}, cfg=cfg, train_timeout_s=7).train_timeout_s == 7.0
    assert Runtime.from_environ({TRAIN_TIMEOUT_ENV: " "}, cfg=cfg).train_timeout_s == 120.0  # unset
    for bad in ("soon", "0", "-5", "nan"):
        with pytest.raises(RuntimeSettingError, match=f"{TRAIN_TIMEOUT_ENV}='{bad}' is not a positive"):
            Runtime.from_environ({TRAIN_TIMEOUT_ENV: bad})
    with pytest.raises(RuntimeSettingError, match="timeout must be > 0 s"):
        Runtime(train_timeout_s=0)


def test_the_timeout_is_a_config_key_recorded_with_the_run():
    assert from_dict({"train": {"timeout_s": 30}}).train.timeout_s == 30.0
    assert RunConfig().to_dict()["train"]["timeout_s"] == 600.0  # in the run's effective config.yaml
    for bad in (0, -1, 86401):
        with pytest.raises(ConfigError, match="train.timeout_s"):
            from_dict({"train": {"timeout_s": bad}})


def test_a_job_without_a_runtime_runs_as_its_config_says():
    cfg = RunConfig(train=TrainSettings(timeout_s=45.0, threads_per_rank=3))
    job = TrainJob(cfg=cfg, generation=1, window_dir="w", parent="p", out="o", work_dir="d")
    assert (job.timeout_s, job.rank_runtime.threads) == (45.0, 3)
    job.runtime = Runtime(threads=2, train_timeout_s=9.0)
    assert (job.timeout_s, job.rank_runtime.threads) == (9.0, 2)


def test_a_longer_timeout_still_resumes_the_checkpoint():
    """The checkpoint's identity holds the training settings but not the timeout: the retry of an attempt
    that timed out may wait longer and still goes on from the steps already done."""
    from minigo_core.nn.train_job import _checkpoint_identity

    plan = SimpleNamespace(window=SimpleNamespace(manifest_sha256="m", shard_urls=["a", "b"]),
                           parent_sha256="p", chunk=0)  # fmt: skip

    def identity(timeout_s: float, lr: float = 0.01) -> dict:  # lr: a constant learning rate
        cfg = from_dict({"train": {"timeout_s": timeout_s, "learning_rate": [[0, lr]]}})
        return _checkpoint_identity(SimpleNamespace(generation=1, cfg=cfg), plan)

    assert identity(600.0) == identity(3600.0)
    assert identity(600.0) != identity(600.0, lr=0.02)
