"""The dsp backend's device rule: its kernels read and write CPU memory, so every tensor it gets is a CPU one.

The compiled ops (`minigo_core.nn.dsp._C`) check only the activations' device ("x must be a CPU tensor") and
do not say what to do; a weight on a GPU beside a CPU activation is not checked there at all. `require_cpu`
is called at the Python entries of the backend (`dsp.conv`, `dsp.bn_relu`, the one-node trunk and heads, and
`DualNet` on the dsp backend) and names the fix. This module needs neither torch nor the compiled extension
to import: it reads each tensor's `.device` only.
"""

from __future__ import annotations

from typing import Any

FIX = (
    "the dsp backend runs on the CPU; use backend torch on CUDA (train.backend: torch trains on the GPU), "
    "or move the tensors to the CPU (.cpu())"
)


class DspDeviceError(ValueError):
    """A tensor on a device other than the CPU (a CUDA, meta or other tensor) reached the dsp backend."""


def require_cpu(what: str, *tensors: Any) -> None:
    """Raise DspDeviceError naming `what` (the op or module) and the fix if any tensor is not on the CPU.

    None entries (an absent residual or bias) are skipped."""
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            raise DspDeviceError(f"{what} was given a tensor on {t.device}: {FIX}")
