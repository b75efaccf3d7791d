"""Where the project's files that are not Python live: the Snakefile, `workflow/` (rules, schema, report
captions), `profiles/`, `config.yaml` and `config/` (example configs, the calibrated Elo ladders).

From a checkout (`make run`, `pip install -e .`) they are the checkout's own. A wheel (`pip install .`)
carries a copy of them inside the package, in `minigo_core/_project/` (setup.py's `build_py` copies its
PROJECT_FILES there), so an installed `minigo` finds its ladders, its workflow and its profiles with no
checkout at hand.

    project_dir()                 the checkout, or the copy in the installed package
    is_checkout()                 whether project_dir() is a checkout (runs then live in it)
    find("config/tiny.yaml")      a path as given if it exists, else the same path in project_dir()
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PACKAGED = "_project"  # the folder of the package that holds the copy in a wheel
_CHECKOUT = Path(__file__).resolve().parents[2]


def is_checkout() -> bool:
    """Whether minigo_core was imported from a checkout (the Snakefile beside the package)."""
    return (_CHECKOUT / "Snakefile").is_file() and (_CHECKOUT / "workflow").is_dir()


def project_dir() -> Path:
    """The checkout minigo_core was imported from, else the copy of its files installed with the package.
    Never raises: a missing file is reported by whoever opens it, with this folder in its path."""
    if is_checkout():
        return _CHECKOUT
    return Path(str(resources.files("minigo_core").joinpath(PACKAGED)))


def find(path: str | Path, what: str = "file") -> Path:
    """`path` when it exists (relative to the current directory), else the same relative path in
    project_dir() (`config/tiny.yaml`, `profiles/slurm` work from anywhere with an installed wheel);
    FileNotFoundError naming both places when neither exists."""
    given = Path(path)
    if given.exists():
        return given.resolve()
    if not given.is_absolute() and (project_dir() / given).exists():
        return project_dir() / given
    if given.is_absolute():
        raise FileNotFoundError(f"{what} {path} not found")
    raise FileNotFoundError(f"{what} {path} not found, neither in {Path.cwd()} nor in {project_dir()}")
