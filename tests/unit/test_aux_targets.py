"""The auxiliary targets (KataGo's ownership and score): derived from the moves, stored in shards, learned by
both backends' heads, skipped by the fused network."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pyarrow.ipc as ipc
import pytest
import torch

from minigo_core.data import shards
from minigo_core.game import go
from minigo_core.nn import model, training
from minigo_core.nn.modelfile import ModelConfig
from minigo_core.nn.train_job import augment


def test_ownership_is_what_the_score_counts(make_record):
    for seed in range(5):
        record = make_record(7, num_moves=60, seed=seed)
        final = record.positions()[-1]
        own = final.ownership()
        assert own.shape == (49,) and set(np.unique(own)) <= {-1, 0, 1}
        assert own.sum() - final.komi == pytest.approx(final.score())
        stones = final.board.reshape(-1)
        assert np.all(own[stones != 0] == stones[stones != 0])  # a stone is its colour's point
    # one black stone on an empty board owns everything; a point between both colours is nobody's
    p = go.Position(5, 0.5).play_move((2, 2))
    assert np.all(p.ownership() == 1)
    p = p.play_move((2, 4))
    assert p.ownership()[2 * 5 + 3] == 0


def test_aux_targets_are_from_the_mover_view_and_absent_for_resignations(make_record):
    record = make_record(9, num_moves=50, seed=1)
    rows = np.arange(record.num_positions)
    positions = record.positions()
    own, score = record.aux_targets(rows, positions)
    final = positions[-1]
    for k, i in enumerate(record.move_index):
        mover = positions[int(i)].to_play
        assert np.array_equal(own[k], final.ownership() * mover)
        assert score[k] == pytest.approx(final.score() * mover)
    # the value target's sign agrees with the score's (the winner is who the score says)
    assert np.all(np.sign(score) == np.sign(record.value_target))
    resigned = dataclasses.replace(
        record, metadata={**record.metadata, "result": {**record.metadata["result"], "resigned": True}}
    )
    own_r, score_r = resigned.aux_targets(rows)
    assert not own_r.any() and np.isnan(score_r).all()


def _examples(n: int = 6, size: int = 5, planes: int = 17, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, planes, size, size), dtype=np.uint8)
    pi = rng.random((n, size * size + 1)).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 1.0], size=n).astype(np.float32)
    own = rng.integers(-1, 2, size=(n, size * size)).astype(np.int8)
    score = rng.normal(0, 10, size=n).astype(np.float32)
    score[0] = np.nan
    return x, pi, z, own, score


def test_shards_round_trip_aux_targets_and_refuse_version_1(tmp_path):
    x, pi, z, own, score = _examples()
    url = str(tmp_path / "s.arrow")
    w = shards.ShardWriter(url, len(z), 17, 5, "agz")
    w.write(shards.encode(x, pi, z, 0, np.arange(len(z)), own, score))
    w.close()
    ex = shards.load_shard(url).rows(0, len(z))
    assert np.array_equal(ex.own, own)
    np.testing.assert_allclose(ex.score, score.astype(np.float16).astype(np.float32))
    assert np.isnan(ex.score[0])
    # a version-1 shard (no own/score columns, from before the first release) is refused naming the file
    batch = shards.encode(x, pi, z, 0, np.arange(len(z)))
    old = batch.drop_columns(["own", "score"])
    meta = {**{k.decode(): v.decode() for k, v in w._schema.metadata.items()}, "version": "1"}
    sink = io.BytesIO()
    with ipc.new_file(sink, old.schema.with_metadata(meta)) as writer:
        writer.write_batch(old)
    url1 = str(tmp_path / "v1.arrow")
    with open(url1, "wb") as f:
        f.write(sink.getvalue())
    with pytest.raises(shards.ShardError, match="v1.arrow has shard format version 1, this code reads 2"):
        shards.load_shard(url1)


def test_augment_moves_ownership_with_the_planes():
    x, pi, z, own, _ = _examples(n=32)
    planes = np.zeros_like(x)
    planes[:, 0] = own.reshape(-1, 5, 5) == 1  # plane 0 marks the owned points
    out_planes, _, out_own = augment(planes, pi, np.random.default_rng(4), own)
    assert np.array_equal(out_planes[:, 0], (out_own.reshape(-1, 5, 5) == 1).astype(np.uint8))


@pytest.mark.parametrize("backend", ["torch", "dsp"])
def test_aux_heads_train_on_both_backends_and_agree(backend):
    cfg = ModelConfig(5, 1, 8, 16, "agz", aux_heads=True)
    ref = model.random_model(cfg, seed=2, backend="torch")
    net = model.random_model(cfg, seed=2, backend=backend)
    x, pi, z, own, score = _examples(n=8)
    mb = training.MicroBatch.from_arrays(x, pi, z, own, score)
    ref.train()
    net.train()
    a, b = ref.forward_all(mb.x), net.forward_all(mb.x)
    for u, v in zip(a, b, strict=True):
        torch.testing.assert_close(u, v, rtol=1e-4, atol=1e-4)
    assert a[2].shape == (8, 25) and a[3].shape == (8,)
    opt = torch.optim.SGD(training.param_groups(net, 1e-4), lr=0.05, momentum=0.9)
    first = training.sgd_step(net, opt, [mb], 0.05, (1.0, 1.5, 1.0), 1, torch.device("cpu"))
    for _ in range(30):
        last = training.sgd_step(net, opt, [mb], 0.05, (1.0, 1.5, 1.0), 1, torch.device("cpu"))
    assert len(first) == len(training.LOSSES) and all(np.isfinite(first))
    assert last[2] < first[2] and last[3] < first[3]  # ownership and score are learned
    # the search never sees the heads: eval-mode predict gives the same as a net without them
    plain = model.DualNet(dataclasses.replace(cfg, aux_heads=False), backend=backend)
    plain.load_state_dict(
        {k: v for k, v in net.state_dict().items() if "ownership" not in k and "score" not in k}
    )
    net.eval()
    plain.eval()
    for u, v in zip(net.predict(x), plain.predict(x), strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


def test_rows_without_aux_targets_add_no_aux_loss():
    cfg = ModelConfig(5, 1, 8, 16, "agz", aux_heads=True)
    net = model.random_model(cfg, seed=3)
    x, pi, z, own, score = _examples(n=4)
    none = training.MicroBatch.from_arrays(x, pi, z, own, np.full(4, np.nan, dtype=np.float32))
    losses = training._losses(net, none).detach()
    assert float(losses[2]) == 0.0 and float(losses[3]) == 0.0 and float(losses[0]) > 0
    plain = model.random_model(dataclasses.replace(cfg, aux_heads=False), seed=3)
    aux = training._losses(plain, training.MicroBatch.from_arrays(x, pi, z, own, score)).detach()[2:]
    assert aux.abs().sum() == 0


def test_fused_engine_reads_a_model_with_aux_heads(tmp_path):
    from minigo_core.nn import fused

    cfg = ModelConfig(5, 1, 8, 16, "agz", aux_heads=True)
    net = model.random_model(cfg, seed=4)
    url = str(tmp_path / "m.safetensors")
    model.save_model(url, net, {"generation": 0})
    x = _examples(n=3)[0]
    probs, values = fused.load(url).predict(x)
    ref_p, ref_v = model.load_model(url, backend="torch").predict(x)
    np.testing.assert_allclose(probs, ref_p, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(values, ref_v, rtol=1e-4, atol=1e-5)
