"""The one native loader (`minigo_core.base.native`): every ctypes library loads once, declares the functions
of its C API header, and agrees with its ctypes mirror on the size of every struct crossing the boundary."""

from __future__ import annotations

import ctypes
import os
import re
import warnings

import pytest

from minigo_core.base import native
from minigo_core.game import native_board, native_replay
from minigo_core.nn import fused
from minigo_core.search import engine, engine_test

LIBRARIES = {
    "_infer": fused.LIBRARY,
    "_rules": native_board.LIBRARY,
    "_engine": engine.LIBRARY,
    "_engine_test": engine_test.LIBRARY,
}
HEADERS = {
    "_infer": ["minigo_core/nn/dsp/csrc/infer_capi.h"],
    "_engine": ["minigo_core/nn/dsp/csrc/infer_capi.h", "minigo_core/search/csrc/engine_capi.h"],
    "_engine_test": ["minigo_core/search/csrc/engine_test_capi.h"],
    "_rules": ["minigo_core/game/csrc/rules_capi.h"],
}
# A library two modules declare functions of: the rules' board (native_board) and its replay (native_replay)
MORE_TABLES = {"_rules": [native_replay.LIBRARY]}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _available(lib: native.Library) -> ctypes.CDLL:
    try:
        return native.load(lib)
    except native.NativeUnavailable as exc:  # pragma: no cover - a checkout without `make setup`
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(exc))


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_struct_sizes_match_the_c_side(name):
    lib = LIBRARIES[name]
    _available(lib)
    sizes = native.struct_sizes(lib)
    assert set(sizes) == {s.__name__ for s in lib.structs}
    for struct, (c_size, py_size) in sizes.items():
        assert c_size == py_size, f"{name}: {struct} has {c_size} bytes in C, {py_size} in ctypes"


def test_the_engine_settings_struct_is_checked():
    assert engine.EngineSettings in engine.LIBRARY.structs
    _available(engine.LIBRARY)
    assert native.struct_sizes(engine.LIBRARY)["EngineSettings"][0] == ctypes.sizeof(engine.EngineSettings)


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_loading_twice_gives_the_same_handle(name):
    lib = LIBRARIES[name]
    first = _available(lib)
    assert native.load(lib) is first
    assert native.loaded(lib) is first


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_each_table_mirrors_its_header(name):
    """Every function a header exports is in the library's table, and the table has nothing else."""
    declared = set()
    for header in HEADERS[name]:
        with open(os.path.join(ROOT, header)) as f:
            declared |= set(re.findall(r"MG_(?:TEST_|RULES_)?API\s[^;{]*?\b(mg_\w+)\s*\(", f.read()))
    tables = [LIBRARIES[name].functions, *(t.functions for t in MORE_TABLES.get(name, []))]
    assert declared == {f for table in tables for f in table}


def test_a_missing_library_raises_a_clear_error():
    missing = native.Library("minigo_core.search", "_no_such_library", {})
    with pytest.raises(native.NativeUnavailable, match=r"_no_such_library\*\.so is not built.*make setup"):
        native.load(missing)
    assert native.loaded(missing) is None


def test_a_struct_size_mismatch_raises_a_clear_error():
    class EngineSettings(ctypes.Structure):  # two fields short of engine_capi.h's
        _fields_ = engine.EngineSettings._fields_[:-2]

    _available(engine.LIBRARY)
    odd = native.Library(
        "minigo_core.search", "_engine", {}, structs=(EngineSettings,), sizeof_prefix="mg_engine"
    )
    full, short = ctypes.sizeof(engine.EngineSettings), ctypes.sizeof(EngineSettings)
    expected = f"EngineSettings has {full} bytes, the ctypes mirror {short}"
    with pytest.raises(native.NativeUnavailable, match=expected):
        native._check_struct_sizes(native.load(engine.LIBRARY), odd, "_engine")


def test_production_library_has_no_test_entry_points():
    handle = _available(engine.LIBRARY)
    for name in ("mg_board_create", "mg_replay_examples", "mg_gumbel_improved_policy", "mg_numpy_sum"):
        assert not hasattr(handle, name), f"the production library _engine exports {name}"


def test_no_other_module_loads_a_native_library():
    """`ctypes.CDLL` (or `ctypes.cdll`, `ctypes.PyDLL`) only in minigo_core/base/native.py."""
    found = []
    for top in ("minigo_core", "tools", "workflow"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                path = os.path.join(folder, name)
                if not name.endswith(".py") or path.endswith(os.path.join("base", "native.py")):
                    continue
                with open(path) as f:
                    text = f.read()
                if re.search(r"\b(CDLL|PyDLL|cdll|pydll)\b\s*[.(]", text):
                    found.append(os.path.relpath(path, ROOT))
    assert not found, f"load native libraries through minigo_core.base.native, not in {found}"


def test_a_library_older_than_its_sources_warns_naming_both(tmp_path):
    """C++ edited (or checked out) after the build: the load warns, naming the library and the newer source
    (a changed signature would otherwise load without complaint); within the slack, or newer, it is quiet."""
    lib, source = tmp_path / "_x.so", tmp_path / "search.cpp"
    lib.write_bytes(b"")
    source.write_text("")
    os.utime(lib, (1000, 1000))
    os.utime(source, (2000, 2000))
    with pytest.warns(RuntimeWarning, match="older than its source"):
        message = native.warn_if_older_than_sources(str(lib), [str(source)])
    assert str(lib) in message and str(source) in message and "make engine" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        os.utime(source, (1001, 1001))  # within the slack (a shared filesystem's clocks)
        assert native.warn_if_older_than_sources(str(lib), [str(source)]) is None
        os.utime(lib, (3000, 3000))
        assert native.warn_if_older_than_sources(str(lib), [str(source)]) is None
        assert native.warn_if_older_than_sources(str(lib), []) is None
        assert native.warn_if_older_than_sources(str(tmp_path / "missing.so"), [str(source)]) is None


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_the_built_libraries_are_not_older_than_the_sources(name):
    """This checkout's libraries were built after its C++ last changed (else: `make engine`)."""
    sources = native.source_files(name)
    assert sources, "the checkout's C++ sources were not found"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.warn_if_older_than_sources(native.library_path(LIBRARIES[name]), sources) is None
