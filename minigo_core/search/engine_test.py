"""The engine's test library `minigo_core/search/_engine_test*.so` (`csrc/engine_test_capi.h`) from Python:
the search's arithmetic that the tests compare with the Python reference (`gumbel_improved_policy`). No job
loads it; the production library `_engine` (`engine`) exports none of its functions.
"""

from __future__ import annotations

import ctypes

import numpy as np

from minigo_core.base import native

_P = ctypes.c_void_p
_I = ctypes.c_int
_F64 = ctypes.c_double
# The C functions of csrc/engine_test_capi.h: (restype, argtypes). Keep the two in step.
TEST_FUNCTIONS: dict[str, native.Signature] = {
    "mg_gumbel_improved_policy": (None, [_I, _P, _P, _P, _P, _F64, _F64, _F64, _P]),
}
LIBRARY = native.Library("minigo_core.search", "_engine_test", TEST_FUNCTIONS)


def lib() -> ctypes.CDLL:
    """The loaded test library (loaded on first use)."""
    return native.load(LIBRARY)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def gumbel_improved_policy(
    prior: np.ndarray,
    visits: np.ndarray,
    q_mover: np.ndarray,
    legal: np.ndarray,
    raw_value: float,
    c_visit: float = 50.0,
    c_scale: float = 1.0,
) -> np.ndarray:
    """The engine's Gumbel improved policy softmax(logits + sigma(completed Q)) (see search.h), for tests."""
    a = len(prior)
    prior = np.ascontiguousarray(prior, np.float64)
    visits = np.ascontiguousarray(visits, np.int32)
    q = np.ascontiguousarray(q_mover, np.float64)
    legal_u8 = np.ascontiguousarray(legal, np.uint8)
    out = np.zeros(a, np.float64)
    lib().mg_gumbel_improved_policy(
        a, _ptr(prior), _ptr(visits), _ptr(q), _ptr(legal_u8), raw_value, c_visit, c_scale, _ptr(out)
    )
    return out
