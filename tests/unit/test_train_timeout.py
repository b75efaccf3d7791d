"""What a training rank says when a collective fails (a peer lost with its node, or silent past the process
group's timeout), and where the timeout comes from (`--timeout`, else $MINIGO_TRAIN_TIMEOUT_S, else 600 s).
The node loss itself, through Slurm: tests/cluster/test_slurm_node_loss.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from minigo_core.nn.train_job import (
    DEFAULT_TIMEOUT_S,
    TIMEOUT_ENV,
    TrainError,
    default_timeout,
    lost_peer_message,
)


def test_the_rank_that_notices_names_the_step_its_peer_and_node_and_the_timeout():
    job = SimpleNamespace(rank=0, timeout_s=45.0, work_dir="/r/train/gen0001")
    exc = RuntimeError("[gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:4242\nmore")
    text = lost_peer_message(job, 2, ["node1", "node2"], "the all-reduce of step 7", exc)
    assert text.startswith("rank 0 of 2 (node node1): the all-reduce of step 7 failed")
    assert "Connection closed by peer [127.0.0.1]:4242" in text and "more" not in text
    assert "(rank 1 on node node2)" in text and "node lost" in text
    assert "timeout of 45 s" in text and TIMEOUT_ENV in text
    assert "/r/train/gen0001/checkpoint.pt" in text


def test_a_rank_of_four_names_the_three_others():
    job = SimpleNamespace(rank=2, timeout_s=600.0, work_dir="w")
    text = lost_peer_message(job, 4, ["a", "a", "b", "b"], "x", TimeoutError("Timed out"))
    assert "rank 2 of 4 (node b)" in text
    assert "(rank 0 on node a, rank 1 on node a, rank 3 on node b)" in text


def test_the_timeout_comes_from_the_environment_else_the_default():
    assert default_timeout({}) == DEFAULT_TIMEOUT_S == 600
    assert default_timeout({TIMEOUT_ENV: "90"}) == 90.0
    for bad in ("soon", "0", "-5"):
        with pytest.raises(TrainError, match=f"{TIMEOUT_ENV}='{bad}' is not a positive number"):
            default_timeout({TIMEOUT_ENV: bad})
