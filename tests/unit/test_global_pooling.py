"""KataGo's global pooling bias (`model.global_pooling`): the same network on the torch backend, the dsp
backend's training path (forward, gradients, BN statistics), the fused inference network `_infer` and the
self-play engine's copy of it; the model file records it and reads it back; off, nothing changes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from minigo_core.base.config import ConfigError, load_config
from minigo_core.base.runtime import Runtime
from minigo_core.nn import fused, model, modelfile
from minigo_core.nn.dsp import heads, ops, reference, trunk
from minigo_core.nn.model import DspOptions, DualNet, ModelConfig
from minigo_core.search import engine

# 4 blocks: pooling in blocks 0 and 3, so the dsp trunk runs the initial conv alone, a pooling block, a run of
# two plain blocks (a TrunkFunction without the initial conv) and a pooling block; 16 filters: Winograd convs
GP = ModelConfig(7, 4, 16, 10, "agz", aux_heads=True, global_pooling=True)


def test_pooling_blocks_and_parameters():
    assert GP.gpool_blocks() == (0, 3) and GP.gpool_channels == 4
    assert dataclasses.replace(GP, blocks=1).gpool_blocks() == (0,)
    assert dataclasses.replace(GP, blocks=6).gpool_blocks() == (2, 5)
    net = model.random_model(GP, 0)
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    assert shapes == GP.tensor_shapes()
    assert shapes["blocks.3.gpool_fc.weight"] == (12, 12) and "blocks.1.gpool_fc.weight" not in shapes
    with pytest.raises(ValueError, match="global_pooling"):
        ModelConfig(7, 1, 3, 8, global_pooling=True)


def test_off_changes_no_parameter_and_no_file_byte(tmp_path):
    off = dataclasses.replace(GP, global_pooling=False)
    assert off.gpool_blocks() == ()
    assert "global_pooling" not in off.to_dict()  # files without the feature keep their bytes
    assert not any("gpool" in k for k in model.random_model(off, 0).state_dict())
    # the same weights as a net built before the option existed: same names, same random draws
    plain = model.random_model(ModelConfig(7, 4, 16, 10, "agz", aux_heads=True), 0)
    a, b = model.random_model(off, 0).state_dict(), plain.state_dict()
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
    data = model.model_bytes(model.random_model(off, 0), {"g": 1})
    assert data == model.model_bytes(plain, {"g": 1}) and b"global_pooling" not in data
    # a file whose config has no `global_pooling` key reads as false
    assert ModelConfig.from_dict({k: v for k, v in off.to_dict().items()}).global_pooling is False


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_torch_and_dsp_agree_outputs_grads_and_bn_statistics(training, torch_dsp_agree):
    grads = torch_dsp_agree(GP, training)
    gpool = [n for n in grads if "gpool_fc" in n]
    assert len(gpool) == 4 and all(float(grads[n].abs().max()) > 0 for n in gpool)  # the layers learn


def test_dsp_trunk_gives_the_per_op_bytes(net_pair, planes_batch):
    """With the BN sums from the BN kernels, the segmented one-node trunk gives the per-op reference's bytes
    in outputs and every gradient."""
    results = []
    for per_op in (False, True):
        _, net = net_pair(GP, 5)
        net.dsp_options = DspOptions(fuse_bn_sums=False)
        net.train()
        x = planes_batch(GP, 3, seed=4)
        if per_op:
            logits, value, own, score = reference.forward_per_op(net, x, heads=heads.heads)
        else:
            logits, value, own, score = net.forward_all(x)
        (logits.square().mean() + value.sum() + own.mean() + score.sum()).backward()
        results.append([logits, value, *(p.grad for p in net.parameters()), *net.buffers()])
    for a, b in zip(*results, strict=True):
        assert torch.equal(a, b)


def test_dsp_trunk_input_gradient_by_finite_differences():
    cfg = ModelConfig(5, 4, 4, 4, "agz", global_pooling=True)
    net = DualNet(cfg, backend="dsp").double().train()
    x = torch.randn(2, 5, 5, cfg.planes, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda xx: trunk.trunk(net, xx, True, release=False), (x,), eps=1e-6, atol=1e-5
    )


def test_fused_engine_equals_torch(net_pair, planes_batch):
    net_t, net_d = net_pair(GP, 2)
    net_t.eval()
    net_d.eval()
    x = planes_batch(GP, 6, seed=7)
    with torch.no_grad():
        want = net_t(x)
    for cores, isa, winograd in [(c, i, w) for c in (1, 2) for i in ops.supported_isas() for w in (0, 3)]:
        net_d.runtime = Runtime(threads=cores, isa=isa, winograd=winograd)
        with torch.no_grad():
            got = net_d(x)  # eval + no_grad: the fused network of `_infer`
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    # and without the pooling layers the engine gives other outputs (the layers are really run)
    stripped = {k: v.numpy() for k, v in net_t.state_dict().items() if "gpool" not in k}
    no_gp = fused.FusedModel(dataclasses.replace(GP, global_pooling=False), stripped).logits(x.numpy())
    assert not np.allclose(no_gp[0], want[0].numpy(), rtol=1e-4, atol=1e-4)


def test_model_file_round_trip_and_self_play_engine(tmp_path, net_pair, planes_batch):
    net_t, _ = net_pair(GP, 6)
    net_t.eval()
    url = str(tmp_path / "gen0001.safetensors")
    model.save_model(url, net_t, {"generation": 1})
    f = modelfile.read(url)
    assert f.config == GP and f.config.global_pooling
    assert b"global_pooling" in modelfile.read_bytes(url)
    loaded = model.load_model(url, backend="torch")
    a, b = loaded.state_dict(), net_t.state_dict()
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
    x = planes_batch(GP, 4, seed=8)
    with torch.no_grad():
        want = [t.numpy() for t in net_t(x)]
    planes = x.to(torch.uint8).numpy()
    for net in (fused.load(url), engine.load_network(url)):  # `_infer`, `_engine`
        for got, ref in zip(net.logits(planes), want, strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_config_key():
    assert not load_config(Path(__file__).parents[2] / "config.yaml").model.global_pooling  # off by default
    on = load_config({"model": {"global_pooling": True}})
    assert on.model.global_pooling and ModelConfig.from_run(on).global_pooling
    with pytest.raises(ConfigError, match="model.global_pooling"):
        load_config({"model": {"global_pooling": True, "filters": 3}})
    with pytest.raises(ConfigError, match="model.global_pooling"):
        load_config({"model": {"global_pooling": "yes"}})
