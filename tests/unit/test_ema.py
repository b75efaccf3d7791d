"""`train.ema_decay`: the model a generation exports is the moving average of its training weights, while
training goes on from the raw weights, which the model file carries beside it (`modelfile.RAW_PREFIX`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from minigo_core.base import config
from minigo_core.data import layout
from minigo_core.nn import model, modelfile, train_job, training
from minigo_core.nn.modelfile import ModelConfig

BOARD = 5


def test_the_key_is_off_by_default_and_checked():
    assert config.from_dict({}).train.ema_decay is None
    assert config.from_dict({"train": {"ema_decay": 0.999}}).train.ema_decay == 0.999
    for bad in (0, 1, 1.5, -0.1, "0.9", True):
        with pytest.raises(config.ConfigError, match="train.ema_decay"):
            config.from_dict({"train": {"ema_decay": bad}})


def _micro(seed: int, n: int = 8) -> training.MicroBatch:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, 17, BOARD, BOARD), dtype=np.uint8)
    pi = rng.random((n, BOARD * BOARD + 1)).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 1.0], size=n).astype(np.float32)
    own = rng.integers(-1, 2, size=(n, BOARD * BOARD)).astype(np.int8)
    score = rng.normal(0, 5, size=n).astype(np.float32)
    return training.MicroBatch.from_arrays(x, pi, z, own, score)


def _tcfg(ema_decay: float | None, backend: str = "torch") -> config.TrainSettings:
    return config.TrainSettings(backend=backend, learning_rate=((0, 0.1),), ema_decay=ema_decay)


def _state(t: training.Trainer) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in t.net.state_dict().items()}


@pytest.mark.parametrize(
    ("backend", "flat"),
    [("torch", True), ("dsp", True), ("torch", False)],
    ids=["torch", "dsp", "torch-step"],
)
def test_the_model_written_is_the_average_of_the_raw_steps_and_the_next_generation_goes_on(
    tmp_path, backend, flat
):
    parent = str(tmp_path / "gen0001.safetensors")
    model.save_model(parent, model.random_model(ModelConfig(BOARD, 1, 8, 16, aux_heads=True), seed=3), {})
    decay = 0.75
    with training.torch_state_kept():
        t = training.Trainer.from_parent(parent, _tcfg(decay, backend), seed=1, local_rank=0, world=1)
        if not flat:  # an option FlatSGD leaves to torch's own step: the average goes parameter by parameter
            for group in t.opt.param_groups:
                group["dampening"] = 0.1
        expected = {k: a.astype(np.float64) for k, a in modelfile.read(parent).tensors.items()}
        for i in range(6):
            t.step([_micro(i)], 0.1, (1.0, 1.0, 1.0))
            assert (t.opt.flat_params() is not None) == flat
            for k, raw in _state(t).items():
                expected[k] = decay * expected[k] + (1 - decay) * raw if raw.dtype.kind == "f" else raw
        raw = _state(t)
        out = str(tmp_path / "gen0002.safetensors")
        t.save_model(out, {"global_step": 6})
    f = modelfile.read(out)
    assert f.raw is not None and f.raw.keys() == f.tensors.keys() == raw.keys()
    for k in raw:
        assert np.array_equal(f.raw[k], raw[k]), k
        np.testing.assert_allclose(f.tensors[k], expected[k], rtol=1e-6, atol=1e-6, err_msg=k)
    assert not np.array_equal(f.tensors["conv3_initial.conv.weight"], raw["conv3_initial.conv.weight"])
    assert not np.array_equal(
        f.tensors["conv3_initial.bn.running_mean"], raw["conv3_initial.bn.running_mean"]
    )
    # what plays and is evaluated is the average: inference never sees the raw weights
    loaded = model.load_model(out, backend="torch").state_dict()
    assert all(np.array_equal(loaded[k].numpy(), f.tensors[k]) for k in raw)
    # the next generation trains on from the raw weights, its average from this one's
    with training.torch_state_kept():
        nxt = training.Trainer.from_parent(out, _tcfg(decay, backend), seed=2, local_rank=0, world=1)
        ema = nxt.ema.state_dict()
        assert all(np.array_equal(_state(nxt)[k], raw[k]) for k in raw)
        assert all(np.array_equal(ema[k].numpy(), f.tensors[k]) for k in raw)
        # without the average, a parent's raw weights are still where training goes on from
        plain = training.Trainer.from_parent(out, _tcfg(None, backend), seed=2, local_rank=0, world=1)
        assert plain.ema is None and all(np.array_equal(_state(plain)[k], raw[k]) for k in raw)


def test_a_model_file_has_all_raw_weights_or_none(tmp_path):
    net = model.random_model(ModelConfig(BOARD, 1, 8, 16), seed=4)
    arrays = model.state_arrays(net.state_dict())
    url = str(tmp_path / "m.safetensors")
    modelfile.write(url, net.cfg, {}, arrays)
    assert modelfile.read(url).raw is None
    partial = {k: a for k, a in arrays.items() if k != "policy_fc.bias"}
    modelfile.write(url, net.cfg, {}, arrays, raw=partial)
    with pytest.raises(
        modelfile.ModelFileError, match=r"raw training weights \(raw/\*\).*missing policy_fc.bias"
    ):
        modelfile.read(url)


# ---- whole training jobs on a 5x5 window -------------------------------------------------------------------
@pytest.fixture(scope="module")
def setup(tmp_path_factory, training_inputs) -> dict:
    run = {
        "board_size": BOARD,
        "seed": 7,
        "model": {"blocks": 1, "filters": 8, "fc_width": 16, "backend": "torch"},
        "window": {"generations": 2, "sample_fraction": 1.0},
        "train": {"batch_per_rank": 16, "checkpoint_every": 3, "backend": "torch", "prefetch_batches": 2,
                  "learning_rate": [[0, 0.05]], "replay_ratio": None},
    }  # fmt: skip
    return training_inputs(tmp_path_factory.mktemp("ema"), run, generation=2, recorded_fraction=0.9)


def _train(setup: dict, name: str, ema_decay: float | None, parent: str | None = None, **kw) -> str:
    cfg = setup["cfg"]
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, ema_decay=ema_decay))
    out = str(setup["base"] / f"{name}.safetensors")
    work = str(setup["base"] / f"work-{name}")
    parent = parent or setup["parent"]
    job = train_job.TrainJob(cfg=cfg, generation=2, window_dir=setup["window"], parent=parent, out=out,
                             work_dir=work, quiet=True, record_wall_time=False, **kw)  # fmt: skip
    train_job.train(job)
    return out


@pytest.fixture(scope="module")
def runs(setup) -> dict:
    return {"plain": _train(setup, "plain", None), "ema": _train(setup, "ema", 0.8)}


def test_the_key_changes_what_training_exports_not_how_it_trains(runs):
    plain, ema = modelfile.read(runs["plain"]), modelfile.read(runs["ema"])
    assert plain.raw is None and "ema_decay" not in plain.provenance
    assert ema.provenance["ema_decay"] == 0.8 and ema.provenance["steps"] >= 5
    assert all(np.array_equal(ema.raw[k], plain.tensors[k]) for k in plain.tensors)  # the same steps
    assert any(not np.array_equal(ema.tensors[k], ema.raw[k]) for k in ema.tensors)


def test_a_decay_near_zero_exports_the_raw_weights(setup):
    f = modelfile.read(_train(setup, "near-zero", 1e-9))
    for k, raw in f.raw.items():
        np.testing.assert_allclose(f.tensors[k], raw, rtol=0, atol=1e-7, err_msg=k)


def test_resume_mid_generation_gives_the_same_bytes(setup, runs):
    work = setup["base"] / "work-resumed"
    _train(setup, "resumed", 0.8, stop_after=4)
    assert not (setup["base"] / "resumed.safetensors").exists()
    checkpoint = torch.load(work / layout.CHECKPOINT, weights_only=True)
    assert checkpoint["step"] == 4 and checkpoint["ema"].keys() == checkpoint["state_dict"].keys()
    out = _train(setup, "resumed", 0.8)
    assert open(out, "rb").read() == open(runs["ema"], "rb").read()


def test_the_next_generation_trains_on_from_the_raw_weights(setup, runs):
    """Training from the EMA model (its window reused) steps as from a model of its raw weights."""
    f = modelfile.read(runs["ema"])
    raw_only = str(setup["base"] / "raw-only.safetensors")
    modelfile.write(raw_only, f.config, f.provenance, f.raw)
    nxt = modelfile.read(_train(setup, "next", 0.8, runs["ema"]))
    ref = modelfile.read(_train(setup, "ref", None, raw_only))
    assert all(np.array_equal(nxt.raw[k], ref.tensors[k]) for k in ref.tensors)
