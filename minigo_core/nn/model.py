"""The AlphaGo Zero dual-head residual network, its model file, and `minigo bootstrap`.

`DualNet(cfg, backend)` runs on one of two backends with the same parameters (same names, same shapes, so a
state dict moves between them unchanged):

- `torch`: PyTorch's own operators: on the CPU oneDNN convolutions, channels_last; on a GPU after
  `net.to("cuda")` (training with `train.backend: torch` puts each rank there when torch sees CUDA).
- `dsp`: the compiled DSP-emulation kernels `minigo_core.nn.dsp.ops` (NHWC conv3x3/conv1x1 and fused
  BN+ReLU, run on a pool of worker threads standing for DSP cores, as the net's `runtime` says: its cores,
  instruction set and Winograd modes). In `eval()` mode with gradients off (what `predict` does), the whole
  network runs in one call into the extension with BN folded into the convolutions.

Model file (`{root}/models/genNNNN.safetensors`): a safetensors file with the state dict and one metadata
entry holding the format, `ModelConfig` and provenance (`minigo_core.nn.modelfile`, which reads it without
torch). Identical inputs give byte-identical files (no timestamps inside).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from minigo_core import __version__
from minigo_core.base.runtime import DEFAULT_RUNTIME, Runtime
from minigo_core.nn import fused, modelfile
from minigo_core.nn.dsp_device import require_cpu
from minigo_core.nn.gpool import global_pool_bias, pooled_value_features
from minigo_core.nn.modelfile import (  # noqa: F401  (re-exported: the model file's names live in modelfile)
    FEATURE_PLANES,
    MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
    MODEL_SUFFIX,
    ModelConfig,
    ModelFileError,
)


@dataclass(frozen=True)
class DspOptions:
    """How the dsp backend trains (`DualNet(..., dsp_options=...)`); inference (the fused net) is the same.

    `fuse_bn_sums`: each BN's batch sums come from its Winograd conv's output transform (another order of
    the same sums; see `minigo_core.nn.dsp.trunk`); False: from the BN kernels' own passes, the floats of
    the per-op reference (`minigo_core.nn.dsp.reference.forward_per_op`).
    """

    fuse_bn_sums: bool = True


BN_MOMENTUM = 0.05  # torch sense; Keras/TF momentum 0.95, as MiniGo's dual_net.py sets it
BN_EPS = 1e-5
BACKENDS = ("torch", "dsp")


class ConvBN(nn.Module):
    """conv (no bias) -> BN; the ReLU (and the residual add) are applied by the caller."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=BN_EPS, momentum=BN_MOMENTUM)


class ResidualBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN, add the skip, ReLU (conv3_residual x 2).

    With `gpool_channels` c > 0, KataGo's global pooling bias (Wu 2019) between the two convs: the first c
    channels of the first conv's output (after BN+ReLU) are pooled over the board (`global_pool_bias`) and a
    dense layer `gpool_fc` maps the 3c statistics to a bias added to each of the other channels; the second
    conv reads all the channels (the pooled ones unchanged), so the convs keep their shapes.
    """

    def __init__(self, filters: int, gpool_channels: int = 0) -> None:
        super().__init__()
        self.conv1 = ConvBN(filters, filters, 3)
        self.conv2 = ConvBN(filters, filters, 3)
        c = gpool_channels
        self.gpool_fc = nn.Linear(3 * c, filters - c) if c > 0 else None


class DualNet(nn.Module):
    """AlphaGo Zero dual-head residual network: `net(x) -> (policy_logits (B, N*N+1), value (B,))`.

    With `cfg.aux_heads`, two auxiliary heads (KataGo's ownership and score targets, trained, never used by
    the search): ownership logits per point from a 1x1 conv of the trunk (`forward_all`: (B, N*N), the
    mover's point where positive) and the final score margin / N*N from the value head's hidden layer (B,).
    With `cfg.global_pooling`, the blocks `cfg.gpool_blocks()` have a global pooling bias (`ResidualBlock`).
    With `cfg.value_pool`, KataGo's pooled value head: its 1x1 conv to `cfg.value_channels` channels, each
    pooled into (mean, scaled mean, max) for `value_fc1`, instead of AlphaGo Zero's 1-channel N*N map.
    With `cfg.reply_head`, KataGo's opponent-reply head (trained, never used by the search): a second policy
    head of the policy head's shape (`conv1_reply` 1x1 conv -> BN -> ReLU, `reply_fc`) whose logits
    (`forward_train`) predict the opponent's answer to the move the policy head predicts.
    `runtime`: how the dsp backend's kernels run (DSP cores, instruction set, Winograd modes).
    """

    def __init__(
        self,
        cfg: ModelConfig,
        backend: str = "torch",
        dsp_options: DspOptions | None = None,
        runtime: Runtime = DEFAULT_RUNTIME,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.dsp_options = dsp_options or DspOptions()
        self.runtime = runtime
        self.provenance: dict = {}
        n, f = cfg.board_size, cfg.filters
        self.conv3_initial = ConvBN(cfg.planes, f, 3)
        gpool = cfg.gpool_blocks()
        self.blocks = nn.ModuleList(
            ResidualBlock(f, cfg.gpool_channels if i in gpool else 0) for i in range(cfg.blocks)
        )
        self.conv1_policy = ConvBN(f, 2, 1)
        self.policy_fc = nn.Linear(2 * n * n, n * n + 1)
        self.conv1_value = ConvBN(f, cfg.value_channels, 1)
        self.value_fc1 = nn.Linear(cfg.value_features, cfg.fc_width)
        self.value_fc2 = nn.Linear(cfg.fc_width, 1)
        if cfg.aux_heads:
            self.ownership_conv = nn.Conv2d(f, 1, 1, bias=True)
            self.score_fc = nn.Linear(cfg.fc_width, 1)
        if cfg.reply_head:  # created last: a net without it draws the same initial weights as before
            self.conv1_reply = ConvBN(f, 2, 1)
            self.reply_fc = nn.Linear(2 * n * n, n * n + 1)
        self._fused = None
        self._fused_key: tuple = ()
        self._fused_tensors: list[torch.Tensor] = []
        self.backend = "torch"
        self.set_backend(backend)

    def set_backend(self, backend: str) -> DualNet:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
        if backend == "dsp":
            from minigo_core.nn.dsp import ops  # noqa: F401  # lazy: fail early; the torch backend needs no extension

            require_cpu("DualNet.set_backend('dsp')", *self.parameters(), *self.buffers())
        else:  # oneDNN's fast CPU path: channels_last activations and weights (no weight reorder per call)
            self.to(memory_format=torch.channels_last)
        self.backend = backend
        return self

    # ---- forward -----------------------------------------------------------------------------------------
    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 4 or x.shape[1:] != (self.cfg.planes, self.cfg.board_size, self.cfg.board_size):
            raise ValueError(
                f"DualNet expects input (B, {self.cfg.planes}, {self.cfg.board_size}, "
                f"{self.cfg.board_size}), got {tuple(x.shape)}"
            )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self._check_input(x)
        if self.backend == "dsp" and not self.training and not torch.is_grad_enabled():
            require_cpu("DualNet on the dsp backend", x)  # the fused net would copy it to the CPU silently
            return self.fused_inference()(x)
        logits, value, _, _ = self.forward_all(x)
        return logits, value

    def forward_all(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """(policy logits, value, ownership logits (B, N*N) or None, score margin / N*N (B,) or None)."""
        return self._forward(x, reply=False)[:4]

    def forward_train(self, x: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        """What training computes: `forward_all`'s four outputs, then the opponent-reply logits (B, N*N+1)
        (None without `cfg.reply_head`)."""
        return self._forward(x, reply=self.cfg.reply_head)

    def _forward(self, x: torch.Tensor, reply: bool) -> tuple[torch.Tensor | None, ...]:
        self._check_input(x)
        if self.backend == "dsp":
            h, p, v, own = self._trunk_dsp(x)
        else:
            h, p, v = self._trunk_torch(x)
            own = self.ownership_conv(h).flatten(1) if self.cfg.aux_heads else None
        return (*self.head_outputs(p, v, own), self._reply_logits(h) if reply else None)

    def _reply_logits(self, h: torch.Tensor) -> torch.Tensor:
        """The opponent-reply head's logits (B, N*N+1) from the trunk output `h` (NCHW on the torch backend,
        NHWC on the dsp one, where its 1x1 conv and BN+ReLU run on the DSP kernels like the other heads')."""
        m = self.conv1_reply
        if self.backend == "dsp":
            from minigo_core.nn.dsp import ops  # lazy: the torch backend works without the extension

            r = ops.bn_relu(
                ops.conv(h, m.conv.weight, self.runtime), m.bn, self.training, runtime=self.runtime
            )
            r = r.permute(0, 3, 1, 2)  # NCHW flatten order, as the policy features
        else:
            r = F.relu(m.bn(m.conv(h)))
        return self.reply_fc(r.flatten(1))

    def head_outputs(
        self, p: torch.Tensor, v: torch.Tensor, own: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """`forward_all`'s result from the policy features (B, 2*N*N), the value features (B, N*N; with
        `cfg.value_pool` the 3C pooled ones) and the ownership logits (or None): the heads' dense layers."""
        logits = self.policy_fc(p)
        hidden = F.relu(self.value_fc1(v))
        value = torch.tanh(self.value_fc2(hidden)).squeeze(1)
        score = self.score_fc(hidden).squeeze(1) if self.cfg.aux_heads else None
        return logits, value, own, score

    def _trunk_torch(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(trunk output NCHW, policy features (B, 2*N*N), value features (`head_outputs`)) on torch's
        operators."""
        x = x.to(torch.get_default_dtype() if not x.is_floating_point() else x.dtype)
        x = x.contiguous(memory_format=torch.channels_last)

        def conv_bn(m: ConvBN, h: torch.Tensor) -> torch.Tensor:
            return m.bn(m.conv(h))

        h = F.relu(conv_bn(self.conv3_initial, x))
        for block in self.blocks:
            r = F.relu(conv_bn(block.conv1, h))
            if block.gpool_fc is not None:
                r = global_pool_bias(block.gpool_fc, r, self.cfg.board_size, 1)
            h = F.relu(conv_bn(block.conv2, r) + h)
        p = F.relu(conv_bn(self.conv1_policy, h)).flatten(1)
        v = F.relu(conv_bn(self.conv1_value, h))
        if self.cfg.value_pool:
            return h, p, pooled_value_features(v, self.cfg.board_size, 1)
        return h, p, v.flatten(1)

    def _trunk_dsp(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The same on the DSP-emulation kernels, and the ownership logits (or None); the trunk output is
        NHWC. The trunk and the heads' inputs are one autograd Function each (`minigo_core.nn.dsp.trunk`,
        `.heads`); `minigo_core.nn.dsp.reference.forward_per_op` is the per-op reference they are tested
        against."""
        from minigo_core.nn.dsp import heads, trunk  # lazy: the torch backend works without the extension

        h = trunk.trunk(self, dsp_input(x), self.training, fuse_bn_sums=self.dsp_options.fuse_bn_sums)
        p, v, own = heads.heads(self, h, self.training)
        return h, p, v, own

    def fused_inference(self):  # -> minigo_core.nn.dsp.ops.FusedNet
        """The BN-folded whole-network inference engine of the dsp backend, rebuilt when parameters change."""
        from minigo_core.nn.dsp import ops  # lazy: the torch backend works without the compiled extension

        # cheap staleness check (a few microseconds): every in-place update (optimizer step, load_state_dict,
        # BN running stats) bumps a tensor's version counter; a replaced tensor changes its data pointer; a
        # new `runtime` builds the engine again too
        if self._fused is not None:
            key = (self.runtime, *((t._version, t.data_ptr()) for t in self._fused_tensors))
            if key == self._fused_key:
                return self._fused
        self._fused_tensors = [*self.parameters(), *self.buffers()]
        self._fused = ops.FusedNet(self)
        self._fused_key = (self.runtime, *((t._version, t.data_ptr()) for t in self._fused_tensors))
        return self._fused

    @torch.no_grad()
    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint8 planes (B, P, N, N) -> (move probabilities float32 (B, N*N+1), values float32 (B,)).

        Runs in eval mode without gradients; the dsp backend uses the fused one-call inference path, the torch
        backend runs on the device of the net's parameters (a GPU after `net.to("cuda")`).
        """
        if self.training:
            self.eval()
        planes = np.ascontiguousarray(planes)
        if planes.ndim == 3:
            planes = planes[None]
        n = self.cfg.board_size
        if planes.ndim != 4 or planes.shape[1:] != (self.cfg.planes, n, n):
            raise ValueError(
                f"predict expects planes (B, {self.cfg.planes}, {n}, {n}) ({self.cfg.feature_set} features, "
                f"{n}x{n}), got {planes.shape}"
            )
        if self.backend == "dsp":
            return self.fused_inference().predict(planes)
        x = torch.from_numpy(planes).to(self.policy_fc.weight.device).to(torch.float32)  # uint8 to the device
        logits, value, _, _ = self.forward_all(x)
        probs, value = torch.softmax(logits, dim=1).cpu(), value.cpu()
        return probs.numpy().astype(np.float32, copy=False), value.numpy().astype(np.float32, copy=False)

    @torch.no_grad()
    def predict_all(self, planes: np.ndarray) -> fused.Heads:
        """`predict` and the auxiliary heads (None without them) as `fused.FusedModel.predict_all` gives them:
        the expected owner of each point (B, N*N) and the final margin in points (B,), the mover's view."""
        if self.training:
            self.eval()
        if self.backend == "dsp":
            return self.fused_inference().predict_all(planes)
        planes = np.ascontiguousarray(planes)
        x = torch.from_numpy(planes[None] if planes.ndim == 3 else planes).to(self.policy_fc.weight.device)
        logits, value, own, score = self.forward_all(x.to(torch.float32))
        probs = torch.softmax(logits, dim=1).cpu().numpy().astype(np.float32)
        value = value.cpu().numpy().astype(np.float32)
        if own is None or score is None:
            return fused.Heads(probs, value, None, None)
        hw = self.cfg.board_size**2
        return fused.Heads(probs, value, torch.tanh(own / 2.0).cpu().numpy().astype(np.float32),
                           (score * hw).cpu().numpy().astype(np.float32))  # fmt: skip


def dsp_input(x: torch.Tensor) -> torch.Tensor:
    """The dsp backend's input: NCHW planes as floating NHWC (a no-op copy for channels_last input)."""
    if not x.is_floating_point():
        x = x.to(torch.get_default_dtype())
    return x.permute(0, 2, 3, 1).contiguous()


# ---- model files --------------------------------------------------------------------------------------
def state_arrays(state: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """A state dict as the numpy arrays a model file stores."""
    return {k: v.detach().to("cpu").contiguous().numpy() for k, v in state.items()}


def _state_arrays(net: DualNet) -> dict[str, np.ndarray]:
    return state_arrays(net.state_dict())


def model_bytes(net: DualNet, provenance: dict) -> bytes:
    """The model file's bytes: deterministic for identical weights, config and provenance."""
    return modelfile.encode(net.cfg, provenance, _state_arrays(net))


def save_model(url: str, net: DualNet, provenance: dict) -> None:
    """Write a model file atomically (temporary name, then rename): weights + config + provenance.

    Provenance should name generation, parent model, training data and seed; the software version is added.
    """
    modelfile.write(url, net.cfg, provenance, _state_arrays(net))
    net.provenance = {"software_version": __version__, **provenance}


def load_model(url: str, backend: str = "dsp", runtime: Runtime = DEFAULT_RUNTIME) -> DualNet:
    """Load a model file into a DualNet on `backend` (eval mode); the dsp backend's kernels run as `runtime`
    says.

    For inference only (self-play, evaluation, GTP), `minigo_core.nn.fused.load` reads the same file without
    torch.
    """
    return model_from_file(modelfile.read(url), backend, runtime)


def model_from_file(
    f: modelfile.ModelFile, backend: str = "dsp", runtime: Runtime = DEFAULT_RUNTIME, raw: bool = False
) -> DualNet:
    """A read model file (`modelfile.read`) as a DualNet, as `load_model`. `raw=True`: the raw training
    weights when the file holds them (a model trained with `train.ema_decay`), else its weights: where
    training goes on from."""
    tensors = f.raw if raw and f.raw is not None else f.tensors
    net = DualNet(f.config, backend="torch", runtime=runtime)
    state = {k: torch.from_numpy(np.array(v)) for k, v in tensors.items()}
    try:
        net.load_state_dict(state, strict=True)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise ModelFileError(
            f"model file {f.url} has weights that do not load ({exc!r}); re-create it (minigo bootstrap / "
            "minigo train) or point at another generation's model"
        ) from None
    net.provenance = dict(f.provenance)
    net.eval()
    net.set_backend(backend)
    return net


def model_digest(url: str) -> str:
    """sha256 hex digest of a model file's bytes."""
    return modelfile.digest(url)


def random_model(
    cfg: ModelConfig, seed: int, backend: str = "torch", runtime: Runtime = DEFAULT_RUNTIME
) -> DualNet:
    """A randomly initialised network (its dsp kernels run as `runtime` says); the same seed gives the same
    weights on any machine."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) % 2**63)
        net = DualNet(cfg, backend=backend, runtime=runtime)
    return net
