"""Runtime options travel as arguments: the DSP cores, the kernels' instruction set, the Winograd modes and
the training ranks' timeout are one `base.runtime.Runtime`, built where a command starts and handed to what
runs the kernels. These tests fail if a process-wide switch comes back: a `set_num_threads`-style function, a
`global` in the network's modules, an environment read below the command line, a `getenv` in the C++."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from minigo_core.base.runtime import (
    AUTO,
    CORES_ENV,
    ISA_ENV,
    TRAIN_TIMEOUT_ENV,
    Runtime,
    RuntimeSettingError,
    job_cores,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "minigo_core"
RUNTIME = PACKAGE / "base" / "runtime.py"
SWITCHES = {"set_num_threads", "get_num_threads", "set_winograd", "set_winograd_training", "set_isa"}
SWITCHES |= {"get_isa"}
ENV_NAMES = {ISA_ENV, TRAIN_TIMEOUT_ENV, CORES_ENV}
# The command line's edge: the only modules that build a Runtime from the environment.
EDGE = ("jobs/", "bench/", "cli.py")


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text())) for p in sorted(PACKAGE.rglob("*.py"))]


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def test_no_module_defines_a_process_wide_switch():
    found = [
        f"{_rel(p)}:{node.lineno} {node.name}"
        for p, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in SWITCHES
    ]
    assert found == [], "process-wide switches (pass a Runtime instead):\n" + "\n".join(found)


def test_the_network_and_engine_modules_keep_no_global_state():
    """No `global` statement in nn/, search/engine.py or base/runtime.py: a setting lives in the object that
    uses it."""
    paths = [*sorted((PACKAGE / "nn").rglob("*.py")), PACKAGE / "search" / "engine.py", RUNTIME]
    found = [
        f"{_rel(p)}:{node.lineno} global {', '.join(node.names)}"
        for p in paths
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Global)
    ]
    assert found == []


def _string_uses(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, value) of the string constants of a module that are not docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_the_environment_variables_are_named_in_base_runtime_only():
    """Code names $MINIGO_DSP_ISA, $MINIGO_TRAIN_TIMEOUT_S and $SLURM_CPUS_PER_TASK only in base/runtime.py
    (docstrings and messages may mention them through its constants)."""
    found = [
        f"{_rel(p)}:{line} {value!r}"
        for p, tree in _modules()
        if p != RUNTIME
        for line, value in _string_uses(tree)
        if value in ENV_NAMES
    ]
    assert found == []


def test_only_the_command_line_reads_the_environment_into_a_runtime():
    found = [
        f"{_rel(p)}:{n}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != RUNTIME and not _rel(p).startswith(EDGE)
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\b(from_environ|job_cores)\(", line)
    ]
    assert found == [], "Runtime.from_environ / job_cores below the command line:\n" + "\n".join(found)


def test_no_compiled_source_reads_the_environment():
    found = [
        f"{p.relative_to(REPO)}:{n}"
        for p in sorted(PACKAGE.rglob("*"))
        if p.suffix in (".cpp", ".h", ".cc")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\b(getenv|secure_getenv|environ)\b", line)
    ]
    assert found == [], "the C++ takes its settings as arguments:\n" + "\n".join(found)


def test_the_guards_find_what_they_look_for(tmp_path):
    """The AST checks above see a switch, a global and a non-docstring environment name."""
    tree = ast.parse(
        '"""Mentions MINIGO_DSP_ISA."""\nimport os\nX = 1\n'
        "def set_num_threads(n):\n    global X\n    X = n\n"
        'def isa():\n    """MINIGO_DSP_ISA."""\n    return os.environ.get("MINIGO_DSP_ISA")\n'
    )
    names = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert SWITCHES & set(names) == {"set_num_threads"}
    assert any(isinstance(n, ast.Global) for n in ast.walk(tree))
    assert [value for _, value in _string_uses(tree) if value in ENV_NAMES] == [ISA_ENV]


def test_a_runtime_checks_its_settings():
    rt = Runtime()
    assert (rt.threads, rt.isa, rt.winograd, rt.winograd_training) == (1, AUTO, 1, 1)
    assert Runtime(winograd=False).winograd == 0 and Runtime(winograd=True).winograd == 1
    assert rt.replace(threads=4).threads == 4 and rt.threads == 1  # frozen: a new value, this one unchanged
    with pytest.raises(AttributeError):
        rt.threads = 2  # type: ignore[misc]
    for bad in ({"threads": 0}, {"threads": 1025}, {"threads": 1.5}, {"isa": "sse9"}, {"winograd": 4}):
        with pytest.raises(RuntimeSettingError):
            Runtime(**bad)


def test_the_command_line_reads_the_isa_and_the_job_s_cores():
    assert Runtime.from_environ({ISA_ENV: "avx2"}, threads=3) == Runtime(threads=3, isa="avx2")
    assert Runtime.from_environ({ISA_ENV: ""}).isa == AUTO
    with pytest.raises(RuntimeSettingError, match=f"{ISA_ENV}='fast'"):
        Runtime.from_environ({ISA_ENV: "fast"})
    assert job_cores({CORES_ENV: "6"}) == 6
    assert job_cores({CORES_ENV: "none"}) >= 1 and job_cores({}) >= 1
