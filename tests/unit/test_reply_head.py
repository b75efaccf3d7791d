"""`model.reply_head` and `train.reply_weight`: KataGo's opponent-reply target. The window stores each row's
next move (the opponent's answer), the head trains on it at its weight, and the search never sees it: a model
without the head trains, saves and plays as before."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pyarrow.ipc as ipc
import pytest
import torch

from minigo_core.base import config
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.data import gamefile, layout, shards, window
from minigo_core.data.sampling import positions
from minigo_core.game import coords
from minigo_core.nn import fused, model, modelfile, train_job, training
from minigo_core.nn.modelfile import ModelConfig

BOARD = 5
N2 = BOARD * BOARD


def test_the_keys_are_off_by_default_and_checked():
    cfg = config.from_dict({})
    assert cfg.model.reply_head is False and cfg.train.reply_weight == 0.15
    on = config.from_dict({"model": {"reply_head": True}, "train": {"reply_weight": 0.5}})
    assert on.model.reply_head and on.train.reply_weight == 0.5
    assert ModelConfig.from_run(on).reply_head and not ModelConfig.from_run(cfg).reply_head
    for key, bad in (("model.reply_head", 1), ("model.reply_head", "yes"), ("train.reply_weight", -0.1),
                     ("train.reply_weight", 101), ("train.reply_weight", True)):  # fmt: skip
        section, name = key.split(".")
        with pytest.raises(config.ConfigError, match=key.replace(".", r"\.")):
            config.from_dict({section: {name: bad}})


def _game(seed: int, recorded_fraction: float = 1.0) -> gamefile.GameRecord:
    rng = np.random.default_rng(seed)
    return synthetic_game(
        random_moves(BOARD, rng, max_moves=40), BOARD, rng, recorded_fraction=recorded_fraction
    )


def test_the_reply_target_is_the_next_move_and_none_after_the_last():
    record = _game(1)
    rows = np.arange(record.num_positions)
    reply = positions.reply_targets(record, rows)
    moves = record.moves
    assert reply.dtype == np.int16 and reply.shape == rows.shape
    for r, i in enumerate(record.move_index):
        want = coords.to_flat(moves[i + 1], BOARD) if i + 1 < len(moves) else -1
        assert reply[r] == want
    assert record.move_index[-1] == len(moves) - 1 and reply[-1] == -1  # the game's last move: no answer
    assert moves[-1] is None and reply[-2] == N2  # the answer to the first of the closing passes: a pass


def _v2(batch, meta: dict) -> bytes:
    """A version-2 shard of `batch`'s rows: no `reply` column."""
    old = batch.drop_columns(["reply"])
    sink = io.BytesIO()
    with ipc.new_file(sink, old.schema.with_metadata({**meta, "version": "2"})) as writer:
        writer.write_batch(old)
    return sink.getvalue()


def test_shards_round_trip_the_reply_and_a_version_2_shard_reads_without_it(tmp_path):
    rng = np.random.default_rng(0)
    n = 7
    x = rng.integers(0, 2, size=(n, 17, BOARD, BOARD), dtype=np.uint8)
    pi = np.full((n, N2 + 1), 1 / (N2 + 1), dtype=np.float32)
    z = np.ones(n, dtype=np.float32)
    reply = np.array([0, 24, N2, -1, 3, 7, -1], dtype=np.int16)
    url = str(tmp_path / "v3.arrow")
    w = shards.ShardWriter(url, n, 17, BOARD, "agz")
    w.write(shards.encode(x, pi, z, 0, np.arange(n), reply=reply))
    w.close()
    ex = shards.load_shard(url).rows(0, n)
    assert np.array_equal(ex.reply, reply) and np.array_equal(ex.planes, x)
    assert np.array_equal(shards.decode(shards.encode(x, pi, z, 0, np.arange(n)), 17, BOARD).reply, [-1] * n)
    with pytest.raises(ValueError, match="reply"):
        shards.encode(x, pi, z, 0, np.arange(n), reply=np.full(n, N2 + 1))
    # a window built before the column (format version 2) still reads: no reply target in any row
    meta = {k.decode(): v.decode() for k, v in w._schema.metadata.items()}
    assert meta["version"] == "3"
    url2 = str(tmp_path / "v2.arrow")
    with open(url2, "wb") as f:
        f.write(_v2(shards.encode(x, pi, z, 0, np.arange(n), reply=reply), meta))
    old = shards.load_shard(url2)
    ex2 = old.rows(0, n)
    assert np.array_equal(ex2.reply, [-1] * n) and np.array_equal(ex2.planes, x) and np.allclose(ex2.pi, pi)
    assert [e.reply.tolist() for e in old.iter_batches()] == [[-1] * n]


def test_the_window_writes_each_sampled_rows_reply(tmp_path):
    root = str(tmp_path / "run")
    for i in range(3):
        gamefile.write_game(layout.game_path(root, 0, i), _game(10 + i, recorded_fraction=0.8))
    cfg = config.from_dict({"root": root, "board_size": BOARD, "seed": 3,
                            "window": {"generations": 1, "sample_fraction": 1.0}})  # fmt: skip
    out = layout.window_dir(root, 1)
    manifest = window.build_window(cfg, 1, out, workers="threads")
    records = {g["index"]: gamefile.read_game(g["path"]) for g in manifest["games"]}
    rows, replies = 0, []
    for entry in manifest["shards"]:
        ex = shards.load_shard(f"{out}/{entry['name']}").rows(0, entry["rows"])
        for game, move, reply in zip(ex.game, ex.move, ex.reply, strict=True):
            record = records[int(game)]
            i = int(record.move_index[np.flatnonzero(record.full_search)[move]])
            assert reply == (coords.to_flat(record.moves[i + 1], BOARD) if i + 1 < len(record.moves) else -1)
        rows += len(ex)
        replies += ex.reply.tolist()
    assert rows == manifest["rows"] > 0
    assert -1 in replies and N2 in replies and max(replies) <= N2  # the last moves, and answers by a pass


def test_augment_moves_the_reply_with_the_planes():
    rng = np.random.default_rng(2)
    n = 64
    reply = rng.integers(-1, N2 + 1, size=n).astype(np.int16)
    planes = np.zeros((n, 17, BOARD, BOARD), dtype=np.uint8)
    on_board = np.flatnonzero((reply >= 0) & (reply < N2))
    planes.reshape(n, 17, N2)[on_board, 0, reply[on_board]] = 1  # plane 0 marks the answer's point
    pi = np.full((n, N2 + 1), 1 / (N2 + 1), dtype=np.float32)
    out_planes, _, out_reply = train_job.augment(planes, pi, rng, reply=reply)
    assert np.array_equal(out_reply < 0, reply < 0) and np.array_equal(out_reply == N2, reply == N2)
    got = out_planes.reshape(n, 17, N2)[on_board, 0].argmax(axis=1)
    assert np.array_equal(got, out_reply[on_board])
    assert not np.array_equal(out_reply, reply)  # some symmetry moved some point
    _, _, own, both = train_job.augment(
        planes, pi, np.random.default_rng(5), np.zeros((n, N2), np.int8), reply
    )
    assert own.shape == (n, N2) and both.shape == (n,)


def _batch(n: int = 8, seed: int = 0, reply=None) -> training.MicroBatch:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, 17, BOARD, BOARD), dtype=np.uint8)
    pi = rng.random((n, N2 + 1)).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 1.0], size=n).astype(np.float32)
    own = rng.integers(-1, 2, size=(n, N2)).astype(np.int8)
    score = rng.normal(0, 5, size=n).astype(np.float32)
    reply = rng.integers(0, N2 + 1, size=n) if reply is None else np.asarray(reply)
    return training.MicroBatch.from_arrays(x, pi, z, own, score, reply)


CFG = ModelConfig(BOARD, 1, 8, 16, "agz", aux_heads=True, reply_head=True)


def test_the_reply_loss_is_the_mean_over_rows_with_a_target():
    net = model.random_model(CFG, seed=1)
    reply = np.array([3, -1, N2, 0, -1, 7, 11, -1])
    mb = _batch(reply=reply)
    losses = training._losses(net, mb).detach()
    logits = net.forward_train(mb.x)[4].detach()
    has = reply >= 0
    want = torch.nn.functional.cross_entropy(logits[has], torch.from_numpy(reply[has]))
    assert training.LOSSES[4] == "reply" and float(losses[4]) == pytest.approx(float(want), rel=1e-6)
    none = training._losses(net, _batch(reply=[-1] * 8)).detach()
    assert float(none[4]) == 0.0  # no row with a target: nothing to learn
    plain = model.random_model(dataclasses.replace(CFG, reply_head=False), seed=1)
    assert plain.forward_train(mb.x)[4] is None and float(training._losses(plain, mb).detach()[4]) == 0.0
    assert torch.equal(losses[:4], training._losses(plain, mb).detach()[:4])  # the same trunk and heads


@pytest.mark.parametrize("backend", ["torch", "dsp"])
def test_the_head_trains_on_both_backends_and_they_agree(backend):
    ref = model.random_model(CFG, seed=2, backend="torch").train()
    net = model.random_model(CFG, seed=2, backend=backend).train()
    mb = _batch(seed=3)
    for u, v in zip(ref.forward_train(mb.x), net.forward_train(mb.x), strict=True):
        torch.testing.assert_close(u, v, rtol=1e-4, atol=1e-4)
    before = {k: v.detach().clone() for k, v in net.state_dict().items()}
    opt = torch.optim.SGD(training.param_groups(net, 1e-4), lr=0.05, momentum=0.9)
    first = training.sgd_step(net, opt, [mb], 0.05, (1.0, 1.5, 1.0, 1.0), 1, torch.device("cpu"))
    for _ in range(20):
        last = training.sgd_step(net, opt, [mb], 0.05, (1.0, 1.5, 1.0, 1.0), 1, torch.device("cpu"))
    assert len(first) == len(training.LOSSES) == 5 and last[4] < first[4] - 0.5  # the answers are learned
    after = net.state_dict()
    for name in ("conv1_reply.conv.weight", "conv1_reply.bn.running_mean", "reply_fc.weight"):
        assert not torch.equal(after[name], before[name]), name


def test_a_model_with_the_head_saves_loads_and_plays_as_one_without(tmp_path):
    with_head, plain_cfg = model.random_model(CFG, seed=4), dataclasses.replace(CFG, reply_head=False)
    plain = model.random_model(plain_cfg, seed=4)
    shared = plain.state_dict()
    assert all(torch.equal(with_head.state_dict()[k], v) for k, v in shared.items())  # the head is drawn last
    a, b = str(tmp_path / "head.safetensors"), str(tmp_path / "plain.safetensors")
    model.save_model(a, with_head, {"generation": 0})
    model.save_model(b, plain, {"generation": 0})
    fa, fb = modelfile.read(a), modelfile.read(b)
    assert fa.config.reply_head and set(fa.tensors) - set(fb.tensors) == {
        f"conv1_reply.{t}"
        for t in (
            "conv.weight",
            "bn.weight",
            "bn.bias",
            "bn.running_mean",
            "bn.running_var",
            "bn.num_batches_tracked",
        )  # fmt: skip
    } | {"reply_fc.weight", "reply_fc.bias"}
    assert (
        "reply_head" not in _header(b)["config"]
    )  # a model without the head: the bytes of one from before it
    assert (
        ModelConfig.from_dict({k: v for k, v in CFG.to_dict().items() if k != "reply_head"}).reply_head
        is False
    )
    x = np.random.default_rng(5).integers(0, 2, size=(6, 17, BOARD, BOARD), dtype=np.uint8)
    heads_a, heads_b = fused.load(a).predict_all(x), fused.load(b).predict_all(x)
    for u, v in zip(heads_a, heads_b, strict=True):
        assert np.array_equal(u, v)
    for backend in ("dsp", "torch"):
        for u, v in zip(model.load_model(a, backend).predict(x), model.load_model(b, backend).predict(x),
                        strict=True):  # fmt: skip
            assert np.array_equal(u, v)


def _header(url: str) -> dict:
    """The `minigo` metadata of a model file's safetensors header."""
    data = open(url, "rb").read()
    size = int.from_bytes(data[:8], "little")
    return json.loads(json.loads(data[8 : 8 + size])["__metadata__"]["minigo"])


# ---- whole training jobs on a 5x5 window -------------------------------------------------------------------
@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("reply")
    root = str(base / "run")
    for i in range(8):
        gamefile.write_game(layout.game_path(root, 1, i), _game(20 + i, recorded_fraction=0.9))
    cfg = config.from_dict(
        {
            "root": root,
            "board_size": BOARD,
            "seed": 7,
            "model": {"blocks": 1, "filters": 8, "fc_width": 16, "backend": "dsp"},
            "window": {"generations": 1, "sample_fraction": 1.0},
            "train": {"batch_per_rank": 16, "backend": "dsp", "prefetch_batches": 2,
                      "learning_rate": [[0, 0.05]], "replay_ratio": None},
        }
    )  # fmt: skip
    window_dir = layout.window_dir(root, 2)
    window.build_window(cfg, 2, window_dir, workers="threads")
    parents = {}
    for head in (False, True):
        parents[head] = str(base / f"parent-{head}.safetensors")
        run_cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, reply_head=head))
        model.save_model(parents[head], model.random_model(ModelConfig.from_run(run_cfg), seed=5), {})
    return {"base": base, "cfg": cfg, "window": window_dir, "parents": parents}


def _train(setup: dict, head: bool, weight: float) -> tuple[modelfile.ModelFile, bytes, list[dict]]:
    cfg = setup["cfg"]
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, reply_weight=weight))
    name = f"{head}-{weight}"
    out, work = str(setup["base"] / f"{name}.safetensors"), str(setup["base"] / f"work-{name}")
    job = train_job.TrainJob(cfg=cfg, generation=2, window_dir=setup["window"], parent=setup["parents"][head],
                             out=out, work_dir=work, quiet=True, record_wall_time=False)  # fmt: skip
    train_job.train(job)
    with open(f"{work}/{layout.METRICS}") as f:
        steps = [r for r in map(json.loads, f) if r["event"] == "step"]
    return modelfile.read(out), open(out, "rb").read(), steps


def test_with_the_head_training_learns_the_replies(setup):
    parent = modelfile.read(setup["parents"][True])
    on, _, steps = _train(setup, True, 0.15)
    assert steps and all(r["reply_loss"] > 0 for r in steps) and on.provenance["final_losses"]["reply"] > 0
    assert on.provenance["steps"] >= 3
    for name in ("conv1_reply.conv.weight", "reply_fc.weight", "reply_fc.bias"):
        assert not np.array_equal(on.tensors[name], parent.tensors[name]), name
    # the weight is what the trunk learns from it: at 0 the trunk steps otherwise
    off, _, _ = _train(setup, True, 0.0)
    assert not np.array_equal(
        on.tensors["conv3_initial.conv.weight"], off.tensors["conv3_initial.conv.weight"]
    )


def test_without_the_head_the_key_changes_nothing(setup):
    a, bytes_a, steps = _train(setup, False, 0.15)
    _, bytes_b, _ = _train(setup, False, 0.0)
    assert bytes_a == bytes_b  # the reply weight means nothing without the head
    assert not a.config.reply_head and not any(k.startswith(("reply_", "conv1_reply")) for k in a.tensors)
    assert "reply" not in a.provenance["final_losses"] and all(r["reply_loss"] == 0 for r in steps)
