"""A run root full of spaces and shell metacharacters plans and runs under Snakemake, and no job executes
any of it: every path the workflow puts into a shell command is quoted (`:q`; the static check of the rules
is tests/unit/test_untrusted.py).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def hostile_root(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "a b;touch PWNED;$(touch PWNED2)`touch PWNED3`'q\"&|*?"


def snakemake(tmp_path: Path, config: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = ["timeout", "-k", "10", str(timeout), SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"),
           "--configfile", str(config), "--directory", str(tmp_path), "--cores", "1", *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=timeout + 30)


def pwned(tmp_path: Path) -> list[str]:
    return [str(p) for p in tmp_path.rglob("PWNED*")]


def test_hostile_root_path_plans_with_every_command_quoted(tmp_path, write_config):
    root = hostile_root(tmp_path)
    config = write_config(tmp_path, root=str(root))
    proc = snakemake(tmp_path, config, "--dry-run", "--printshellcmds", timeout=180)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"snakemake --dry-run failed on root {str(root)!r}:\n{out[-4000:]}"
    commands = [line.split("Shell command:", 1)[1].strip() for line in out.splitlines()
                if line.startswith("Shell command:") and "None" not in line]  # fmt: skip
    assert len(commands) >= 5, f"the dry run printed only {len(commands)} shell commands:\n{out[-3000:]}"
    for cmd in commands:
        words = shlex.split(cmd)  # raises on unbalanced quotes
        for word in words:
            if "a b;touch" in word:
                assert str(root) in word, f"the root path was split or altered in: {cmd}\n(word {word!r})"
    assert not pwned(tmp_path), f"the dry run executed shell metacharacters from the root: {pwned(tmp_path)}"


def test_hostile_root_path_runs_for_real(tmp_path, write_config):
    """The first jobs of the tiny run (config, generation 0, one self-play job) in the hostile root."""
    root = hostile_root(tmp_path)
    config = write_config(tmp_path, root=str(root))
    target = f"{root}/games/gen0000/job00000.json"
    proc = snakemake(tmp_path, config, target, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"snakemake failed on root {str(root)!r}:\n{out[-4000:]}"
    assert Path(target).is_file() and (root / "models" / "gen0000.safetensors").is_file()
    assert Path(f"{root}/games/gen0000/game00000.arrow").is_file()
    assert not pwned(tmp_path), f"a job executed shell metacharacters from the root: {pwned(tmp_path)}"
