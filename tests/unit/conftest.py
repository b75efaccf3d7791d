"""Fixtures of the unit tests that need the dsp extension (imported lazily: the other unit tests run without
it)."""

from __future__ import annotations

import pytest


@pytest.fixture
def restore_dsp():
    """The dsp backend's process-wide settings back as they were after the test: the ISA build, the DSP cores,
    the Winograd training mode and the one-node trunk and heads switches."""
    from minigo_core.nn import dsp

    old = (dsp.get_isa(), dsp.get_num_threads(), dsp._C.winograd_training_mode(), dsp.ONE_NODE_TRUNK,
           dsp.ONE_NODE_HEADS)  # fmt: skip
    yield
    dsp.set_isa(old[0])
    dsp.set_num_threads(old[1])
    dsp.set_winograd_training(old[2])
    dsp.ONE_NODE_TRUNK, dsp.ONE_NODE_HEADS = old[3], old[4]
