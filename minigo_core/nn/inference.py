"""The network a player searches with: one entry point for self-play, evaluation and GTP.

On the dsp backend it is the torch-free `FusedModel` (`minigo_core.nn.fused`); on the torch backend a torch
`DualNet` (`minigo_core.nn.model`). Only the torch backend imports torch, so this module imports `model`
inside the function: a self-play job's start-up stays numpy + pyarrow (see docs/BENCHMARKS.md, start-up).
"""

from __future__ import annotations

from typing import Any

from minigo_core.base.runtime import DEFAULT_RUNTIME, Runtime
from minigo_core.nn import fused


def load_for_inference(url: str, backend: str = "dsp", runtime: Runtime = DEFAULT_RUNTIME) -> Any:
    """A network for self-play, evaluation and GTP: the torch-free FusedModel on the dsp backend (run as
    `runtime` says: `runtime.threads` DSP cores), a torch DualNet (`minigo_core.nn.model.load_model`) on the
    torch backend (`runtime.threads` torch threads). Only the torch backend imports torch."""
    if backend == "dsp":
        return fused.load(url, runtime)
    import torch  # lazy: torch start-up is paid only on the torch backend

    from minigo_core.nn import model  # lazy: imports torch

    torch.set_num_threads(runtime.threads)
    return model.load_model(url, backend=backend, runtime=runtime)
