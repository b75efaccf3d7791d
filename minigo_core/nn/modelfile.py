"""The model file: network shape, provenance and weights in one safetensors file, readable without torch.

A model file (`{root}/models/genNNNN.safetensors`) is a standard safetensors file
(https://huggingface.co/docs/safetensors): an 8-byte header length, a JSON header, then the raw little-endian
tensor bytes. It holds

- the tensors: the network's state dict under its parameter names (float32 weights and BN statistics, int64
  `num_batches_tracked`), e.g. `conv3_initial.conv.weight` (F, planes, 3, 3): what plays and is evaluated;
- only in a model trained with `train.ema_decay` set: the same state dict again under `RAW_PREFIX`
  (`raw/conv3_initial.conv.weight`, ...), the raw training weights the next generation's training goes on
  from, while the tensors above are their exponential moving average. `ModelFile.tensors` never holds them
  (they are `ModelFile.raw`), so inference never sees them; a file either has all of them or none;
- one metadata entry, `"minigo"`: a JSON object `{"format": "minigo-model", "format_version": 2,
  "config": {board_size, blocks, filters, fc_width, feature_set}, "provenance": {...},
  "tensors_sha256": "<sha256 of the tensor bytes after the header>"}`; the digest is checked on every read, so
  a file damaged on the shared filesystem (zeroed blocks, a torn write) is refused, never silently used.

Optional features are config keys written only when on (`OMITTED_WHEN`), so a file without one has the bytes
of a file written before it existed, and a key a file lacks reads as off (`OLD_FILE_DEFAULTS`): e.g.
`reply_head` (the opponent-reply head's tensors `conv1_reply.*` and `reply_fc.*`, which training writes and
inference never reads).

Why safetensors (the `safetensors` package, a small Rust-backed library kept by Hugging Face): loading it runs
no code (a torch pickle on a shared filesystem can), it reads into numpy without torch (self-play and
evaluation jobs never import torch: `minigo_core.nn.fused`), and any safetensors tool opens the file.
Identical inputs give byte-identical files: tensors are stored in a fixed order and the metadata is one key
of sorted-key JSON.

Only format version 2 is read. Format version 1, a `torch.save` zip, was written only before the project's
first release and is refused (`ModelFileError` naming the file and what to do): no model file is ever
unpickled (docs/CONTRACTS.md, "Compatibility").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load as load_safetensors
from safetensors.numpy import save as save_safetensors

from minigo_core import __version__
from minigo_core.base.config import RunConfig
from minigo_core.data import storage
from minigo_core.game import features

MODEL_FORMAT = "minigo-model"
MODEL_FORMAT_VERSION = 2
READABLE_VERSIONS = (2,)
MODEL_SUFFIX = ".safetensors"
METADATA_KEY = "minigo"
# Input planes per feature set; must match minigo_core.game.features.num_planes (checked there).
FEATURE_PLANES = {"agz": 17, "mlperf07": 13, "ladders": 15, "tactics": 17, "passalive": 17}
_REDO = "re-create it (minigo bootstrap / minigo train) or point at another generation's model"
# What a key missing from a model file's config means: files written before the ownership and score heads
# existed have no `aux_heads` key and no such heads. Kept apart from ModelConfig's defaults on purpose, so
# that a new default never changes how an old file reads.
OLD_FILE_DEFAULTS = {"aux_heads": False, "global_pooling": False, "reply_head": False, "value_pool": False}
# Config keys written to a file only when they are not these values, so that a net without the feature has the
# bytes of a file written before the feature existed.
OMITTED_WHEN = {"global_pooling": False, "reply_head": False, "value_pool": False}
# The prefix of the raw training weights' names in a model file whose weights are their moving average
# (`train.ema_decay`); a "/" is in no torch state dict name, so they cannot clash with the network's own.
RAW_PREFIX = "raw/"


class ModelFileError(ValueError):
    """A model file is missing, truncated, corrupt or not a MiniGo model; the message names the file."""


def _num_planes(feature_set: str) -> int:
    try:
        return int(features.num_planes(feature_set))
    except (ImportError, AttributeError):
        pass
    if feature_set not in FEATURE_PLANES:
        raise ValueError(f"unknown feature set {feature_set!r}; allowed: {', '.join(FEATURE_PLANES)}")
    return FEATURE_PLANES[feature_set]


@dataclass(frozen=True)
class ModelConfig:
    """Network shape: board size N, B residual blocks of F filters, value-head width, input feature set."""

    board_size: int = 9
    blocks: int = 4
    filters: int = 32
    fc_width: int = 64
    feature_set: str = "agz"
    aux_heads: bool = False  # ownership + score heads; files written before they existed have none
    global_pooling: bool = False  # KataGo's global pooling bias in some residual blocks (`gpool_blocks`)
    reply_head: bool = False  # KataGo's opponent-reply policy head (trained only; inference never reads it)
    value_pool: bool = False  # KataGo's pooled value head (`value_channels`), not AGZ's 1-channel map

    def __post_init__(self) -> None:
        for name in ("board_size", "blocks", "filters", "fc_width"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ModelConfig.{name} must be a positive integer, got {value!r}")
        _num_planes(self.feature_set)
        if not isinstance(self.aux_heads, bool):
            raise ValueError(f"ModelConfig.aux_heads must be true or false, got {self.aux_heads!r}")
        if not isinstance(self.global_pooling, bool):
            raise ValueError(f"ModelConfig.global_pooling must be true or false, got {self.global_pooling!r}")
        for name in ("reply_head", "value_pool"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ModelConfig.{name} must be true or false, got {getattr(self, name)!r}")
        if self.global_pooling and self.filters < 4:
            raise ValueError(f"ModelConfig.global_pooling needs at least 4 filters, got {self.filters}")
        if self.value_pool and self.filters < 2:
            raise ValueError(f"ModelConfig.value_pool needs at least 2 filters, got {self.filters}")

    def gpool_blocks(self) -> tuple[int, ...]:
        """The residual blocks with a global pooling bias (none without `global_pooling`): the last block, so
        that the heads read features that saw the whole board, and every third block before it (KataGo puts
        one in about every third block of its trunk)."""
        if not self.global_pooling:
            return ()
        return tuple(i for i in range(self.blocks) if (self.blocks - 1 - i) % 3 == 0)

    @property
    def gpool_channels(self) -> int:
        """c_pool: the first filters/4 channels of a pooling block's first conv are pooled (KataGo: 1/4 to
        1/3 of the channels); the dense layer maps their 3 * c_pool statistics to a bias on the others."""
        return self.filters // 4

    @property
    def value_channels(self) -> int:
        """The value head's 1x1 conv output channels: 1 (AlphaGo Zero's head, its N*N map read by the dense
        layer) or, with `value_pool`, filters/2 (KataGo's head: 32 of a 96-filter trunk), each pooled into
        (mean, mean * (N - 14) / 10, max) for the dense layer, as the global pooling bias pools."""
        return self.filters // 2 if self.value_pool else 1

    @property
    def value_features(self) -> int:
        """The value head's dense layer's inputs: N*N, or 3 * `value_channels` with `value_pool`."""
        return 3 * self.value_channels if self.value_pool else self.board_size * self.board_size

    @property
    def planes(self) -> int:
        return _num_planes(self.feature_set)

    @property
    def num_moves(self) -> int:
        """Policy length: N*N points plus pass."""
        return self.board_size * self.board_size + 1

    @classmethod
    def from_run(cls, run_cfg: RunConfig) -> ModelConfig:
        """The model shape of a `minigo_core.base.config.RunConfig`."""
        m = run_cfg.model
        return cls(
            run_cfg.board_size, m.blocks, m.filters, m.fc_width, run_cfg.features, m.aux_heads,
            m.global_pooling, m.reply_head, m.value_pool,
        )  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """The shape a model file's config records; keys older files lack take `OLD_FILE_DEFAULTS`."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{**OLD_FILE_DEFAULTS, **{k: v for k, v in data.items() if k in names}})

    def to_dict(self) -> dict:
        """The fields, less those at their `OMITTED_WHEN` value (a file records only the features it has)."""
        return {
            k: v for k, v in dataclasses.asdict(self).items() if k not in OMITTED_WHEN or OMITTED_WHEN[k] != v
        }

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name -> shape of every tensor a model file of this shape holds (the DualNet state dict)."""
        n, f, p = self.board_size, self.filters, self.planes
        shapes: dict[str, tuple[int, ...]] = {}

        def conv_bn(name: str, c: int, k: int, r: int) -> None:
            shapes[f"{name}.conv.weight"] = (k, c, r, r)
            for stat in ("weight", "bias", "running_mean", "running_var"):
                shapes[f"{name}.bn.{stat}"] = (k,)
            shapes[f"{name}.bn.num_batches_tracked"] = ()

        conv_bn("conv3_initial", p, f, 3)
        for b in range(self.blocks):
            conv_bn(f"blocks.{b}.conv1", f, f, 3)
            conv_bn(f"blocks.{b}.conv2", f, f, 3)
            if b in self.gpool_blocks():
                c = self.gpool_channels
                shapes[f"blocks.{b}.gpool_fc.weight"] = (f - c, 3 * c)
                shapes[f"blocks.{b}.gpool_fc.bias"] = (f - c,)
        conv_bn("conv1_policy", f, 2, 1)
        shapes["policy_fc.weight"] = (n * n + 1, 2 * n * n)
        shapes["policy_fc.bias"] = (n * n + 1,)
        conv_bn("conv1_value", f, self.value_channels, 1)
        shapes["value_fc1.weight"] = (self.fc_width, self.value_features)
        shapes["value_fc1.bias"] = (self.fc_width,)
        shapes["value_fc2.weight"] = (1, self.fc_width)
        shapes["value_fc2.bias"] = (1,)
        if self.aux_heads:
            shapes["ownership_conv.weight"] = (1, f, 1, 1)
            shapes["ownership_conv.bias"] = (1,)
            shapes["score_fc.weight"] = (1, self.fc_width)
            shapes["score_fc.bias"] = (1,)
        if self.reply_head:  # the opponent-reply head: the policy head's shape
            conv_bn("conv1_reply", f, 2, 1)
            shapes["reply_fc.weight"] = (n * n + 1, 2 * n * n)
            shapes["reply_fc.bias"] = (n * n + 1,)
        return shapes


@dataclass
class ModelFile:
    """A decoded model file: shape, provenance and the weights as numpy arrays (name -> array); `raw`: the
    raw training weights (same names) when `tensors` are their moving average, else None."""

    url: str
    config: ModelConfig
    provenance: dict
    tensors: dict[str, np.ndarray]
    format_version: int
    raw: dict[str, np.ndarray] | None = None


def plain(value: Any, where: str) -> Any:
    """Check that provenance holds only plain JSON types; returns a copy with string keys."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, where) for k, v in value.items()}
    raise TypeError(
        f"{where}: {type(value).__name__} is not a plain type (None/bool/int/float/str/list/dict)"
    )


def encode(
    config: ModelConfig,
    provenance: dict,
    tensors: dict[str, np.ndarray],
    raw: dict[str, np.ndarray] | None = None,
) -> bytes:
    """The bytes of a model file (format version 2): deterministic for identical inputs. `raw`: the raw
    training weights when `tensors` are their moving average (stored under `RAW_PREFIX`); None: none."""
    every = {**tensors, **{RAW_PREFIX + k: a for k, a in (raw or {}).items()}}
    arrays = {name: np.array(a, order="C", copy=True) for name, a in sorted(every.items())}  # keeps 0-d
    bare = save_safetensors(
        arrays
    )  # the tensor bytes do not depend on the metadata: offsets count from the data start
    header = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "config": config.to_dict(),
        "provenance": {"software_version": __version__, **plain(dict(provenance), "provenance")},
        "tensors_sha256": hashlib.sha256(_data_section(bare)).hexdigest(),
    }
    return save_safetensors(
        arrays, metadata={METADATA_KEY: json.dumps(header, sort_keys=True, allow_nan=True)}
    )


def _data_section(data: bytes) -> bytes:
    return data[8 + int.from_bytes(data[:8], "little") :]


def write(
    url: str,
    config: ModelConfig,
    provenance: dict,
    tensors: dict[str, np.ndarray],
    raw: dict[str, np.ndarray] | None = None,
) -> None:
    """Write a model file atomically (temporary name, then rename); `raw` as for `encode`."""
    data = encode(config, provenance, tensors, raw)
    with storage.atomic_open(url, "wb") as handle:
        handle.write(data)


def read_bytes(url: str) -> bytes:
    try:
        return storage.read_bytes(url)
    except FileNotFoundError:
        raise ModelFileError(
            f"model file {url} does not exist; check the path or run `minigo bootstrap`"
        ) from None
    except IsADirectoryError:
        raise ModelFileError(f"model file {url} is a directory, not a model file") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {url}: {exc}") from exc


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(url: str) -> str:
    """sha256 hex digest of a model file's bytes."""
    return sha256(read_bytes(url))


def _corrupt(url: str, data: bytes, exc: BaseException) -> ModelFileError:
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return ModelFileError(
        f"model file {url} is corrupt, truncated or not a MiniGo model ({len(data)} bytes; "
        f"{type(exc).__name__}: {first}); {_REDO}"
    )


def _decode_v2(url: str, data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    if len(data) < 8:
        raise ModelFileError(f"model file {url} is truncated or empty ({len(data)} bytes); {_REDO}")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8 or n < 2:
        raise ModelFileError(f"model file {url} is truncated or not a MiniGo model (header of {n} bytes in a "
                             f"{len(data)}-byte file); {_REDO}")  # fmt: skip
    try:
        raw = json.loads(data[8 : 8 + n])
        meta = json.loads(raw["__metadata__"][METADATA_KEY])
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"file {url} is not a MiniGo model file (no '{METADATA_KEY}' metadata in its "
                             f"header: {type(exc).__name__}); {_REDO}") from None  # fmt: skip
    if not isinstance(meta, dict):
        raise ModelFileError(f"file {url} is not a MiniGo model file (its '{METADATA_KEY}' metadata is not a "
                             f"JSON object); {_REDO}")  # fmt: skip
    want = meta.get("tensors_sha256")
    if not isinstance(want, str) or hashlib.sha256(_data_section(data)).hexdigest() != want:
        raise ModelFileError(f"model file {url} is damaged: its weights do not match the digest in its "
                             f"header (a torn write or a corrupted block on storage); {_REDO}")  # fmt: skip
    try:
        tensors = load_safetensors(data)
    except (SafetensorError, ValueError, TypeError) as exc:
        raise _corrupt(url, data, exc) from None
    return meta, tensors


def decode(url: str, data: bytes) -> ModelFile:
    """Decode and check a model file's bytes; raises ModelFileError naming `url` and what to do."""
    if data[:4] == b"PK\x03\x04":  # a zip: format version 1 (torch.save), never unpickled
        raise ModelFileError(
            f"model file {url} is a torch.save zip (model format version 1, from before the first release); "
            f"this software ({__version__}) reads only safetensors model files (format version 2) and never "
            f"unpickles a model file; {_REDO}"
        )
    meta, tensors = _decode_v2(url, data)
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"file {url} is not a MiniGo model file (no format '{MODEL_FORMAT}'); {_REDO}")
    version = meta.get("format_version")
    if version not in READABLE_VERSIONS:
        raise ModelFileError(
            f"model file {url} has format version {version!r}; this software ({__version__}) reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}; {_REDO}"
        )
    try:
        cfg = ModelConfig.from_dict(meta["config"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"model file {url} has a bad config ({exc!r}); {_REDO}") from None
    provenance = meta.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise ModelFileError(f"model file {url} has provenance of type {type(provenance).__name__}; {_REDO}")
    raw = {k[len(RAW_PREFIX) :]: a for k, a in tensors.items() if k.startswith(RAW_PREFIX)} or None
    tensors = {k: a for k, a in tensors.items() if not k.startswith(RAW_PREFIX)}
    _check_tensors(url, cfg, tensors, "weights")
    if raw is not None:
        _check_tensors(url, cfg, raw, f"raw training weights ({RAW_PREFIX}*)")
    return ModelFile(url, cfg, dict(provenance), tensors, int(version), raw)


def _check_tensors(url: str, cfg: ModelConfig, tensors: dict[str, np.ndarray], what: str) -> None:
    """The names and shapes are the config's, and the floats finite; else ModelFileError naming `what`."""
    expected = cfg.tensor_shapes()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    wrong = [f"{k} {tuple(tensors[k].shape)} (expected {expected[k]})" for k in sorted(expected)
             if k in tensors and tuple(tensors[k].shape) != expected[k]]  # fmt: skip
    if missing or unexpected or wrong:
        parts = [f"missing {', '.join(missing[:5])}" if missing else "",
                 f"unexpected {', '.join(unexpected[:5])}" if unexpected else "",
                 f"wrong shape {', '.join(wrong[:3])}" if wrong else ""]  # fmt: skip
        raise ModelFileError(
            f"model file {url} has {what} that do not match its config {cfg.to_dict()}: "
            f"{'; '.join(p for p in parts if p)}; {_REDO}"
        )
    bad = [k for k, a in tensors.items() if a.dtype.kind == "f" and not np.isfinite(a).all()]
    if bad:
        names = ", ".join(sorted(bad)[:5])
        raise ModelFileError(f"model file {url} has non-finite {what} in {names}; {_REDO}")


def read(url: str) -> ModelFile:
    """Read and check the model file at `url` (a local path or fsspec URL) without torch (format 2)."""
    return decode(url, read_bytes(url))
