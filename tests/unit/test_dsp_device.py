"""The dsp backend refuses tensors that are not on the CPU, naming the fix, at its Python entries.

Run here with meta tensors (a device that is not the CPU, no GPU needed); tests/gpu/test_cuda.py checks the
same with CUDA tensors on a GPU. Without the check, a non-CPU weight beside a CPU activation reaches the
compiled kernels, which check only the activation's device.
"""

from __future__ import annotations

import pytest
import torch

from minigo_core.nn import model
from minigo_core.nn.dsp_device import DspDeviceError, require_cpu

FIX = "the dsp backend runs on the CPU; use backend torch on CUDA"
CFG = model.ModelConfig(board_size=5, blocks=1, filters=8, fc_width=8, aux_heads=True)


def test_require_cpu_names_the_op_the_device_and_the_fix():
    cpu = torch.zeros(2)
    require_cpu("dsp.conv", cpu, None, cpu)  # CPU tensors and absent ones pass
    with pytest.raises(
        DspDeviceError, match=r"dsp\.conv was given a tensor on meta: .*use backend torch on CUDA"
    ):
        require_cpu("dsp.conv", cpu, torch.zeros(2, device="meta"))


@pytest.fixture(scope="module")
def dsp():
    return pytest.importorskip("minigo_core.nn.dsp.ops", reason="the DSP-emulation extension is not built")


def test_dsp_ops_refuse_a_non_cpu_input_or_weight(dsp):
    x, w = torch.zeros(1, 5, 5, 8), torch.zeros(8, 8, 3, 3)
    assert dsp.conv(x, w).shape == (1, 5, 5, 8)
    for xi, wi in ((x.to("meta"), w), (x, w.to("meta"))):  # the compiled op checks x only
        with pytest.raises(DspDeviceError, match=FIX):
            dsp.conv(xi, wi)
    bn = torch.nn.BatchNorm2d(8)
    with pytest.raises(DspDeviceError, match=FIX):
        dsp.bn_relu(x.to("meta"), bn, training=True)
    assert int(bn.num_batches_tracked) == 0  # refused before it counted a batch


def test_dualnet_on_the_dsp_backend_refuses_a_non_cpu_input_or_net(dsp):
    net = model.random_model(CFG, seed=0, backend="dsp")
    x = torch.zeros(2, CFG.planes, 5, 5)
    counts = [int(m.num_batches_tracked) for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with pytest.raises(DspDeviceError, match="the dsp trunk was given a tensor on meta"):
        net.train().forward_all(x.to("meta"))
    assert [
        int(m.num_batches_tracked) for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)
    ] == counts
    with torch.no_grad(), pytest.raises(DspDeviceError, match="DualNet on the dsp backend"):
        net.eval()(x.to("meta"))  # the fused network would have copied it to the CPU
    logits, value, _, _ = net.forward_all(x)  # a CPU input still runs
    assert logits.shape == (2, 26) and value.shape == (2,)
    on_meta = model.random_model(CFG, seed=0).to("meta")
    with pytest.raises(DspDeviceError, match=r"DualNet.set_backend\('dsp'\)"):
        on_meta.set_backend("dsp")
    assert on_meta.backend == "torch"
