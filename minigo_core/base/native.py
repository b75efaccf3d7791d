"""The one place that loads a native library: find the built `.so` beside its package, load it once per
process, declare its C functions from one table, check the size of every struct that crosses the boundary.

The `_C` torch extension (the DSP ops with autograd, for training) is built by torch's cpp_extension and
imported as a Python module, since its ops take and return torch tensors; every other library (`_infer`,
`_engine`, `_engine_test`) is torch-free, behind a plain C header, and loaded here with ctypes, so that
self-play, evaluation and GTP start with numpy alone, without libtorch (seconds per job) and without a build
against the Python C API.

    LIB = native.Library("minigo_core.nn.dsp", "_infer", FUNCTIONS)   # FUNCTIONS mirrors csrc/infer_capi.h
    handle = native.load(LIB)                                           # the same handle on every call

A library file older than one of the checkout's C++ sources loads with a RuntimeWarning naming both
(`warn_if_older_than_sources`): C++ edited or checked out after the build.

A struct `S` in `Library.structs` needs the C function `size_t <sizeof_prefix>_sizeof_S(void)`: the load
fails with `NativeUnavailable` when it differs from `ctypes.sizeof(S)` (a library built from other sources).

One `.so` may have several `Library` tables, each module declaring the functions it uses (the rules
library `_rules`: `game/native_board.py`'s board, `game/native_replay.py`'s replay). The file is opened once
per process; each table is declared on that one handle the first time it is loaded, and two tables that
declare one function differently are an error.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.machinery
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# the directory holding the `minigo_core` package
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LOADED: dict[tuple[str, str], ctypes.CDLL] = {}  # (package, name) -> the opened file's handle
_PATHS: dict[tuple[str, str], str] = {}  # (package, name) -> the file it was opened from
_DECLARED: set[Library] = set()  # the tables declared on their handle (by identity)
_LOCK = threading.RLock()  # one loader at a time; re-entrant for safety

# (restype, argtypes) of one C function
Signature = tuple[Any, Sequence[Any]]


class NativeUnavailable(ImportError):
    """A native library is not built, or was built from other sources than this checkout's."""


@dataclass(frozen=True, eq=False)
class Library:
    """One compiled library: where it is built, its C functions and the structs crossing its interface.

    `package`: the package the `.so` is built into ("minigo_core.search"); `name`: the extension name
    ("_engine"); `functions`: {C name: (restype, argtypes)}, the mirror of the library's C API header;
    `structs`: the ctypes Structures passed by pointer; `env`: an environment variable that may name another
    build of the library; `hint`: added to the message when it is not built.
    """

    package: str
    name: str
    functions: Mapping[str, Signature]
    structs: tuple[type[ctypes.Structure], ...] = ()
    sizeof_prefix: str = "mg"
    env: str | None = None
    hint: str = ""

    @property
    def directory(self) -> str:
        return os.path.join(_ROOT, *self.package.split("."))

    @property
    def description(self) -> str:
        return f"{self.package.replace('.', '/')}/{self.name}*.so"


def find_library(directory: str, name: str) -> str | None:
    """The built extension `name` (e.g. `_infer`) in `directory`: this Python's suffix first, else any .so."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, name + suffix)
        if os.path.exists(path):
            return path
    found = sorted(glob.glob(os.path.join(directory, name + "*.so")))
    return found[0] if found else None


def library_path(lib: Library) -> str:
    """The file `lib` loads from (`lib.env` first, if set); NativeUnavailable when it is not built."""
    override = os.environ.get(lib.env) if lib.env else None
    if override:
        return override
    path = find_library(lib.directory, lib.name)
    if path is not None:
        return path
    raise NativeUnavailable(
        f"the compiled library {lib.description} is not built in {lib.directory}; run `make setup` (or "
        "`.venv/bin/pip install --no-build-isolation -e .`, or `make engine` after editing C++) in the "
        "repository" + (f", {lib.hint}" if lib.hint else "")
    )


def loaded(lib: Library) -> ctypes.CDLL | None:
    """The handle of `lib` if this process has loaded it (this table), else None (loads nothing)."""
    return _LOADED.get((lib.package, lib.name)) if lib in _DECLARED else None


def load(lib: Library) -> ctypes.CDLL:
    """The library `lib`, loaded on the first call (under a lock) and the same handle on every later one.

    A file already opened for another table of it is not opened again: `lib`'s functions are declared on
    its handle and its structs checked, once."""
    key = (lib.package, lib.name)
    with _LOCK:
        handle = _LOADED.get(key)
        if handle is not None and lib in _DECLARED:
            return handle
        path = library_path(lib) if handle is None else _PATHS[key]
        if handle is None:
            warn_if_older_than_sources(path, source_files(lib.name))
            handle = ctypes.CDLL(path)
        _declare(handle, lib, path)
        _check_struct_sizes(handle, lib, path)
        _LOADED[key], _PATHS[key] = handle, path
        _DECLARED.add(lib)
        return handle


def libc() -> ctypes.CDLL:
    """The C library of this process (e.g. for `prctl`), loaded once, with `ctypes.get_errno` working."""
    with _LOCK:
        handle = _LOADED.get(("", "libc"))
        if handle is None:
            handle = _LOADED[("", "libc")] = ctypes.CDLL("libc.so.6", use_errno=True)
        return handle


# the `csrc` folders (under minigo_core/) each library is compiled from (setup.py); others: every folder
_SOURCE_DIRS = {
    "_rules": ("game",),
    "_infer": ("nn/dsp",),
    "_engine": ("search", "nn/dsp", "game"),
    "_engine_test": ("search", "nn/dsp", "game"),
}


def source_files(name: str = "") -> list[str]:
    """The checkout's C++ sources the library `name` (`_engine`) is compiled from (every `csrc` folder's for
    another name); none in an installed package without them."""
    dirs = _SOURCE_DIRS.get(name, ("**",))
    pattern = os.path.join(_ROOT, "minigo_core", "{}", "csrc", "*.[ch]*")
    return [f for d in dirs for f in glob.glob(pattern.format(d), recursive=True)]


def warn_if_older_than_sources(path: str, sources: Sequence[str], slack_s: float = 2.0) -> str | None:
    """Warn (RuntimeWarning) when the library file `path` is older than one of `sources` by more than
    `slack_s`: C++ edited (or checked out) after the build, so the library may not be what the sources say
    (a changed signature loads without complaint; a struct's size is checked). Returns the message, None when
    it is not older. A warning, not an error: a shared filesystem's clocks may disagree by seconds."""
    try:
        built = os.stat(path).st_mtime
        newest = max(sources, key=lambda f: os.stat(f).st_mtime, default=None)
        if newest is None or os.stat(newest).st_mtime <= built + slack_s:
            return None
    except OSError:
        return None
    message = (
        f"the compiled library {path} is older than its source {newest}: rebuild it (`make engine`, or "
        "`make setup`) or it may not be what the sources say"
    )
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    return message


def _rebuild_hint(lib: Library, path: str) -> str:
    return f"the library {path} does not match minigo_core ({lib.description}); rebuild it with `make setup`"


def _declare(handle: ctypes.CDLL, lib: Library, path: str) -> None:
    for name, (restype, argtypes) in lib.functions.items():
        try:
            fn = getattr(handle, name)
        except AttributeError:
            raise NativeUnavailable(f"{_rebuild_hint(lib, path)}: it has no function {name}") from None
        if fn.argtypes is not None and (fn.restype, list(fn.argtypes)) != (restype, list(argtypes)):
            raise ValueError(f"{path}: {name} is declared differently by two tables of {lib.description}")
        fn.restype = restype
        fn.argtypes = list(argtypes)


def _check_struct_sizes(handle: ctypes.CDLL, lib: Library, path: str) -> None:
    for struct in lib.structs:
        name = f"{lib.sizeof_prefix}_sizeof_{struct.__name__}"
        try:
            fn = getattr(handle, name)
        except AttributeError:
            raise NativeUnavailable(f"{_rebuild_hint(lib, path)}: it has no function {name}") from None
        fn.restype, fn.argtypes = ctypes.c_size_t, []
        if fn() != ctypes.sizeof(struct):
            raise NativeUnavailable(
                f"{_rebuild_hint(lib, path)}: its struct {struct.__name__} has {fn()} bytes, the ctypes "
                f"mirror {ctypes.sizeof(struct)}"
            )


def struct_sizes(lib: Library) -> dict[str, tuple[int, int]]:
    """{struct name: (the C side's size, the ctypes size)} for each struct of `lib` (loads it)."""
    handle = load(lib)
    return {
        s.__name__: (int(getattr(handle, f"{lib.sizeof_prefix}_sizeof_{s.__name__}")()), ctypes.sizeof(s))
        for s in lib.structs
    }
