"""Trust nothing found on the shared filesystem: no code execution from model files, no shell injection.

Anyone who can write to the run directory can plant files there. A model file is loaded without unpickling
arbitrary objects, so a planted pickle that would run code is refused and never runs; any damaged model file
is refused with an error naming it. No config value reaches a shell unquoted: every path the workflow puts
into a shell command is quoted (`:q`); that a run root full of spaces and shell metacharacters then plans
and runs under Snakemake is tests/e2e/test_hostile_root.py.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import pickle
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
import torch
import yaml

from minigo_core.nn import fused, model

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------ model files
class RunsCode:
    """Unpickling this object runs a shell command (the classic malicious-pickle payload)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


class RunsPython:
    """Unpickling this object calls `exec` on Python source."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __reduce__(self):
        return (exec, (self.source,))


def good_model(tmp_path: Path) -> tuple[Path, dict]:
    """A good model, and the payload of the same model in format version 1 (a `torch.save` zip, the format
    a planted pickle would imitate; refused since no model file is unpickled)."""
    cfg = model.ModelConfig(board_size=5, blocks=1, filters=8, fc_width=8, feature_set="agz")
    path = tmp_path / "good.safetensors"
    net = model.random_model(cfg, seed=1)
    model.save_model(str(path), net, {"generation": 0})
    payload = {"format": model.MODEL_FORMAT, "format_version": 1, "config": cfg.to_dict(),
               "provenance": {"generation": 0}, "state_dict": net.state_dict()}  # fmt: skip
    buf = io.BytesIO()
    torch.save(payload, buf)
    v1 = tmp_path / "good_v1.pt"
    v1.write_bytes(buf.getvalue())
    with pytest.raises(model.ModelFileError, match="torch.save zip.*never unpickles a model file"):
        model.load_model(str(v1), backend="torch")  # even a clean version-1 file
    return path, payload


def malicious_files(tmp_path: Path, marker: Path) -> dict[str, bytes]:
    """Model files whose loading would create `marker` if anything unpickled them."""
    _, payload = good_model(tmp_path)
    shell = RunsCode(f"touch {shlex.quote(str(marker))}")
    python = RunsPython(f"open({str(marker)!r}, 'w').write('pwned')")
    files = {}
    for name, evil in (("system", shell), ("exec", python)):
        # A real MiniGo model (right format tag, config and weights) with the payload tucked into provenance.
        buf = io.BytesIO()
        torch.save({**payload, "provenance": {"note": evil}}, buf)
        files[f"torch_zip_{name}_in_provenance"] = buf.getvalue()
        buf = io.BytesIO()
        torch.save(evil, buf)  # the whole file is the payload
        files[f"torch_zip_{name}_top_level"] = buf.getvalue()
        buf = io.BytesIO()
        torch.save(payload, buf, _use_new_zipfile_serialization=False)  # legacy format, payload appended
        files[f"torch_legacy_{name}"] = pickle.dumps(evil) + buf.getvalue()
        files[f"raw_pickle_{name}"] = pickle.dumps(evil, protocol=2)
    return files


def test_planted_malicious_model_is_refused_and_never_runs(tmp_path, monkeypatch):
    def unpickled(*args, **kwargs):
        raise AssertionError("a model file was passed to torch.load")

    monkeypatch.setattr(torch, "load", unpickled)
    marker = tmp_path / "PWNED"
    # The payloads are live: unpickling them with plain pickle does create the marker.
    pickle.loads(pickle.dumps(RunsCode(f"touch {shlex.quote(str(marker))}")))
    assert marker.exists(), "the test payload does not work; the test would prove nothing"
    marker.unlink()

    for name, data in malicious_files(tmp_path, marker).items():
        path = tmp_path / f"gen0001_{name}.pt"
        path.write_bytes(data)
        with pytest.raises(model.ModelFileError) as info:
            model.load_model(str(path), backend="torch")
        assert str(path) in str(info.value), f"{name}: the error does not name the file: {info.value}"
        assert not marker.exists(), f"loading {name} ran the planted code"


def test_malicious_model_refused_by_every_command(tmp_path):
    """The commands that read models refuse the planted file: exit non-zero, one clear line, no code run."""
    marker = tmp_path / "PWNED"
    evil = tmp_path / "gen0000.pt"
    evil.write_bytes(malicious_files(tmp_path, marker)["torch_zip_system_in_provenance"])
    config = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    config["root"] = str(tmp_path / "run")
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(yaml.safe_dump(config))
    game = tmp_path / "game00000.arrow"
    commands = {
        "selfplay": ["selfplay", "--config", str(cfg_path), "--model", str(evil), "--generation", "0",
                     "--game", "0", "--out", str(game)],
        "gtp": ["gtp", "--model", str(evil)],
        "inspect": ["inspect", str(evil)],
        "evaluate": ["evaluate", "--config", str(cfg_path), "--player", str(evil), "--opponent", "random",
                     "--games", "1", "--out", str(tmp_path / "eval.json")],
    }  # fmt: skip
    procs = {
        name: subprocess.Popen([PYTHON, "-m", "minigo_core.cli", *argv], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
        for name, argv in commands.items()
    }  # fmt: skip
    problems = []
    for name, proc in procs.items():
        _, err_bytes = proc.communicate(b"protocol_version\nquit\n", timeout=180)
        err = err_bytes.decode(errors="replace")
        if proc.returncode == 0:
            problems.append(f"minigo {name} accepted a malicious model file (exit 0): {err[-1000:]}")
        elif str(evil) not in err:
            problems.append(f"minigo {name}: the error does not name the file:\n{err[-1500:]}")
        elif "Traceback" in err:
            problems.append(f"minigo {name}: a traceback instead of a clear message:\n{err[-1500:]}")
    assert not marker.exists(), "a command ran code planted in a model file"
    assert not game.exists() and not (tmp_path / "eval.json").exists()
    assert not problems, "\n".join(problems)


def _save_payload(path: Path, payload) -> Path:
    buf = io.BytesIO()
    torch.save(payload, buf)
    path.write_bytes(buf.getvalue())
    return path


def damaged_models(tmp_path: Path) -> dict[str, Path]:
    """Files named like model files that are not (valid) models."""
    good, payload = good_model(tmp_path)
    data = good.read_bytes()
    state = payload["state_dict"]
    d = tmp_path / "bad"
    d.mkdir()
    out = {
        "empty": d / "empty.pt",
        "garbage": d / "garbage.pt",
        "text": d / "text.pt",
        "truncated_half": d / "truncated_half.pt",
        "truncated_tail": d / "truncated_tail.pt",
        "zeroed_middle": d / "zeroed_middle.pt",
    }
    out["empty"].write_bytes(b"")
    out["garbage"].write_bytes(os.urandom(4096))
    out["text"].write_text("this is not a model\n")
    out["truncated_half"].write_bytes(data[: len(data) // 2])
    out["truncated_tail"].write_bytes(data[:-10])
    out["zeroed_middle"].write_bytes(data[:1000] + bytes(2000) + data[3000:])
    variants = {
        "config_mismatch_filters": {"config": {**payload["config"], "filters": 16}},
        "config_mismatch_blocks": {"config": {**payload["config"], "blocks": 2}},
        "config_mismatch_board": {"config": {**payload["config"], "board_size": 9}},
        "config_mismatch_features": {"config": {**payload["config"], "feature_set": "mlperf07"}},
        "config_unknown_features": {"config": {**payload["config"], "feature_set": "x"}},
        "config_negative": {"config": {**payload["config"], "filters": -8}},
        "config_not_a_dict": {"config": [5, 1, 8]},
        "config_missing": {"config": None},
        "weights_missing": {"state_dict": dict(list(state.items())[:-1])},
        "weights_extra": {"state_dict": {**state, "extra.weight": torch.zeros(3)}},
        "weights_wrong_shape": {"state_dict": {**state, next(iter(state)): torch.zeros(2, 2)}},
        "weights_not_tensors": {"state_dict": {k: 0 for k in state}},
        "weights_not_a_dict": {"state_dict": [torch.zeros(3)]},
        "format_other": {"format": "keras"},
        "format_version_future": {"format_version": 99},
    }
    for name, changes in variants.items():
        body = {**payload, **changes}
        body = {k: v for k, v in body.items() if v is not None}
        out[name] = _save_payload(d / f"{name}.pt", body)
    out["plain_state_dict"] = _save_payload(d / "plain_state_dict.pt", state)  # a bare torch state dict
    # Format version 2 (safetensors) with a damaged header, config or weights.
    arrays = {k: v.numpy() for k, v in state.items()}
    head = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])
    header = json.loads(head["__metadata__"]["minigo"])
    st_variants = {
        "st_config_mismatch_filters": ({"config": {**header["config"], "filters": 16}}, arrays),
        "st_config_mismatch_board": ({"config": {**header["config"], "board_size": 9}}, arrays),
        "st_config_negative": ({"config": {**header["config"], "blocks": -1}}, arrays),
        "st_format_other": ({"format": "keras"}, arrays),
        "st_format_version_future": ({"format_version": 99}, arrays),
        "st_digest_missing": ({"tensors_sha256": None}, arrays),
        "st_weights_missing": ({}, dict(list(arrays.items())[:-1])),
        "st_weights_extra": ({}, {**arrays, "extra.weight": np.zeros(3, np.float32)}),
        "st_weights_wrong_shape": ({}, {**arrays, next(iter(arrays)): np.zeros((2, 2), np.float32)}),
        "st_weights_nan": ({}, {**arrays, "policy_fc.bias": np.full_like(arrays["policy_fc.bias"], np.nan)}),
        "st_weights_changed": ({}, {**arrays, "policy_fc.bias": arrays["policy_fc.bias"] + 1}),
    }
    for name, (changes, tensors) in st_variants.items():
        # the digest of the good file's weights: every variant keeps it unless it re-digests on purpose
        meta = {k: v for k, v in {**header, **changes}.items() if v is not None}
        if name in ("st_weights_missing", "st_weights_extra", "st_weights_wrong_shape", "st_weights_nan"):
            bare = safetensors.numpy.save(tensors)
            body = bare[8 + int.from_bytes(bare[:8], "little") :]
            meta["tensors_sha256"] = hashlib.sha256(body).hexdigest()
        out[name] = d / f"{name}.safetensors"
        out[name].write_bytes(safetensors.numpy.save(tensors, metadata={"minigo": json.dumps(meta)}))
    out["st_foreign"] = d / "st_foreign.safetensors"  # a safetensors file of another program
    out["st_foreign"].write_bytes(safetensors.numpy.save(arrays, metadata={"name": "bert"}))
    out["st_header_past_end"] = d / "st_header_past_end.safetensors"
    out["st_header_past_end"].write_bytes((10**9).to_bytes(8, "little") + data[8:])
    out["tensor"] = _save_payload(d / "tensor.pt", torch.zeros(5))
    out["list"] = _save_payload(d / "list.pt", [1, 2, 3])
    return out


@pytest.mark.parametrize("loader", ["torch", "fused"])
def test_damaged_model_files_are_refused_naming_the_file(tmp_path, loader):
    """Both readers (the torch DualNet and the torch-free inference engine) refuse every damaged file."""
    problems = []
    files = damaged_models(tmp_path)
    load = (lambda p: model.load_model(p, backend="torch")) if loader == "torch" else fused.load
    for name, path in files.items():
        try:
            load(str(path))
        except model.ModelFileError as exc:
            if str(path) not in str(exc):
                problems.append(f"{name}: the error does not name the file: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - name what leaked out instead of ModelFileError
            problems.append(f"{name}: load_model raised {type(exc).__name__}, not ModelFileError: {exc}")
            continue
        problems.append(f"{name}: load_model accepted a damaged model file {path}")
    assert not problems, f"{len(problems)} of {len(files)} damaged model files:\n" + "\n".join(problems)


def test_missing_model_file_is_named(tmp_path):
    path = tmp_path / "models" / "gen0042.safetensors"
    with pytest.raises(model.ModelFileError, match=re.escape(str(path))):
        model.load_model(str(path), backend="torch")


# ------------------------------------------------------------------------------------------ static scan
SOURCES = sorted([*(REPO / "minigo_core").rglob("*.py"), *(REPO / "workflow" / "scripts").rglob("*.py")])


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _keyword(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


UNPICKLERS = ("pickle.load", "pickle.loads", "marshal.load", "marshal.loads", "dill.load", "dill.loads",
              "cloudpickle.load", "cloudpickle.loads", "joblib.load", "shelve.open")  # fmt: skip


def unsafe_calls(source: str, filename: str) -> list[str]:
    """Calls that deserialise arbitrary objects or hand strings to a shell/interpreter."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        where = f"{filename}:{node.lineno}: {name}(...)"
        weights_only = _keyword(node, "weights_only")
        safe_torch = isinstance(weights_only, ast.Constant) and weights_only.value is True
        if name == "torch.load" and not safe_torch:
            found.append(f"{where} without weights_only=True")
        elif name in UNPICKLERS:
            found.append(f"{where} unpickles arbitrary objects")
        elif name in ("np.load", "numpy.load"):
            allow = _keyword(node, "allow_pickle")
            if allow is not None and not (isinstance(allow, ast.Constant) and allow.value is False):
                found.append(f"{where} with allow_pickle")
        elif name == "yaml.load":
            loader = _keyword(node, "Loader")
            if loader is None or not _dotted(loader).endswith(("SafeLoader", "CSafeLoader")):
                found.append(f"{where} without a safe loader (use yaml.safe_load)")
        elif name in ("yaml.unsafe_load", "yaml.full_load", "os.system", "os.popen", "eval", "exec"):
            found.append(f"{where} runs a string")
        elif name.startswith("subprocess.") or name in ("Popen", "run", "check_call", "check_output"):
            shell = _keyword(node, "shell")
            if shell is not None and not (isinstance(shell, ast.Constant) and shell.value is False):
                found.append(f"{where} with shell=True")
    return found


def test_scanner_finds_unsafe_calls():
    """The scan below can fail: it flags each unsafe pattern."""
    bad = (
        "import torch, pickle, yaml, os, subprocess, numpy as np\n"
        "torch.load(f)\ntorch.load(f, weights_only=False)\npickle.loads(b)\nnp.load(f, allow_pickle=True)\n"
        "yaml.load(s)\nos.system(c)\neval(s)\nsubprocess.run(c, shell=True)\n"
        "torch.load(f, weights_only=True)\nyaml.load(s, Loader=yaml.SafeLoader)\nnet.eval()\n"
    )
    assert len(unsafe_calls(bad, "bad.py")) == 8


def test_library_never_deserialises_arbitrary_objects_or_runs_strings():
    assert SOURCES, "no sources found"
    found = [hit for path in SOURCES for hit in unsafe_calls(path.read_text(), str(path.relative_to(REPO)))]
    assert not found, "unsafe calls:\n" + "\n".join(found)


# ------------------------------------------------------------------------------------------ shell quoting
RULES = sorted((REPO / "workflow" / "rules").glob("*.smk")) + [REPO / "Snakefile"]
# Placeholders in shell commands that may stay unquoted, with the reason. Each holds several shell words
# built from integers and shlex.quote'd strings (workflow/rules/common.smk, minigo_core/pipeline/srun.py).
UNQUOTED_OK = {
    "MINIGO": "f'{shlex.quote(PYTHON)} -m minigo_core.cli'",
    "params.minigo": "MINIGO (above)",
    "params.launcher": "pipeline/srun.py train_launcher(): shlex.quote(resources.mpi) and integers",
    "params.ranks": "pipeline/srun.py ranks_option(): '--ranks' and an integer",
}


def shell_commands(text: str) -> list[str]:
    """The string literals of every `shell:` directive in a Snakefile/.smk file."""
    commands = []
    for match in re.finditer(r"^(\s*)shell:\s*\n((?:\1\s+.*\n?)+)", text, re.M):
        literals = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2))
        commands.append("".join(literals))
    return commands


def test_no_rule_puts_a_value_in_a_shell_command_unquoted():
    commands = [(path.name, cmd) for path in RULES for cmd in shell_commands(path.read_text())]
    assert len(commands) >= 5, f"found only {len(commands)} shell commands in {[p.name for p in RULES]}"
    problems = []
    for name, cmd in commands:
        for placeholder in re.findall(r"(?<!\{)\{([^{}]+)\}(?!\})", cmd):
            field, _, spec = placeholder.partition(":")
            if spec == "q" or field in UNQUOTED_OK:
                continue
            problems.append(f"{name}: {{{placeholder}}} in: {cmd}")
    assert not problems, "values reach the shell unquoted (add :q):\n" + "\n".join(problems)
