"""A wheel that works: `pip wheel .` of this checkout, installed (not editable) into a fresh venv, gives a
`minigo` that runs from a directory outside any checkout: `ladder show`, `gtp`, `evaluate` and a tiny `run`,
with the ladder tables, the workflow, the profiles and the example configs found inside the package
(`minigo_core/_project/`, base/project_files.py).

The wheel is built once per module from a copy of the checkout's files, with `--no-deps
--no-build-isolation` and MINIGO_REUSE_INPLACE_BUILD=1: the compiled libraries that `make setup` built in
place are copied into it instead of compiled again (setup.py falls back to compiling when they are missing or
older than the C++ sources). The venv has no packages of its own: a .pth file points at this test venv's
site-packages for torch, Snakemake and the rest (not at the checkout: the test checks where minigo_core was
imported from).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
# what the build needs of the checkout (PROJECT_FILES of setup.py lie in these), not the ladder's games
SOURCES = ("setup.py", "pyproject.toml", "README.md", "Snakefile", "config.yaml", "minigo_core", "config",
           "profiles", "workflow")  # fmt: skip
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info", "checks", "5x5", "9x9")


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None, **kwargs):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict, Path]:
    """(the venv's bin folder, the environment to run it with, an empty directory outside the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=IGNORED)  # copy2: keeps the libraries newer
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    _run([*build, ".", "-w", str(tmp / "dist")], source, 900, {**env, "MINIGO_REUSE_INPLACE_BUILD": "1"})
    (wheel,) = (tmp / "dist").glob("minigo_core-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, 120)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "test-venv-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    _run([*pip, "--no-deps", "--no-index", str(wheel)], tmp, 300, env)
    outside = tmp / "elsewhere"
    outside.mkdir()
    return venv / "bin", {**env, "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"}, outside


@pytest.fixture(scope="module")
def tiny_model(installed) -> Path:
    """A random 5x5 model with one block (the tiny config's board)."""
    from minigo_core.nn.model import ModelConfig, random_model, save_model

    path = installed[2] / "tiny.safetensors"
    save_model(
        str(path), random_model(ModelConfig(5, 1, 8, 8, "agz"), seed=3), {"generation": 0, "test": True}
    )
    return path


def test_the_package_comes_from_the_wheel_with_its_project_files(installed):
    bin_dir, env, outside = installed
    code = (
        "import minigo_core, minigo_core.base.project_files as p;"
        " print(minigo_core.__file__, p.project_dir())"
    )
    package, project = _run([str(bin_dir / "python"), "-c", code], outside, 60, env).stdout.split()
    assert Path(package).is_relative_to(bin_dir.parent) and not Path(package).is_relative_to(REPO)
    assert Path(project) == Path(package).parent / "_project"
    shipped = ["Snakefile", "config.yaml", "config/tiny.yaml", "config/ladder/9x9.json"]
    shipped += [
        "profiles/local/config.yaml",
        "profiles/slurm/config.yaml",
        "workflow/schemas/config.schema.yaml",
    ]
    shipped += ["workflow/rules/common.smk", "workflow/report/workflow.rst"]
    for name in shipped:
        assert (Path(project) / name).is_file(), name


def test_ladder_show_finds_the_ladder_table(installed):
    bin_dir, env, outside = installed
    out = _run([str(bin_dir / "minigo"), "ladder", "show", "--board-size", "9", "--json"], outside, 60, env)
    ladder = json.loads(out.stdout)
    assert ladder["board_size"] == 9 and ladder["anchor"] == "gnugo:10" and len(ladder["rungs"]) > 5


def test_gtp_plays_a_move(installed, tiny_model):
    bin_dir, env, outside = installed
    script = "protocol_version\ngenmove b\nquit\n"
    cmd = [str(bin_dir / "minigo"), "gtp", "--model", str(tiny_model), "--readouts", "8"]
    out = _run(cmd, outside, 120, env, input=script).stdout
    answers = [block for block in out.split("\n\n") if block.strip()]
    assert answers[0] == "= 2" and answers[1].startswith("= ") and answers[2].strip() == "="


def test_evaluate_with_the_packaged_tiny_config(installed, tiny_model):
    bin_dir, env, outside = installed
    cmd = [str(bin_dir / "minigo"), "evaluate", "--config", "config/tiny.yaml", "--player", str(tiny_model),
           "--opponent", "random", "--games", "2", "--out", "vs_random.json"]  # fmt: skip
    _run(cmd, outside, 120, env)
    results = json.loads((outside / "vs_random.json").read_text())
    assert len(results["games"]) == 2 and results["opponent"]["spec"] == "random"


@pytest.mark.slow  # 20-35 s on 2 cores
def test_a_tiny_run_from_outside_a_checkout(installed):
    bin_dir, env, outside = installed
    (project,) = (bin_dir.parent / "lib").glob("python3*/site-packages/minigo_core/_project")
    config = yaml.safe_load((project / "config" / "tiny.yaml").read_text())
    config.update(root="runs/wheel", generations=1)  # a relative root: under the caller's directory
    config["train"]["ranks"] = 1
    (outside / "wheel.yaml").write_text(yaml.safe_dump(config))
    cmd = [str(bin_dir / "minigo"), "run", "--config", "wheel.yaml", "--no-report", "--progress", "none",
           "--", "--cores", "2"]  # fmt: skip
    result = subprocess.run(cmd, cwd=outside, env=env, capture_output=True, text=True, timeout=600)
    logs = "".join(
        f"\n== {p}\n{p.read_text()[-1500:]}" for p in sorted(outside.glob("runs/wheel/logs/*/*.log"))
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:] + logs
    assert "minigo run: done" in result.stdout
    assert (outside / "runs" / "wheel" / "models" / "gen0001.safetensors").is_file()
    assert (outside / "runs" / "wheel" / "summary" / "elo.json").is_file()
