"""DualNet on both backends, the model file, and `minigo bootstrap`."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minigo_core.base.runtime import Runtime
from minigo_core.jobs import bootstrap
from minigo_core.nn import model
from minigo_core.nn.model import ModelConfig, ModelFileError

torch.set_num_threads(1)

CFG = ModelConfig(board_size=7, blocks=2, filters=12, fc_width=10, feature_set="mlperf07")


def test_config_planes_and_from_run():
    from minigo_core.base.config import load_config

    assert ModelConfig(feature_set="agz").planes == 17
    assert ModelConfig(feature_set="mlperf07").planes == 13
    run = load_config({"board_size": 9, "features": "mlperf07", "model": {"blocks": 3, "filters": 16}})
    cfg = ModelConfig.from_run(run)
    assert (cfg.board_size, cfg.blocks, cfg.filters, cfg.feature_set) == (9, 3, 16, "mlperf07")
    with pytest.raises(ValueError, match="feature set"):
        ModelConfig(feature_set="nope")


def test_torch_forward_shapes_and_architecture(planes_batch):
    net = model.random_model(CFG, 0)
    x = planes_batch(CFG, 3)
    logits, value = net(x)
    assert logits.shape == (3, CFG.board_size**2 + 1) and value.shape == (3,)
    assert torch.all(value.abs() <= 1)
    names = dict(net.named_parameters())
    assert names["conv3_initial.conv.weight"].shape == (12, 13, 3, 3)
    assert names["blocks.1.conv2.conv.weight"].shape == (12, 12, 3, 3)
    assert names["conv1_policy.conv.weight"].shape == (2, 12, 1, 1)
    assert names["conv1_value.conv.weight"].shape == (1, 12, 1, 1)
    assert names["policy_fc.weight"].shape == (50, 2 * 49)
    assert names["value_fc1.weight"].shape == (10, 49) and names["value_fc2.weight"].shape == (1, 10)
    assert not any(n.endswith("conv.bias") for n in names)
    assert net.conv3_initial.bn.momentum == pytest.approx(0.05) and net.conv3_initial.bn.eps == 1e-5


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_backends_agree_outputs_and_param_grads(training, net_pair, planes_batch):
    net_t, net_d = net_pair(CFG)
    assert list(net_t.state_dict()) == list(net_d.state_dict())
    net_t.train(training)
    net_d.train(training)
    x = planes_batch(CFG, 5)
    target_pi = torch.softmax(torch.randn(5, 50, generator=torch.Generator().manual_seed(3)), 1)
    target_z = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0])
    grads = []
    outs = []
    for net in (net_t, net_d):
        net.zero_grad()
        logits, value = net(x)
        loss = -(target_pi * F.log_softmax(logits, 1)).sum(1).mean() + F.mse_loss(value, target_z)
        loss.backward()
        outs.append((logits.detach(), value.detach()))
        grads.append({n: p.grad.clone() for n, p in net.named_parameters()})
    torch.testing.assert_close(outs[1][0], outs[0][0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(outs[1][1], outs[0][1], rtol=1e-4, atol=1e-4)
    for name, g_t in grads[0].items():
        torch.testing.assert_close(grads[1][name], g_t, rtol=1e-3, atol=1e-4, msg=f"gradient of {name}")
    if training:  # running statistics updated the same way
        for (name, b_t), b_d in zip(net_t.named_buffers(), net_d.buffers(), strict=True):
            torch.testing.assert_close(b_d, b_t, rtol=1e-4, atol=1e-5, msg=f"buffer {name}")


def test_dsp_training_step_lowers_loss_like_torch(net_pair, planes_batch):
    net_t, net_d = net_pair(CFG, seed=4)
    x = planes_batch(CFG, 8, seed=5)
    g = torch.Generator().manual_seed(6)
    target_pi = torch.softmax(torch.randn(8, 50, generator=g) * 3, 1)
    target_z = torch.sign(torch.randn(8, generator=g))
    curves = []
    for net in (net_t, net_d):
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
        losses = []
        for _ in range(6):
            logits, value = net(x)
            loss = -(target_pi * F.log_softmax(logits, 1)).sum(1).mean() + F.mse_loss(value, target_z)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves.append(losses)
    assert curves[1][-1] < curves[1][0] - 0.1
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-3)


WIDE = ModelConfig(board_size=7, blocks=1, filters=33, fc_width=7, feature_set="agz")  # Winograd layers


@pytest.mark.parametrize("batch,cfg", [(1, CFG), (8, CFG), (1, WIDE), (3, WIDE)], ids=str)
def test_fused_inference_equals_unfused_and_torch(batch, cfg, net_pair, planes_batch):
    from minigo_core.nn.dsp import ops

    net_t, net_d = net_pair(cfg, seed=2)
    net_t.eval()
    net_d.eval()
    x = planes_batch(cfg, batch, seed=batch)
    isas = ops.supported_isas()
    for cores, isa, winograd in [(c, i, w) for c in (1, 2) for i in isas for w in (0, 2, 3)]:
        net_d.runtime = Runtime(threads=cores, isa=isa, winograd=winograd)
        with torch.no_grad():
            fused = net_d(x)  # eval + no_grad: the one-call fused path
        unfused = net_d.forward_all(x)[:2]  # layer by layer, BN not folded
        with torch.no_grad():
            ref = net_t(x)
        for got, want in zip(fused, unfused, strict=True):
            torch.testing.assert_close(got, want.detach(), rtol=1e-4, atol=1e-4)
        for got, want in zip(fused, ref, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        assert net_d.fused_inference().runtime == net_d.runtime  # rebuilt for the new runtime


def test_fused_path_follows_weight_updates(net_pair, planes_batch):
    _, net_d = net_pair(CFG, seed=3)
    net_d.eval()
    x = planes_batch(CFG, 2)
    with torch.no_grad():
        before = net_d(x)[1].clone()
        net_d.value_fc2.bias.add_(0.5)
        after = net_d(x)[1]
    assert not torch.allclose(before, after)
    torch.testing.assert_close(after, net_d.forward_all(x)[1].detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", ["torch", "dsp"])
def test_predict(backend, net_pair, planes_batch):
    net_t, _ = net_pair(CFG, seed=8)
    net = net_t.set_backend(backend)
    planes = planes_batch(CFG, 4).to(torch.uint8).numpy()
    probs, values = net.predict(planes)
    assert probs.dtype == np.float32 and values.dtype == np.float32
    assert probs.shape == (4, 50) and values.shape == (4,)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    net.set_backend("torch")
    with torch.no_grad():
        logits, value = net(torch.from_numpy(planes).float())
    np.testing.assert_allclose(probs, torch.softmax(logits, 1).numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(values, value.numpy(), rtol=1e-4, atol=1e-5)
    assert not net.training
    with pytest.raises(ValueError, match="predict expects planes"):
        net.predict(planes[:, :-1])


def test_save_load_roundtrip(tmp_path, net_pair):
    net, _ = net_pair(CFG, seed=9)
    url = str(tmp_path / "models" / "gen0003.safetensors")
    prov = {"generation": 3, "parent": "gen0002.safetensors", "data": ["window/gen0003"], "seed": 11}
    model.save_model(url, net, prov)
    loaded = model.load_model(url, backend="torch")
    assert loaded.cfg == CFG
    assert loaded.provenance["generation"] == 3 and loaded.provenance["parent"] == "gen0002.safetensors"
    assert loaded.provenance["software_version"]
    for (name, a), b in zip(net.state_dict().items(), loaded.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert not loaded.training
    assert len(model.model_digest(url)) == 64
    assert not any(p.name.startswith(".tmp-") for p in (tmp_path / "models").iterdir())


def test_load_model_dsp_backend(tmp_path, net_pair, planes_batch):
    net, _ = net_pair(CFG, seed=10)
    url = str(tmp_path / "m.safetensors")
    model.save_model(url, net, {"generation": 1})
    loaded = model.load_model(url, backend="dsp", runtime=Runtime(threads=2))
    assert loaded.backend == "dsp" and loaded.runtime.threads == 2
    planes = planes_batch(CFG, 2).to(torch.uint8).numpy()
    np.testing.assert_allclose(loaded.predict(planes)[0], net.eval().predict(planes)[0], rtol=1e-4, atol=1e-6)
    assert loaded.fused_inference().runtime.threads == 2


def test_bad_model_files_raise_model_file_error(tmp_path, net_pair):
    net, _ = net_pair(CFG, seed=11)
    good = model.model_bytes(net, {"generation": 0})
    cases = {
        "truncated.safetensors": good[: len(good) // 2],
        "empty.safetensors": b"",
        "garbage.safetensors": b"\x00not a model at all" * 10,
    }
    buf = io.BytesIO()
    torch.save({"weights": torch.zeros(3)}, buf)
    cases["foreign.safetensors"] = buf.getvalue()
    cases["pickle.safetensors"] = pickle.dumps(print)  # arbitrary object: must not be unpickled
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ModelFileError, match=name):
            model.load_model(str(path), backend="torch")
    with pytest.raises(ModelFileError, match="does not exist"):
        model.load_model(str(tmp_path / "missing.safetensors"))


def test_bootstrap_is_deterministic(tmp_path):
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(
        "board_size: 7\nseed: 5\nfeatures: agz\nmodel: {blocks: 1, filters: 8, backend: torch}\n"
    )
    a, b, c = (str(tmp_path / n) for n in ("a.safetensors", "b.safetensors", "c.safetensors"))
    assert bootstrap.cli_main(["--config", str(cfg_path), "--out", a]) == 0
    assert bootstrap.cli_main(["--config", str(cfg_path), "--out", b]) == 0
    assert bootstrap.cli_main(["--config", str(cfg_path), "--out", c, "--seed", "6"]) == 0
    assert model.model_digest(a) == model.model_digest(b) != model.model_digest(c)
    net = model.load_model(a, backend="torch")
    assert net.provenance["generation"] == 0 and net.provenance["seed"] == 5
    assert net.cfg == ModelConfig(7, 1, 8, 64, "agz", aux_heads=True)
