"""Paths and atomic writes on the shared filesystem, through fsspec.

Every artifact is written under a temporary name in its final directory and renamed into place, so a
reader never sees half a file and a killed job leaves nothing that looks finished. Temporary names
start with `.tmp-` and are ignored by every reader in the project. A write that runs out of space (ENOSPC, or
EDQUOT: a quota) removes its temporary file and raises `DiskFullError`, which names the file and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from typing import IO

import fsspec

from minigo_core.base.config import ConfigError, RunConfig

TMP_PREFIX = ".tmp-"
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class DiskFullError(OSError):
    """A write failed for want of space (ENOSPC) or quota (EDQUOT). The message names the file, says that
    nothing was left under its name, and what to do: free space, then rerun the same command."""

    def __init__(self, path: str, cause: OSError) -> None:
        super().__init__(cause.errno, os.strerror(cause.errno or errno.ENOSPC), path)
        self.path = path

    def __str__(self) -> str:
        what = "disk quota exceeded" if self.errno == errno.EDQUOT else "no space left on device"
        return (
            f"cannot write {self.path}: {what}; nothing is left under that name (its temporary file was "
            f"removed). Free space on the filesystem of {os.path.dirname(self.path) or '.'} (or raise the "
            "quota), then rerun the same command: it resumes from what was written before"
        )


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` is a write that ran out of space or quota (ENOSPC, EDQUOT)."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def disk_full_error(exc: BaseException, path: str) -> BaseException:
    """`exc` as a `DiskFullError` naming `path` when it is an out-of-space error; else `exc` itself."""
    if is_disk_full(exc) and not isinstance(exc, DiskFullError):
        return DiskFullError(path, exc)  # type: ignore[arg-type]
    return exc


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
def atomic_open(url: str, mode: str = "wb", temporary_of: str | None = None) -> Iterator[IO]:
    """Open `url` for writing under a temporary name; rename into place on success, remove on failure (an
    out-of-space failure is raised as `DiskFullError`, naming `url`).

    On a local filesystem the data is fsynced before the rename so a crash cannot leave a renamed but
    empty file. Concurrent writers of the same path each rename a complete file; the last one wins.
    `temporary_of`: the file name the temporary name is made from instead of `url`'s (for a reader that
    picks files by a word in their name, as TensorBoard does `tfevents`, and must not see a half-written one).
    """
    if "w" not in mode:
        raise ValueError(f"atomic_open is for writing, got mode {mode!r}")
    fs, path = fs_and_path(url)
    parent = os.path.dirname(path)
    tmp = temporary_name(os.path.join(parent, temporary_of) if temporary_of else path)
    try:
        if parent:
            fs.makedirs(parent, exist_ok=True)
        with fs.open(tmp, mode) as handle:
            yield handle
            handle.flush()
            fileno = getattr(handle, "fileno", None)
            if fileno is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    os.fsync(fileno())
        fs.mv(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        failure = disk_full_error(exc, path)
        if failure is not exc:
            raise failure from exc
        raise


def write_bytes(url: str, data: bytes, temporary_of: str | None = None) -> None:
    with atomic_open(url, "wb", temporary_of) as handle:
        handle.write(data)


def write_text(url: str, text: str) -> None:
    write_bytes(url, text.encode())


def read_bytes(url: str) -> bytes:
    fs, path = fs_and_path(url)
    with fs.open(path, "rb") as handle:
        return handle.read()


def read_json_lines(url: str) -> list[dict]:
    """The JSON objects of a JSON-lines file (a training job's metrics.jsonl) in order, skipping lines that
    are not one (a line cut off by a killed writer); [] when the file is missing or unreadable."""
    try:
        lines = read_bytes(url).splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def exists(url: str) -> bool:
    fs, path = fs_and_path(url)
    return fs.exists(path)


def mtime(url: str) -> float | None:
    """The file's modification time (epoch seconds), None if there is no such file."""
    fs, path = fs_and_path(url)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    value = info.get("mtime") or info.get("LastModified") or info.get("created")
    return value.timestamp() if hasattr(value, "timestamp") else (float(value) if value is not None else None)


def remove_stale_temporaries(finals: list[str]) -> list[str]:
    """Remove the temporary siblings (`temporary_name`) of the files `finals`, left by a writer that was
    killed before its rename; returns what was removed. Only for files no other process is writing now."""
    by_dir: dict[str, set[str]] = {}
    for final in finals:
        head, tail = os.path.split(final)
        by_dir.setdefault(head, set()).add(tail)
    removed = []
    for head, tails in by_dir.items():
        fs, path = fs_and_path(head)
        try:
            names = [os.path.basename(p) for p in fs.ls(path, detail=False)]
        except FileNotFoundError:
            continue
        prefixes = tuple(f"{TMP_PREFIX}{tail}." for tail in tails)
        for name in names:
            if name.startswith(prefixes):
                with contextlib.suppress(FileNotFoundError):
                    fs.rm(join(path, name))
                removed.append(join(head, name))
    return removed


def remove_temporaries_in(directory: str) -> list[str]:
    """Remove every temporary file directly in `directory`, left by a killed writer; returns what was
    removed. Only for a job that owns every file there (a training job its work directory, a window job its
    window): by Snakemake's model one job owns an output at a time, so a retry may remove what the attempt
    it replaces left, wherever that ran (another node's pid says nothing here)."""
    fs, path = fs_and_path(directory)
    try:
        names = [os.path.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)]
    except FileNotFoundError:
        return []
    removed = []
    for name in names:
        if is_temporary(name):
            with contextlib.suppress(FileNotFoundError):
                fs.rm(join(path, name))
            removed.append(join(str(directory), name))
    return removed


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


def check_root_writable(cfg: RunConfig) -> None:
    """Fail early, naming `root`, when the run directory cannot be created or written."""
    fs, path = fs_and_path(cfg.root)
    probe = join(path, f".tmp-write-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fs.makedirs(path, exist_ok=True)
        with fs.open(probe, "wb") as handle:
            handle.write(b"ok")
        fs.rm(probe)
    except Exception as exc:  # any filesystem failure means the same thing to the user
        raise ConfigError(
            f"config key 'root' = {cfg.root!r}: the run directory cannot be written ({exc}); "
            "choose a path (or fsspec URL) this user can create and write"
        ) from None
