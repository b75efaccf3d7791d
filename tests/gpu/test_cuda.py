"""The CUDA paths, checked on a GPU (`make test-gpu`, tools/gpu_check.py); without one every test here skips.

- a training step on the GPU (the rank's device as `minigo train` picks it) against the same steps on the CPU:
  same parent weights, same batches, torch backend, TF32 off; 3 steps at lr 0.05. Tolerance: the losses to
  5e-3 relative (+1e-5), the change of the weights over the steps to 2e-2 relative (the norm of the
  difference of the two changes over the norm of the CPU's), every weight to 2e-3 absolute. Measured on the
  CPU (this 2x32 net): float32 against float64 0.02% of those; float32 on 1 thread against 2 threads
  (another convolution algorithm) 4.7e-3 on the change, 2.5e-4 on a weight, 2.9e-4 on a loss; one of the two
  micro-batches dropped 0.32, 3.4e-2 and 0.33: a lost micro-batch, a wrong scale or a gradient left behind
  fails;
- an `nccl` step in real rank processes (tests/gpu/nccl_rank.py): 2 ranks when there are two GPUs, else 1,
  against one CPU process over the same global batch (each rank's rows as one micro-batch of the reference);
- inference (`DualNet.predict` on the GPU, as `load_for_inference(..., backend="torch")` loads it) against the
  CPU, and a short self-play game with the Python search on the GPU;
- the dsp backend refuses CUDA tensors with an error that names the fix (tests/unit/test_dsp_device.py checks
  the same here with meta tensors), and trains on the CPU even where there is a GPU. These two need the
  compiled extension and have "dsp_backend" in their names: tools/gpu_check.py runs them after the build.

Only numpy, torch, pytest and what `minigo_core`'s modules import are used (no fixture of tests/conftest.py:
tools/gpu_check.py runs this folder with `--noconftest` on a machine that may lack the pipeline's other
dependencies); a test whose module cannot be imported there skips naming the missing module.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
CUDA = torch.cuda.is_available()
pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not CUDA,
        reason=f"no CUDA GPU (torch {torch.__version__}: torch.cuda.is_available() is False); "
        "`make test-gpu` runs these on a GPU node",
    ),
]

LOSS_RTOL = 5e-3
UPDATE_RTOL = 2e-2
WEIGHT_ATOL = 2e-3
WEIGHTS = (1.0, 1.5, 1.0)  # value, ownership, score: config.yaml's
LR = 0.05
STEPS = 3


@pytest.fixture()
def no_tf32():
    """float32 matmuls and convolutions on the GPU (TF32 off), restored afterwards."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _model_config(board: int = 9, blocks: int = 2, filters: int = 32, **features):
    """A net of config.yaml's kind; `features`: ModelConfig's optional parts (value_pool, global_pooling)."""
    from minigo_core.nn.model import ModelConfig

    return ModelConfig(
        board_size=board, blocks=blocks, filters=filters, fc_width=32, aux_heads=True, **features
    )


def _batch(cfg, rows: int, seed: int) -> dict[str, np.ndarray]:
    """Random planes and targets of `rows` examples, as `MicroBatch.from_arrays` takes them."""
    rng = np.random.default_rng(seed)
    n = cfg.board_size
    pi = rng.random((rows, n * n + 1), dtype=np.float32)
    score = rng.standard_normal(rows).astype(np.float32) * 10
    score[::5] = np.nan  # resigned games: no auxiliary targets
    return {
        "planes": rng.integers(0, 2, size=(rows, cfg.planes, n, n), dtype=np.uint8),
        "pi": pi / pi.sum(axis=1, keepdims=True),
        "z": np.sign(rng.standard_normal(rows)).astype(np.float32),
        "own": np.sign(rng.standard_normal((rows, n * n))).astype(np.float32),
        "score": score,
    }


def _micro(batch: dict[str, np.ndarray], rows: slice):
    from minigo_core.nn.training import MicroBatch

    return MicroBatch.from_arrays(*(batch[k][rows] for k in ("planes", "pi", "z", "own", "score")))


def _parent(tmp_path: Path, cfg, seed: int = 3) -> str:
    from minigo_core.nn import model

    url = str(tmp_path / "parent.safetensors")
    model.save_model(url, model.random_model(cfg, seed=seed), {"generation": 0})
    return url


def _train_settings():
    from minigo_core.base import config as config_mod

    return config_mod.TrainSettings(backend="torch", learning_rate=((0, LR),), threads_per_rank=1)


def _cpu_reference(parent: str, micro: list, steps: int) -> tuple[dict, list]:
    """The state dict and losses of `steps` SGD steps of one CPU rank over the micro-batches `micro`."""
    from minigo_core.nn import model, training

    trainer = training.Trainer(
        model.load_model(parent, backend="torch"), _train_settings(), torch.device("cpu"), 1
    )
    losses = [trainer.step(micro, LR, WEIGHTS) for _ in range(steps)]
    return {k: v.detach().cpu().clone() for k, v in trainer.net.state_dict().items()}, losses


def _assert_same_training(parent: str, got: dict, want: dict, got_losses: list, want_losses: list) -> None:
    """The losses, the weights' change and the weights of two runs of the same steps agree (the tolerances
    above)."""
    from minigo_core.nn import model

    start = model.load_model(parent, backend="torch").state_dict()
    np.testing.assert_allclose(np.array(got_losses), np.array(want_losses), rtol=LOSS_RTOL, atol=1e-5)
    floats = [k for k in want if want[k].is_floating_point()]
    delta_got = torch.cat([(got[k].float() - start[k].float()).reshape(-1) for k in floats])
    delta_want = torch.cat([(want[k].float() - start[k].float()).reshape(-1) for k in floats])
    assert float(delta_want.norm()) > 0, "the reference did not change the weights"
    rel = float((delta_got - delta_want).norm() / delta_want.norm())
    assert rel < UPDATE_RTOL, f"the GPU's weight change differs from the CPU's by {rel:.2e} (relative)"
    for k in want:
        torch.testing.assert_close(
            got[k].to(want[k].dtype), want[k], rtol=0, atol=WEIGHT_ATOL, msg=f"{k} differs"
        )


# ---- training --------------------------------------------------------------------------------------------
def test_training_step_on_cuda_matches_the_cpu(tmp_path, no_tf32):
    _check_training(tmp_path, _model_config())


def _check_training(tmp_path: Path, cfg) -> None:
    """Training steps of the torch backend on the GPU: the losses fall, and the weights are the CPU's."""
    from minigo_core.nn import training

    parent = _parent(tmp_path, cfg)
    batch = _batch(cfg, 64, seed=1)
    micro = [
        _micro(batch, slice(0, 32)),
        _micro(batch, slice(32, 64)),
    ]  # two micro-batches, as a chunked step
    with training.torch_state_kept():
        trainer = training.Trainer.from_parent(parent, _train_settings(), seed=1, local_rank=0, world=1)
        assert trainer.device.type == "cuda", f"the torch backend trained on {trainer.device} beside a GPU"
        assert next(trainer.net.parameters()).is_cuda
        losses = [trainer.step(micro, LR, WEIGHTS) for _ in range(STEPS)]
        assert all(np.isfinite(losses).ravel()) and losses[-1][0] < losses[0][0]  # the policy loss went down
        got = {k: v.detach().cpu().clone() for k, v in trainer.net.state_dict().items()}
    want, want_losses = _cpu_reference(parent, micro, STEPS)
    _assert_same_training(parent, got, want, losses, want_losses)


def test_checkpoint_of_a_cuda_rank_resumes_on_the_gpu(tmp_path, no_tf32):
    """A checkpoint written by a GPU rank (momentum buffers on the GPU) loads back there and goes on alike."""
    from minigo_core.nn import training

    cfg = _model_config(blocks=1, filters=16)
    parent = _parent(tmp_path, cfg)
    micro = [_micro(_batch(cfg, 32, seed=2), slice(0, 32))]
    identity, url = {"test": "cuda"}, str(tmp_path / "checkpoint.pt")
    with training.torch_state_kept():
        whole = training.Trainer.from_parent(parent, _train_settings(), seed=1, local_rank=0, world=1)
        first = [whole.step(micro, LR, WEIGHTS) for _ in range(2)]
        whole.save_checkpoint(url, identity, 2, [])
        rest = [whole.step(micro, LR, WEIGHTS) for _ in range(2)]
        resumed = training.Trainer.from_parent(parent, _train_settings(), seed=1, local_rank=0, world=1)
        assert resumed.resume(url, identity, note=pytest.fail).step == 2
        again = [resumed.step(micro, LR, WEIGHTS) for _ in range(2)]
    assert len(first) == 2
    np.testing.assert_allclose(np.array(again), np.array(rest), rtol=LOSS_RTOL, atol=1e-5)
    for (k, a), b in zip(whole.net.state_dict().items(), resumed.net.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=WEIGHT_ATOL, msg=f"{k} differs after resuming")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nccl_step_in_rank_processes_matches_one_cpu_process(tmp_path):
    """Real rank processes over nccl (2 if there are two GPUs, else 1) against one CPU process."""
    world = 2 if torch.cuda.device_count() >= 2 else 1
    cfg = _model_config()
    parent = _parent(tmp_path, cfg)
    rows = 32
    batch = _batch(cfg, rows * world, seed=4)
    np.savez(tmp_path / "batch.npz", **batch)
    spec = {"parent": parent, "batch": str(tmp_path / "batch.npz"), "rows_per_rank": rows, "steps": STEPS,
            "lr": LR, "weights": list(WEIGHTS), "port": _free_port(), "world": world,
            "out": str(tmp_path / "rank0.pt")}  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    env.setdefault("NCCL_SOCKET_IFNAME", "lo")  # all ranks on this machine: bootstrap over the loopback
    script = str(Path(__file__).with_name("nccl_rank.py"))
    argv = [sys.executable, script, str(tmp_path / "spec.json")]
    procs = [
        subprocess.Popen([*argv, str(r)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for r in range(world)
    ]
    deadline = time.monotonic() + 240
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0].decode()[-3000:])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail(f"the {world} nccl rank(s) did not finish within 240 s")
    assert [p.returncode for p in procs] == [0] * world, "\n----\n".join(outputs)
    got = torch.load(spec["out"], weights_only=True)
    assert got["backend"] == "nccl" and got["device"] == "cuda:0"
    assert got["all_reduce"] == world * (world + 1) / 2
    assert got["gathered"] == [[float(r)] for r in range(world)] and len(got["names"]) == world
    micro = [_micro(batch, slice(r * rows, (r + 1) * rows)) for r in range(world)]  # each rank's rows
    want, want_losses = _cpu_reference(parent, micro, STEPS)
    _assert_same_training(parent, got["state"], want, got["losses"], want_losses)


# ---- inference and self-play ------------------------------------------------------------------------------
def test_inference_on_cuda_matches_the_cpu(tmp_path, no_tf32):
    _check_inference(tmp_path, _model_config())


def _check_inference(tmp_path: Path, cfg) -> None:
    """The torch backend's predictions on the GPU are the CPU's."""
    from minigo_core.nn import inference

    url = _parent(tmp_path, cfg)
    net = inference.load_for_inference(url, backend="torch")
    planes = _batch(cfg, 64, seed=5)["planes"]
    want_p, want_v = net.predict(planes)
    net.to("cuda")
    got_p, got_v = net.predict(planes)
    assert next(net.parameters()).is_cuda and got_p.dtype == np.float32 and got_v.dtype == np.float32
    np.testing.assert_allclose(got_p, want_p, rtol=1e-3, atol=1e-4)  # probabilities; a wrong net: ~1e-2
    np.testing.assert_allclose(got_v, want_v, rtol=1e-3, atol=1e-3)


def test_selfplay_game_on_cuda(tmp_path):
    """One short 9x9 self-play game with the Python search, the network on the GPU (torch backend)."""
    selfplay = pytest.importorskip(
        "minigo_core.selfplay.selfplay_game", reason="self-play needs pyarrow (game files)"
    )
    from minigo_core.base import config as config_mod
    from minigo_core.nn import inference

    run_cfg = config_mod.from_dict({
        "board_size": 9, "model": {"blocks": 2, "filters": 32, "fc_width": 32, "backend": "torch"},
        "selfplay": {"readouts": 8, "fast_readouts": 8, "parallel_readouts": 8, "search": "puct",
                     "resign_disabled_fraction": 1.0},
    })  # fmt: skip
    url = _parent(tmp_path, _model_config())
    net = inference.load_for_inference(url, backend="torch").to("cuda")
    start = time.perf_counter()
    record = selfplay.play_selfplay_game(net, run_cfg, generation=1, game_index=0, model_url=url)
    wall = time.perf_counter() - start
    assert next(net.parameters()).is_cuda
    assert len(record.moves) > 10 and len(record.move_index) > 0
    assert record.visits.sum(axis=1).min() >= 1 and record.metadata["board_size"] == 9
    print(f"self-play on {torch.cuda.get_device_name()}: {len(record.moves)} moves in {wall:.1f} s")


# ---- the dsp backend ---------------------------------------------------------------------------------------
def test_dsp_backend_refuses_cuda_tensors_naming_the_fix():
    dsp = pytest.importorskip("minigo_core.nn.dsp.ops", reason="the DSP-emulation extension is not built")
    from minigo_core.nn import model
    from minigo_core.nn.dsp_device import DspDeviceError

    fix = "the dsp backend runs on the CPU; use backend torch on CUDA"
    cfg = _model_config(blocks=1, filters=16)
    x, w = torch.zeros(2, 9, 9, 16), torch.zeros(16, 16, 3, 3)
    for xi, wi in ((x.cuda(), w), (x, w.cuda()), (x.cuda(), w.cuda())):
        with pytest.raises(DspDeviceError, match=f"dsp.conv was given a tensor on cuda:0: {fix}"):
            dsp.conv(xi, wi)
    with pytest.raises(DspDeviceError, match=fix):
        dsp.bn_relu(x.cuda(), torch.nn.BatchNorm2d(16), training=True)
    net = model.random_model(cfg, seed=0, backend="dsp")
    planes = torch.zeros(2, cfg.planes, 9, 9, device="cuda")
    with pytest.raises(DspDeviceError, match=fix):
        net.train().forward_all(planes)
    with torch.no_grad(), pytest.raises(DspDeviceError, match=fix):
        net.eval()(planes)
    on_gpu = model.random_model(cfg, seed=0).to("cuda")
    with pytest.raises(DspDeviceError, match=fix):
        on_gpu.set_backend("dsp")


def test_dsp_backend_trains_on_the_cpu_beside_a_gpu(tmp_path):
    pytest.importorskip("minigo_core.nn.dsp.ops", reason="the DSP-emulation extension is not built")
    from minigo_core.base import config as config_mod
    from minigo_core.nn import training

    parent = _parent(tmp_path, _model_config(blocks=1, filters=16))
    tcfg = config_mod.TrainSettings(backend="dsp", learning_rate=((0, LR),))
    with training.torch_state_kept():
        trainer = training.Trainer.from_parent(parent, tcfg, seed=1, local_rank=0, world=1)
        assert trainer.device.type == "cpu"
        micro = [_micro(_batch(trainer.model_config, 16, seed=6), slice(0, 16))]
        assert np.isfinite(trainer.step(micro, LR, WEIGHTS)).all()


# Last in the file: a fault in a CUDA kernel poisons the process's CUDA context, so every test after it would
# fail with the same error (make test-gpu runs them with CUDA_LAUNCH_BLOCKING=1, so the error names its op).
@pytest.mark.parametrize("part", ["value_pool", "global_pooling"])
def test_the_net_s_optional_parts_train_and_infer_on_cuda_as_on_the_cpu(tmp_path, no_tf32, part):
    """KataGo's pooled value head and global pooling bias, one at a time: their torch ops on the GPU."""
    cfg = _model_config(**{part: True})
    _check_training(tmp_path, cfg)
    _check_inference(tmp_path, cfg)
