"""KataGo's pooled value head (`model.value_pool`): the same network on the torch backend, the dsp backend's
training path (forward, gradients, BN statistics), the fused inference network `_infer` and the self-play
engine's copy of it; the model file records it and reads it back; off, nothing changes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from minigo_core.base.config import ConfigError, load_config
from minigo_core.base.runtime import Runtime
from minigo_core.nn import fused, model, modelfile
from minigo_core.nn.dsp import heads, ops, reference
from minigo_core.nn.gpool import pooled_value_features
from minigo_core.nn.model import DspOptions, ModelConfig
from minigo_core.search import engine

# 16 filters: 8 value channels, 24 pooled features; global pooling and the auxiliary heads on, so the value
# head's channels sit between the policy's and the ownership's in the dsp heads' one conv
VP = ModelConfig(7, 2, 16, 10, "agz", aux_heads=True, global_pooling=True, value_pool=True)


def test_shapes_and_the_pooled_features():
    assert VP.value_channels == 8 and VP.value_features == 24
    net = model.random_model(VP, 0)
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    assert shapes == VP.tensor_shapes()
    assert shapes["conv1_value.conv.weight"] == (8, 16, 1, 1) and shapes["value_fc1.weight"] == (10, 24)
    off = dataclasses.replace(VP, value_pool=False)
    assert off.value_channels == 1 and off.tensor_shapes()["value_fc1.weight"] == (10, 49)
    with pytest.raises(ValueError, match="value_pool"):
        ModelConfig(7, 1, 1, 8, value_pool=True)
    # mean, mean * (N - 14) / 10, max per channel; NCHW and NHWC give the same features
    v = torch.arange(2 * 3 * 7 * 7, dtype=torch.float32).reshape(2, 3, 7, 7)
    f = pooled_value_features(v, 7, 1)
    mean = v.mean((2, 3))
    torch.testing.assert_close(f, torch.cat([mean, mean * -0.7, v.amax((2, 3))], 1))
    torch.testing.assert_close(pooled_value_features(v.permute(0, 2, 3, 1), 7, 3), f)


def test_off_changes_no_parameter_and_no_file_byte():
    off = dataclasses.replace(VP, value_pool=False)
    assert "value_pool" not in off.to_dict()  # files without the feature keep their bytes
    plain = ModelConfig(7, 2, 16, 10, "agz", aux_heads=True, global_pooling=True)
    a, b = model.random_model(off, 0).state_dict(), model.random_model(plain, 0).state_dict()
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
    assert b"value_pool" not in model.model_bytes(model.random_model(off, 0), {"g": 1})
    assert ModelConfig.from_dict(off.to_dict()).value_pool is False  # a file without the key reads as off


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_torch_and_dsp_agree_outputs_grads_and_bn_statistics(training, torch_dsp_agree):
    grads = torch_dsp_agree(VP, training)
    assert all(float(grads[f"conv1_value.{n}"].abs().max()) > 0 for n in ("conv.weight", "bn.weight"))


def test_dsp_heads_give_the_per_op_bytes(net_pair, planes_batch):
    """The one-node heads give the per-op reference's value, BN statistics and weight gradients."""
    results = []
    for per_op in (False, True):
        _, net = net_pair(VP, 5)
        net.dsp_options = DspOptions(fuse_bn_sums=False)
        net.train()
        x = planes_batch(VP, 3, seed=4)
        if per_op:
            logits, value, own, score = reference.forward_per_op(net, x)
        else:
            logits, value, own, score = reference.forward_per_op(net, x, heads=heads.heads)
        (logits.square().mean() + value.sum() + own.mean() + score.sum()).backward()
        results.append([logits, value, net.conv1_value.conv.weight.grad, net.value_fc1.weight.grad])
        results[-1] += [*net.conv1_value.bn.buffers()]
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_fused_engine_equals_torch(net_pair, planes_batch):
    net_t, net_d = net_pair(VP, 2)
    net_t.eval()
    net_d.eval()
    x = planes_batch(VP, 6, seed=7)
    with torch.no_grad():
        want = net_t(x)
    for cores, isa in [(c, i) for c in (1, 2) for i in ops.supported_isas()]:
        net_d.runtime = Runtime(threads=cores, isa=isa)
        with torch.no_grad():
            got = net_d(x)  # eval + no_grad: the fused network of `_infer`
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    # the value really comes from the pooled head: another value head's weights give other values
    tensors = {k: v.numpy().copy() for k, v in net_t.state_dict().items()}
    tensors["value_fc1.weight"][:, 16:] *= -1  # the maxes' weights
    assert not np.allclose(fused.FusedModel(VP, tensors).logits(x.numpy())[1], want[1].numpy(), atol=1e-4)


def test_model_file_round_trip_and_self_play_engine(tmp_path, net_pair, planes_batch):
    net_t, _ = net_pair(VP, 6)
    net_t.eval()
    url = str(tmp_path / "gen0001.safetensors")
    model.save_model(url, net_t, {"generation": 1})
    assert modelfile.read(url).config == VP and b"value_pool" in modelfile.read_bytes(url)
    x = planes_batch(VP, 4, seed=8)
    with torch.no_grad():
        want = [t.numpy() for t in net_t(x)]
    planes = x.to(torch.uint8).numpy()
    for net in (fused.load(url), engine.load_network(url)):  # `_infer`, `_engine`
        for got, ref in zip(net.logits(planes), want, strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_config_key():
    assert not load_config(Path(__file__).parents[2] / "config.yaml").model.value_pool  # off by default
    on = load_config({"model": {"value_pool": True}})
    assert on.model.value_pool and ModelConfig.from_run(on).value_pool
    with pytest.raises(ConfigError, match="model.value_pool"):
        load_config({"model": {"value_pool": True, "filters": 1}})
    with pytest.raises(ConfigError, match="model.value_pool"):
        load_config({"model": {"value_pool": "yes"}})
