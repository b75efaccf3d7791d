"""Fused whole-network inference without torch: the DSP-emulation engine behind a C interface, via ctypes.

Self-play and evaluation only run the network forward, in eval mode, on small batches. This module loads a
model file with numpy (`minigo_core.nn.modelfile`), folds each BN into its convolution, and hands the weights
to the fused inference net of the compiled library `minigo_core/nn/dsp/_infer*.so` (the same kernels as the
torch extension `minigo_core.nn.dsp._C`: NHWC direct and Winograd 3x3 convolutions on a pool of worker threads
standing for DSP cores; see `minigo_core.nn.dsp.ops`). No torch import: self-play starts with numpy + pyarrow.

    net = fused.load("runs/x/models/gen0003.safetensors", Runtime(threads=1))
    probs, values = net.predict(planes_uint8)      # (B, N*N+1) move probabilities, (B,) values
    heads = net.predict_all(planes_uint8)           # the ownership and score heads too, if the model has them

Only the tensors the engine runs are read (`fold`, the auxiliary heads'): a head that only training uses (the
opponent-reply head, `ModelConfig.reply_head`) is left in the file, so such a model plays as one without it.

`FusedModel` has what the search and the players use of a network: `cfg`, `provenance`, `predict`. How it
runs (its DSP cores, the kernels' instruction set, Winograd or direct 3x3 convs) is the `Runtime` it is built
with, given to the engine once at creation: no setting of this module or of the library is process-wide.
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple

import numpy as np

from minigo_core.base import native
from minigo_core.base.runtime import AUTO, DEFAULT_RUNTIME, ISAS, Runtime
from minigo_core.nn import modelfile
from minigo_core.nn.modelfile import ModelConfig

BN_EPS = 1e-5

_F32P, _VP, _I = ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int
# The C functions of csrc/infer_capi.h, in its order: (restype, argtypes). Keep the two in step. The self-play
# engine library `_engine` exports the same functions (its table, search/engine.py's, starts with this one).
INFER_FUNCTIONS: dict[str, native.Signature] = {
    "mg_fused_create": (_VP, [_I, _I, _I, _I, _I, ctypes.POINTER(_F32P), ctypes.POINTER(_F32P),
                              _F32P, _F32P, _F32P, _F32P, _F32P, ctypes.c_float, _I, _I, _I,
                              ctypes.c_char_p, _I]),
    "mg_fused_set_gpool": (_I, [_VP, _I, _I, _F32P, _F32P, ctypes.c_char_p, _I]),
    "mg_fused_set_aux": (_I, [_VP, _F32P, ctypes.c_float, _F32P, ctypes.c_float, ctypes.c_char_p, _I]),
    "mg_fused_set_value_pool": (_I, [_VP, _I, _F32P, _F32P, _F32P, ctypes.c_char_p, _I]),
    "mg_fused_run_aux": (_I, [_VP, _VP, _I, _I, _I, _F32P, _F32P, _F32P, _F32P]),
    "mg_fused_run": (_I, [_VP, _VP, _I, _I, _I, _F32P, _F32P]),
    "mg_fused_destroy": (None, [_VP]),
    "mg_isa_supported": (_I, [_I]),
    "mg_widest_isa": (_I, []),
    "mg_cpu_has_avx2": (_I, []),
}  # fmt: skip

LIBRARY = native.Library(
    "minigo_core.nn.dsp",
    "_infer",
    INFER_FUNCTIONS,
    hint="or use the torch backend (model.backend: torch)",
)


def lib() -> ctypes.CDLL:
    """The loaded `_infer` library (loaded on first use)."""
    return native.load(LIBRARY)


# The kernels' instruction sets (base/runtime.py's ISAS) by number; every path has the same loop structure
# and gives the same floats in the fused network (each multiply-add one FMA, in the same order). "auto" is the
# widest the CPU runs; "portable16" (the portable code at AVX-512's width: 16 lanes, 24 accumulators) is never
# chosen by "auto": it lets the AVX-512 path's tiling run (in tests) on CPUs without AVX-512.
WIDEST_FIRST = (2, 1, 0, 3)


def isa_number(isa: str | int) -> int:
    """0, 1, 2, 3 for "portable", "avx2", "avx512", "portable16" (or the number); else ValueError."""
    if isinstance(isa, str) and isa in ISAS:
        return ISAS.index(isa)
    if isinstance(isa, int) and not isinstance(isa, bool) and 0 <= isa < len(ISAS):
        return int(isa)
    raise ValueError(f"unknown instruction set {isa!r}: use one of {', '.join(ISAS)}")


def supported_isas(handle: ctypes.CDLL | None = None) -> list[str]:
    """The kernel instruction sets this CPU runs, widest first (portable16 last)."""
    h = handle or lib()
    return [ISAS[n] for n in WIDEST_FIRST if h.mg_isa_supported(n)]


def resolve_isa(isa: str, handle: ctypes.CDLL | None = None) -> int:
    """The number of a runtime's instruction set: "auto" the widest this CPU runs; ValueError for one it
    cannot run."""
    h = handle or lib()
    if isa == AUTO:
        return int(h.mg_widest_isa())
    n = isa_number(isa)
    if not h.mg_isa_supported(n):
        runs = ", ".join(supported_isas(h))
        raise ValueError(f"this CPU cannot run the {ISAS[n]} kernels; it runs: {runs}")
    return n


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def fold(tensors: dict[str, np.ndarray], cfg: ModelConfig) -> dict[str, Any]:
    """BN folded into each convolution, in float64: w' = w * g/sqrt(var+eps), b' = beta - mean * g/sqrt(...).

    Returns the engine's weights: `convs` [(w (K,C,R,R), b (K))] in network order, the heads in the
    engine's layout (policy weights in NHWC-flatten order) and `gpool` [(block, c, dense weight transposed
    (3c, F - c), bias)] for the blocks with a global pooling bias. With `cfg.value_pool`, `value_w1t` is
    (3C, fc) and the last conv (the value head's) has C output channels; the creation call takes AlphaGo
    Zero's shapes, so `value_w1t_create` is a (N*N, fc) placeholder of zeros for it.
    """
    names = ["conv3_initial"]
    for b in range(cfg.blocks):
        names += [f"blocks.{b}.conv1", f"blocks.{b}.conv2"]
    names += ["conv1_policy", "conv1_value"]
    convs = []
    for name in names:
        g = tensors[f"{name}.bn.weight"].astype(np.float64)
        scale = g / np.sqrt(tensors[f"{name}.bn.running_var"].astype(np.float64) + BN_EPS)
        w = tensors[f"{name}.conv.weight"].astype(np.float64) * scale[:, None, None, None]
        b = tensors[f"{name}.bn.bias"].astype(np.float64) - tensors[f"{name}.bn.running_mean"] * scale
        convs.append((_f32(w), _f32(b)))
    hw = cfg.board_size * cfg.board_size
    # policy_fc reads the (2, N, N) head output in NCHW order; the engine keeps NHWC (N, N, 2)
    pw = tensors["policy_fc.weight"].reshape(hw + 1, 2, hw).transpose(2, 1, 0).reshape(2 * hw, hw + 1)
    return {
        "convs": convs,
        "policy_wt": _f32(pw),
        "policy_b": _f32(tensors["policy_fc.bias"]),
        "value_w1t": _f32(tensors["value_fc1.weight"].T),
        "value_w1t_create": np.zeros((hw, cfg.fc_width), np.float32)
        if cfg.value_pool
        else _f32(tensors["value_fc1.weight"].T),
        "value_b1": _f32(tensors["value_fc1.bias"]),
        "value_w2": _f32(tensors["value_fc2.weight"].reshape(-1)),
        "value_b2": float(tensors["value_fc2.bias"].reshape(-1)[0]),
        "gpool": [
            (
                b,
                cfg.gpool_channels,
                _f32(tensors[f"blocks.{b}.gpool_fc.weight"].T),
                _f32(tensors[f"blocks.{b}.gpool_fc.bias"]),
            )
            for b in cfg.gpool_blocks()
        ],
    }


class Heads(NamedTuple):
    """Every head of a batch, the view of the player to move: move probabilities (B, N*N+1), values (B,) in
    [-1, 1], and with the auxiliary heads the expected owner of each point (B, N*N) in [-1, 1] (1: the
    mover's) and the final score margin in points (B,); None for both in a model without them."""

    policy: np.ndarray
    value: np.ndarray
    ownership: np.ndarray | None
    score: np.ndarray | None


def _ptr(a: np.ndarray) -> Any:
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


class FusedModel:
    """A network for inference only: `predict(planes) -> (probabilities, values)`; no torch.

    `library`: a loaded library with the fused network's C interface (infer_capi.h), default `_infer`; the
    self-play engine builds its network in its own library (`handle` is what its C functions take).
    `runtime`: how the engine runs (its `threads` DSP cores, `isa`, `winograd`), fixed at creation; `isa` is
    the instruction set it resolved to.
    """

    backend = "fused"

    def __init__(
        self,
        cfg: ModelConfig,
        tensors: dict[str, np.ndarray],
        provenance: dict | None = None,
        library: ctypes.CDLL | None = None,
        runtime: Runtime = DEFAULT_RUNTIME,
    ) -> None:
        self.cfg = cfg
        self.provenance = dict(provenance or {})
        self.runtime = runtime
        w = fold(tensors, cfg)
        conv_w = (ctypes.POINTER(ctypes.c_float) * len(w["convs"]))(*[_ptr(cw) for cw, _ in w["convs"]])
        conv_b = (ctypes.POINTER(ctypes.c_float) * len(w["convs"]))(*[_ptr(cb) for _, cb in w["convs"]])
        err = ctypes.create_string_buffer(512)
        self._lib = library if library is not None else lib()
        isa = resolve_isa(runtime.isa, self._lib)
        self.isa = ISAS[isa]
        handle = self._lib.mg_fused_create(
            cfg.board_size, cfg.planes, cfg.filters, cfg.blocks, cfg.fc_width, conv_w, conv_b,
            _ptr(w["policy_wt"]), _ptr(w["policy_b"]), _ptr(w["value_w1t_create"]), _ptr(w["value_b1"]),
            _ptr(w["value_w2"]), w["value_b2"], runtime.threads, isa, runtime.winograd, err, len(err),
        )  # fmt: skip
        if not handle:
            raise ValueError(f"cannot build the inference engine: {err.value.decode(errors='replace')}")
        self._handle = ctypes.c_void_p(handle)
        for block, c, wt, b in w["gpool"]:
            if self._lib.mg_fused_set_gpool(self._handle, block, c, _ptr(wt), _ptr(b), err, len(err)) != 0:
                raise ValueError(f"cannot build the inference engine: {err.value.decode(errors='replace')}")
        if cfg.value_pool:
            vw, vb = w["convs"][-1]
            code = self._lib.mg_fused_set_value_pool(
                self._handle, cfg.value_channels, _ptr(vw), _ptr(vb), _ptr(w["value_w1t"]), err, len(err)
            )
            if code != 0:
                raise ValueError(f"cannot build the inference engine: {err.value.decode(errors='replace')}")
        self.has_aux = bool(cfg.aux_heads) and "ownership_conv.weight" in tensors
        if self.has_aux:
            self._aux = (  # kept alive while the engine holds them (it copies them, but cheaply so)
                _f32(tensors["ownership_conv.weight"].reshape(-1)),
                float(tensors["ownership_conv.bias"].reshape(-1)[0]),
                _f32(tensors["score_fc.weight"].reshape(-1)),
                float(tensors["score_fc.bias"].reshape(-1)[0]),
            )
            own_w, own_b, score_w, score_b = self._aux
            code = self._lib.mg_fused_set_aux(
                self._handle, _ptr(own_w), own_b, _ptr(score_w), score_b, err, len(err)
            )
            if code != 0:
                raise ValueError(f"cannot build the inference engine: {err.value.decode(errors='replace')}")
        self.handle = self._handle
        self._moves = cfg.board_size * cfg.board_size + 1

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.mg_fused_destroy(handle)
            self._handle = None

    def _input(self, x: np.ndarray) -> np.ndarray:
        """`x` checked and made contiguous: (B, planes, N, N), uint8 or float32."""
        n = self.cfg.board_size
        if x.ndim == 3:
            x = x[None]
        if x.ndim != 4 or x.shape[1:] != (self.cfg.planes, n, n):
            raise ValueError(
                f"the network expects planes (B, {self.cfg.planes}, {n}, {n}) ({self.cfg.feature_set} "
                f"features, {n}x{n}), got {x.shape}"
            )
        if x.dtype != np.uint8:
            x = x.astype(np.float32, copy=False)
        return np.ascontiguousarray(x)

    def run(self, x: np.ndarray, softmax: bool) -> tuple[np.ndarray, np.ndarray]:
        """(B, planes, N, N) uint8 or float32 -> (policy (B, N*N+1) probabilities or logits, value (B,))."""
        x = self._input(x)
        b = x.shape[0]
        policy = np.empty((b, self._moves), np.float32)
        value = np.empty(b, np.float32)
        code = self._lib.mg_fused_run(self._handle, x.ctypes.data, int(x.dtype == np.uint8), b, int(softmax),
                                      _ptr(policy), _ptr(value))  # fmt: skip
        if code != 0:
            raise RuntimeError("the fused inference network failed")
        return policy, value

    def predict_all(self, planes: np.ndarray) -> Heads:
        """Every head for uint8 or float32 planes (B, planes, N, N): the move probabilities and values, and
        for a model with the auxiliary heads its ownership and score (`Heads`; None without them)."""
        x = self._input(planes)
        b, hw = x.shape[0], self.cfg.board_size**2
        policy = np.empty((b, self._moves), np.float32)
        value = np.empty(b, np.float32)
        own = np.empty((b, hw), np.float32) if self.has_aux else None
        score = np.empty(b, np.float32) if self.has_aux else None
        code = self._lib.mg_fused_run_aux(
            self._handle, x.ctypes.data, int(x.dtype == np.uint8), b, 1, _ptr(policy), _ptr(value),
            None if own is None else _ptr(own), None if score is None else _ptr(score),
        )  # fmt: skip
        if code != 0:
            raise RuntimeError("the fused inference network failed")
        if own is None or score is None:
            return Heads(policy, value, None, None)
        # the ownership head's logits -> the expected owner, 2 * sigmoid - 1 = tanh(logit / 2); the score head
        # predicts the margin / N*N
        return Heads(policy, value, np.tanh(own / 2.0).astype(np.float32), (score * hw).astype(np.float32))

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint8 (B, planes, N, N) -> (move probabilities (B, N*N+1), values (B,)), float32."""
        return self.run(planes, True)

    def logits(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B, planes, N, N) -> (policy logits (B, N*N+1), values (B,)), float32."""
        return self.run(x, False)


def load(url: str, runtime: Runtime = DEFAULT_RUNTIME) -> FusedModel:
    """Read the model file at `url` (no torch for format 2) into a FusedModel that runs as `runtime` says."""
    f = modelfile.read(url)
    return FusedModel(f.config, f.tensors, f.provenance, runtime=runtime)
