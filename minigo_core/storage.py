"""Paths and atomic writes on the shared filesystem, through fsspec.

Every artifact is written under a temporary name in its final directory and renamed into place, so a
reader never sees half a file and a killed job leaves nothing that looks finished. Temporary names
start with `.tmp-` and are ignored by every reader in the project.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Iterator
from typing import IO

import fsspec

TMP_PREFIX = ".tmp-"


def fs_and_path(url: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem for `url` and the path within it (plain paths are local files)."""
    fs, path = fsspec.core.url_to_fs(str(url))
    return fs, path


def join(root: str, *parts: str) -> str:
    root = str(root).rstrip("/")
    return "/".join([root, *[p.strip("/") for p in parts]])


def is_temporary(name: str) -> bool:
    return os.path.basename(name).startswith(TMP_PREFIX)


def temporary_name(final: str) -> str:
    """A unique temporary sibling of `final` (same directory, so the rename stays atomic)."""
    head, tail = os.path.split(final)
    return os.path.join(head, f"{TMP_PREFIX}{tail}.{os.getpid()}.{uuid.uuid4().hex[:8]}")


@contextlib.contextmanager
def atomic_open(url: str, mode: str = "wb") -> Iterator[IO]:
    """Open `url` for writing under a temporary name; rename into place on success, remove on failure.

    On a local filesystem the data is fsynced before the rename so a crash cannot leave a renamed but
    empty file. Concurrent writers of the same path each rename a complete file; the last one wins.
    """
    if "w" not in mode:
        raise ValueError(f"atomic_open is for writing, got mode {mode!r}")
    fs, path = fs_and_path(url)
    parent = os.path.dirname(path)
    if parent:
        fs.makedirs(parent, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with fs.open(tmp, mode) as handle:
            yield handle
            handle.flush()
            fileno = getattr(handle, "fileno", None)
            if fileno is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    os.fsync(fileno())
        fs.mv(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        raise


def write_bytes(url: str, data: bytes) -> None:
    with atomic_open(url, "wb") as handle:
        handle.write(data)


def write_text(url: str, text: str) -> None:
    write_bytes(url, text.encode())


def read_bytes(url: str) -> bytes:
    fs, path = fs_and_path(url)
    with fs.open(path, "rb") as handle:
        return handle.read()


def exists(url: str) -> bool:
    fs, path = fs_and_path(url)
    return fs.exists(path)


def list_files(url: str, suffix: str = "") -> list[str]:
    """Finished files in a directory (temporary names skipped), sorted, as URLs/paths like `url`."""
    fs, path = fs_and_path(url)
    if not fs.exists(path):
        return []
    names = []
    for entry in fs.ls(path, detail=False):
        base = os.path.basename(entry.rstrip("/"))
        if is_temporary(base) or not base.endswith(suffix):
            continue
        names.append(join(str(url), base))
    return sorted(names)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(url: str) -> str:
    fs, path = fs_and_path(url)
    digest = hashlib.sha256()
    with fs.open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# Layout of a run on the shared filesystem (see README "Layout of a run").
def model_path(root: str, generation: int) -> str:
    return join(root, "models", f"gen{generation:04d}.safetensors")


def games_dir(root: str, generation: int) -> str:
    return join(root, "games", f"gen{generation:04d}")


def game_path(root: str, generation: int, game: int) -> str:
    return join(games_dir(root, generation), f"game{game:05d}.arrow")


def window_dir(root: str, generation: int) -> str:
    return join(root, "window", f"gen{generation:04d}")


def shard_path(root: str, generation: int, rank: int) -> str:
    return join(window_dir(root, generation), f"shard{rank:03d}.arrow")


def window_manifest_path(root: str, generation: int) -> str:
    return join(window_dir(root, generation), "manifest.json")


def train_dir(root: str, generation: int) -> str:
    return join(root, "train", f"gen{generation:04d}")


def eval_dir(root: str, generation: int) -> str:
    return join(root, "eval", f"gen{generation:04d}")
