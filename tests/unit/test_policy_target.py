"""The Gumbel policy column of a game file: format version 2 stores it in units of 1/65535 (error below one
unit an entry), a version-1 file (float32, from before the first release) is refused naming the file, and
training on the stored policy is training on the float32 policy the search computed, within a tested tolerance
(the same examples through the window's shard encoding, the same network: the policy loss and every
parameter's gradient compared)."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pytest

from minigo_core.data import shards
from minigo_core.data.gamefile import (
    FORMAT_VERSION,
    POLICY_UNITS,
    GameFileError,
    game_bytes,
    quantise_policy,
    read_game,
    read_metadata,
    write_game,
)


def gumbel_like_policies(num_moves: int, rows: int, seed: int = 0) -> np.ndarray:
    """Policy rows of the shapes Gumbel's improved policy takes: peaked (a few visited moves with a large
    sigma(q)), flat (the prior where nothing was visited), one-hot, with exact zeros on illegal moves, and
    entries far below 1/65535."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(rows, num_moves)) * rng.choice([0.1, 1.0, 5.0, 40.0], size=(rows, 1))
    legal = rng.random((rows, num_moves)) < rng.choice([1.0, 0.9, 0.3], size=(rows, 1))
    legal[:, -1] = True  # the pass
    z = np.where(legal, logits, -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p[0] = 0.0
    p[0, 3 % num_moves] = 1.0  # one-hot
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("num_moves", [82, 362])
def test_policy_quantisation_error_is_below_one_unit(num_moves):
    policy = gumbel_like_policies(num_moves, 400)
    counts = quantise_policy(policy)
    assert counts.dtype == np.uint16 and counts.shape == policy.shape
    assert (counts.sum(axis=1) == POLICY_UNITS).all()
    exact = policy.astype(np.float64) / policy.astype(np.float64).sum(axis=1, keepdims=True)
    error = np.abs(counts / POLICY_UNITS - exact)
    assert error.max() < 1.0 / POLICY_UNITS
    assert error.sum(axis=1).max() < num_moves / POLICY_UNITS  # the L1 bound the docstring states
    assert (counts[policy == 0] == 0).all()  # illegal moves stay exactly zero
    # read back (divided by the row's sum, float32) and quantised again: the same counts
    back = (counts / counts.sum(axis=1, keepdims=True).astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(quantise_policy(back), counts)
    with pytest.raises(ValueError, match="all zero"):
        quantise_policy(np.zeros((1, num_moves), dtype=np.float32))


def _gumbel_record(make_record, board_size: int = 9):
    record = make_record(board_size)
    record.policy = gumbel_like_policies(board_size * board_size + 1, record.num_positions, seed=3)
    record.metadata.update(target="policy", format_version=FORMAT_VERSION)  # the shared fixture says 1
    return record


@pytest.mark.parametrize("board_size", [9, 19])
def test_gumbel_policy_round_trips_within_one_unit(tmp_path, make_record, board_size):
    record = _gumbel_record(make_record, board_size)
    url = str(tmp_path / "g.arrow")
    write_game(url, record)
    data = (tmp_path / "g.arrow").read_bytes()
    column = pa.ipc.open_stream(data).schema.field("policy").type
    assert column.value_type == pa.uint16() and read_metadata(url)["format_version"] == 2
    back = read_game(url)
    assert back.policy.dtype == np.float32
    np.testing.assert_allclose(back.policy, record.policy, rtol=0, atol=1.0 / POLICY_UNITS)
    np.testing.assert_allclose(back.policy.sum(axis=1), 1.0, atol=1e-6)
    assert game_bytes(back) == data  # a read file written again is the same bytes


def _version1_bytes(record) -> bytes:
    """A game file as the version-1 writer made it: the same columns, the policy as float32."""
    table = pa.ipc.open_stream(game_bytes(record)).read_all()
    policy = pa.FixedSizeListArray.from_arrays(pa.array(record.policy.reshape(-1), pa.float32()),
                                               record.policy.shape[1])  # fmt: skip
    table = table.set_column(table.column_names.index("policy"), "policy", policy)
    meta = {**json.loads(table.schema.metadata[b"minigo"]), "format_version": 1}
    return _stream(table.replace_schema_metadata({b"minigo": json.dumps(meta).encode()}))


def test_version1_file_is_refused_naming_the_file_and_what_to_do(tmp_path, make_record):
    path = tmp_path / "v1.arrow"
    path.write_bytes(_version1_bytes(_gumbel_record(make_record)))
    with pytest.raises(GameFileError, match=r"has format version 1; this software reads versions 2; re-run"):
        read_game(str(path))
    with pytest.raises(GameFileError, match=str(path)):
        read_game(str(path))


def test_policy_column_of_the_wrong_type_for_its_version_is_rejected(tmp_path, make_record):
    data = _version1_bytes(_gumbel_record(make_record))
    table = pa.ipc.open_stream(data).read_all()
    meta = json.loads(table.schema.metadata[b"minigo"])
    meta["format_version"] = 2  # says uint16, holds float32
    path = tmp_path / "mixed.arrow"
    path.write_bytes(_stream(table.replace_schema_metadata({b"minigo": json.dumps(meta).encode()})))
    with pytest.raises(GameFileError, match=r"column 'policy' has type .* format version 2") as excinfo:
        read_game(str(path))
    assert str(path) in str(excinfo.value)


def _stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _loss_and_grads(net, planes, pi, z):
    """The training step's policy loss and the gradient of the whole loss, as `sgd_step` computes them."""
    from minigo_core.nn import training  # lazy: torch, only the training test

    net.zero_grad(set_to_none=False)
    losses = training._losses(net, training.MicroBatch.from_arrays(planes, pi, z))
    losses.sum().backward()
    return float(losses[0].detach()), np.concatenate(
        [p.grad.reshape(-1).numpy().astype(np.float64) for p in net.parameters()]
    )


def _through_shard(planes, pi, z, n):
    """The examples as the window writes them and the trainer reads them (float16 sparse policy)."""
    batch = shards.encode(planes, pi, z, 0, np.arange(len(z)))
    return shards.decode(batch, planes.shape[1], n).pi


@pytest.mark.parametrize("board_size", [9, 19])
def test_training_on_the_stored_policy_equals_training_on_the_float32_one(tmp_path, make_record, board_size):
    record = make_record(board_size, num_moves=60, every=1)
    num_moves = board_size * board_size + 1
    record.policy = gumbel_like_policies(num_moves, record.num_positions, seed=board_size)
    record.metadata.update(target="policy", format_version=FORMAT_VERSION)
    write_game(str(tmp_path / "g.arrow"), record)
    stored = read_game(str(tmp_path / "g.arrow"))
    rows = np.arange(record.num_positions)
    planes, _, z = stored.training_examples("mlperf07")
    pi_float32 = _through_shard(planes, record.policy_targets(rows), z, board_size)
    pi_stored = _through_shard(planes, stored.policy_targets(rows), z, board_size)
    l1 = np.abs(pi_stored.astype(np.float64) - pi_float32).sum(axis=1).max()
    assert 0 < l1 < 2 * num_moves / POLICY_UNITS  # the game file's bound, plus the shard's float16 rounding

    torch = pytest.importorskip("torch")
    from minigo_core.nn import model  # lazy: torch, only this test

    cfg = model.ModelConfig(board_size=board_size, blocks=1, filters=8, fc_width=8, feature_set="mlperf07")
    net = model.random_model(cfg, 7, backend="torch")
    loss_a, grad_a = _loss_and_grads(net, planes, pi_float32, z)
    loss_b, grad_b = _loss_and_grads(net, planes, pi_stored, z)
    with torch.no_grad():
        logits = net.forward_all(torch.from_numpy(planes).float())[0]
        worst_log_p = float(-torch.log_softmax(logits, dim=1).min())
    # |sum (pi_a - pi_b) log p| <= L1 * max |log p|, averaged over the batch
    assert abs(loss_a - loss_b) <= l1 * worst_log_p + 1e-6
    assert abs(loss_a - loss_b) < 1e-3 * abs(loss_a)
    # the gradient moves the weights the same way: relative difference below 1e-3
    assert np.linalg.norm(grad_a - grad_b) < 1e-3 * np.linalg.norm(grad_a)
