"""The kernels' instruction-set builds: the same floats from the fused network on every one, and a self-play
game with the same bytes whichever build played it.

Each path this CPU runs is tested (`dsp.supported_isas()`: avx512 where the CPU has AVX-512F, avx2 where it
has AVX2+FMA, portable and portable16 everywhere). portable16 is the portable code at the AVX-512 build's
width (16 lanes, 24 accumulators, 8-wide last weight blocks masked), so that build's tiling runs even where
the CPU has no AVX-512; its intrinsics are tested wherever CI lands on an AVX-512 machine. Against torch,
every path is tested in test_dsp_ops.py (operators, forward and backward) and test_model.py (whole network,
training and fused inference).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from minigo_core.base.runtime import ISA_ENV, Runtime, RuntimeSettingError
from minigo_core.nn import fused, model
from minigo_core.nn.dsp import ops as dsp
from minigo_core.nn.model import ModelConfig

ISAS = dsp.supported_isas()

# Winograd layers (C >= 16) with 16-wide blocks; 24 and 40 filters end in an 8-wide block (a masked partial
# vector under 16 lanes); 12 filters: the direct kernel only.
SHAPES = [
    ModelConfig(board_size=9, blocks=2, filters=32, fc_width=16, feature_set="agz"),
    ModelConfig(board_size=7, blocks=1, filters=24, fc_width=8, feature_set="mlperf07"),
    ModelConfig(board_size=5, blocks=1, filters=40, fc_width=8, feature_set="agz"),
    ModelConfig(board_size=9, blocks=1, filters=12, fc_width=8, feature_set="mlperf07"),
]


def test_isa_names_and_errors():
    assert ISAS[0] == dsp.isa_of(Runtime())  # "auto": the widest, whatever the environment says
    assert "portable" in ISAS and "portable16" in ISAS
    with pytest.raises(RuntimeSettingError, match="unknown instruction set 'sse9'"):
        Runtime(isa="sse9")
    with pytest.raises(RuntimeSettingError, match=f"{ISA_ENV}='sse9' is not one of"):
        Runtime.from_environ({ISA_ENV: "sse9"})
    assert Runtime.from_environ({ISA_ENV: "portable"}).isa == "portable"
    assert Runtime.from_environ({}).isa == "auto"
    missing = [isa for isa in ("avx512", "avx2") if isa not in ISAS]
    for isa in missing:  # an ISA this CPU lacks: a clear error
        with pytest.raises(ValueError, match=f"cannot run the {isa} kernels; it runs: "):
            dsp.kernel_run(Runtime(isa=isa))


@pytest.mark.parametrize("cfg", SHAPES, ids=lambda c: f"{c.board_size}x{c.board_size}-{c.blocks}x{c.filters}")
def test_fused_engine_bit_identical_across_isas(cfg):
    net = model.random_model(cfg, seed=7, backend="torch")
    with torch.no_grad():
        for m in net.modules():  # non-trivial BN, so the folded weights are not round numbers
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_var.uniform_(0.5, 1.5)
                m.running_mean.normal_(0, 0.2)
    net.eval()
    g = np.random.default_rng(3)
    planes = g.integers(0, 2, size=(13, cfg.planes, cfg.board_size, cfg.board_size), dtype=np.uint8)
    tensors = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    results = {}
    for winograd in (0, 2, 3):  # direct, F(2x2,3x3), F(3x3,3x3)
        for isa in ISAS:
            for threads in (1, 2):
                rt = Runtime(threads=threads, isa=isa, winograd=winograd)
                engine = fused.FusedModel(cfg, tensors, runtime=rt)
                assert engine.isa == isa
                for batch in (1, 13):
                    p, v = engine.predict(planes[:batch])
                    results[(winograd, isa, threads, batch)] = (p.copy(), v.copy())
                    if threads == 1 and batch == 13:
                        results[(winograd, isa, "logits")] = engine.logits(planes)
    for key, (p, v) in results.items():
        if key[2] == "logits":
            ref_p, ref_v = results[(key[0], ISAS[0], "logits")]
        else:
            ref_p, ref_v = results[(key[0], ISAS[0], 1, 13)]
            ref_p, ref_v = ref_p[: key[3]], ref_v[: key[3]]
        assert np.array_equal(p, ref_p), key
        assert np.array_equal(v, ref_v), key
    # and every path agrees with torch (the same network, unfused, BN in eval mode) to float tolerance
    with torch.no_grad():
        ref_logits, ref_value = net(torch.from_numpy(planes.astype(np.float32)))
    for winograd in (0, 2, 3):
        logits, value = results[(winograd, ISAS[0], "logits")]
        np.testing.assert_allclose(logits, ref_logits.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(value, ref_value.numpy(), rtol=1e-4, atol=1e-4)


def test_selfplay_game_identical_whichever_build_plays(tmp_path):
    """`minigo selfplay` (the compiled engine) under MINIGO_DSP_ISA=each build: the same game file bytes."""
    cfg = {
        "board_size": 7,
        "seed": 9,
        "root": str(tmp_path / "run"),
        "model": {"blocks": 1, "filters": 24, "fc_width": 8},
        "selfplay": {"readouts": 8, "fast_readouts": 4, "games_per_job": 2},
    }
    (tmp_path / "config.yaml").write_text(json.dumps(cfg))
    shape = ModelConfig(board_size=7, blocks=1, filters=24, fc_width=8)
    net = model.random_model(shape, seed=4, backend="torch")
    model_path = str(tmp_path / "gen0001.safetensors")
    model.save_model(model_path, net, {"generation": 1})
    files = {}
    for isa in ISAS:
        out = tmp_path / isa / "game{game:05d}.arrow"
        argv = ["--config", str(tmp_path / "config.yaml"), "--model", model_path, "--generation", "1"]
        argv += ["--game", "0", "--count", "2", "--out", str(out), "--threads", "1"]
        env = dict(os.environ, MINIGO_DSP_ISA=isa)
        code = "import sys; from minigo_core.jobs.selfplay import cli_main; sys.exit(cli_main(sys.argv[1:]))"
        subprocess.run([sys.executable, "-c", code, *argv], env=env, check=True, capture_output=True)
        files[isa] = [(tmp_path / isa / f"game{g:05d}.arrow").read_bytes() for g in (0, 1)]
    for isa in ISAS:
        assert files[isa] == files[ISAS[0]], f"{isa} played other games than {ISAS[0]}"
