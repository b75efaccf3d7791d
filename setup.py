"""Builds the five compiled libraries of minigo_core against the installed torch.

- `minigo_core.nn.dsp._C`: the DSP-emulation kernels as torch ops (training, and the dsp backend of DualNet),
  built by torch's cpp_extension and imported as a Python module;
- `minigo_core.nn.dsp._infer`: the same kernels' fused inference network behind a plain C interface
  (`csrc/infer_capi.h`), with no torch or Python dependency, loaded with ctypes by `minigo_core.nn.fused`
  (self-play and evaluation never import torch);
- `minigo_core.game._rules`: the compiled Go rules (`game/csrc`: the board, the replay of a game into
  training examples) behind `game/csrc/rules_capi.h`, loaded by `minigo_core.game.native_replay` (the window)
  and `minigo_core.game.native_board` (tests, the rules benchmark);
- `minigo_core.search._engine`: the compiled self-play engine (search, many games per process) with the
  rules' board.cpp and the fused inference network inside, behind a plain C interface (`csrc/engine_capi.h`)
  loaded by `minigo_core.search.engine`;
- `minigo_core.search._engine_test`: the search's arithmetic behind test entry points
  (`csrc/engine_test_capi.h`), loaded only by `minigo_core.search.engine_test` (tests).

The ctypes libraries are loaded by `minigo_core.base.native`. Install with
`pip install --no-build-isolation -e .` so all are compiled once, at install time, against torch==2.13.0
already in the environment (never on first import inside a job).
"""

import glob
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

CSRC = os.path.join("minigo_core", "nn", "dsp", "csrc")
# -ffp-contract=off: no multiply-add is fused unless the code says so (FMA), so every ISA build rounds alike
CXX_FLAGS = ["-O3", "-g0", "-std=c++20", "-fno-math-errno", "-ffp-contract=off", "-Wno-psabi", "-pthread"]

ext_modules = []
cmdclass = {}
if os.path.exists(os.path.join(CSRC, "kernels.cpp")):
    from torch.utils.cpp_extension import BuildExtension, CppExtension

    kernels = [os.path.join(CSRC, f) for f in ("kernels.cpp", "winograd_train.cpp")]
    ext_modules.append(
        CppExtension(
            "minigo_core.nn.dsp._C",
            [os.path.join(CSRC, "ops.cpp")],
            extra_compile_args=CXX_FLAGS,
            extra_link_args=["-pthread"],
        )
    )
    ext_modules.append(
        Extension(
            "minigo_core.nn.dsp._infer",
            [os.path.join(CSRC, "infer_capi.cpp")],
            language="c++",
            extra_compile_args=[*CXX_FLAGS, "-fvisibility=hidden"],
            extra_link_args=["-pthread"],
        )
    )
    # The compiled Go rules (minigo_core/game/csrc): the board, and the replay of a game's moves into training
    # examples (replay.cpp, for `minigo window`); no kernels.
    rules_src = os.path.join("minigo_core", "game", "csrc")
    ext_modules.append(
        Extension(
            "minigo_core.game._rules",
            [os.path.join(rules_src, f) for f in ("board.cpp", "benson.cpp", "replay.cpp", "rules_capi.cpp")],
            include_dirs=[rules_src],
            language="c++",
            extra_compile_args=[*CXX_FLAGS, "-fvisibility=hidden"],
            extra_link_args=["-pthread", "-Wl,--no-undefined"],
        )
    )
    # The compiled self-play engine: features, symmetries, PUCT and Gumbel search and the multi-game scheduler
    # (minigo_core/search/csrc) on the rules' board (game/csrc/board.cpp, compiled in), with its own copy of
    # the kernels for in-process inference and the `uct:N` reference player (uct.cpp: tree search with random
    # playouts, no network).
    engine_src = os.path.join("minigo_core", "search", "csrc")
    ext_modules.append(
        Extension(
            "minigo_core.search._engine",
            [
                os.path.join(CSRC, "infer_capi.cpp"),
                os.path.join(rules_src, "board.cpp"),
                os.path.join(rules_src, "benson.cpp"),
                *(
                    os.path.join(engine_src, f)
                    for f in ("engine.cpp", "searcher.cpp", "search.cpp", "uct.cpp")
                ),
            ],
            include_dirs=[CSRC, engine_src, rules_src],
            language="c++",
            extra_compile_args=[*CXX_FLAGS, "-fvisibility=hidden"],
            extra_link_args=["-pthread"],
        )
    )
    # The engine's test entry points, kept out of the production library: the search arithmetic the tests
    # compare with the Python reference (no kernels: it needs none of them).
    ext_modules.append(
        Extension(
            "minigo_core.search._engine_test",
            [
                os.path.join(engine_src, "engine_test_capi.cpp"),
                os.path.join(rules_src, "board.cpp"),
                os.path.join(rules_src, "benson.cpp"),
                os.path.join(engine_src, "search.cpp"),
            ],
            include_dirs=[CSRC, engine_src, rules_src],
            language="c++",
            extra_compile_args=[*CXX_FLAGS, "-fvisibility=hidden"],
            extra_link_args=["-pthread", "-Wl,--no-undefined"],
        )
    )

    class BuildWithKernels(BuildExtension):
        """Compiles kernels.cpp (no torch headers; its four instruction-set builds take a while) and
        winograd_train.cpp (the training path's Winograd passes) once, with hidden visibility, and links the
        objects into `_C`, `_infer` and `_engine`, so that no library's copy interposes on another's in one
        process (`_rules` and `_engine_test` have no use for them)."""

        def build_extensions(self) -> None:
            if os.environ.get("MINIGO_REUSE_INPLACE_BUILD") and self.copy_inplace_builds():
                return
            objects = self.compiler.compile(
                kernels,
                output_dir=self.build_temp,
                extra_postargs=[*CXX_FLAGS, "-fPIC", "-fvisibility=hidden"],
                depends=sorted(os.path.join(CSRC, f) for f in os.listdir(CSRC) if f.endswith(".h")),
            )
            for ext in self.extensions:
                if ext.name.endswith(("_engine_test", "_rules")):
                    continue
                ext.extra_objects = [*objects, *ext.extra_objects]
                ext.depends = [*ext.depends, *objects]
            super().build_extensions()

        def copy_inplace_builds(self) -> bool:
            """With MINIGO_REUSE_INPLACE_BUILD=1 (the wheel test): the libraries that `pip install -e .` built
            in place are copied instead of compiled again, when every one is there and newer than every C++
            source; False (compile them) otherwise."""
            sources = [os.path.join(d, f) for d in (CSRC, engine_src, rules_src) for f in os.listdir(d)]
            newest = max(os.path.getmtime(f) for f in sources)
            pairs = []
            for ext in self.extensions:
                built = self.get_ext_filename(ext.name)  # minigo_core/search/_engine.cpython-...so
                if not os.path.isfile(built) or os.path.getmtime(built) < newest:
                    print(
                        f"MINIGO_REUSE_INPLACE_BUILD: {built} is missing or older than the sources; compiling"
                    )
                    return False
                pairs.append((built, self.get_ext_fullpath(ext.name)))
            for built, target in pairs:
                self.mkpath(os.path.dirname(target))
                self.copy_file(built, target)
            return True

    cmdclass["build_ext"] = BuildWithKernels.with_options(use_ninja=False)

    # Each library depends on the headers of the folders it includes (a header edited rebuilds it; setuptools
    # otherwise rebuilds only for a changed .cpp source).
    for ext in ext_modules:
        folders = {os.path.dirname(f) for f in ext.sources} | set(ext.include_dirs or ())
        ours = [d for d in folders if d.startswith("minigo_core")]  # not torch's include folders
        headers = sorted(h for d in ours for h in glob.glob(os.path.join(d, "*.h")))
        ext.depends = [*ext.depends, *headers]

# The project's files that are not Python, carried by a wheel in minigo_core/_project/ (where
# minigo_core.base.project_files finds them when there is no checkout): the workflow, its profiles, the
# default and example configs and the calibrated ladders (their tables; the calibration games stay here).
PROJECT_FILES = [
    "Snakefile",
    "config.yaml",
    "config/*.yaml",
    "config/ablation/*.yaml",
    "config/ladder/*.json",
    "config/value_positions/*.json",
    "profiles/*/config.yaml",
    "workflow/rules/*.smk",
    "workflow/schemas/*.yaml",
    "workflow/report/*.rst",
]


class BuildPyWithProjectFiles(build_py):
    """build_py, then a copy of PROJECT_FILES into the built package's `_project/` (not for an editable
    install: that reads the checkout itself)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = os.path.join(self.build_lib, "minigo_core", "_project")
        for pattern in PROJECT_FILES:
            paths = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not paths:
                raise FileNotFoundError(f"setup.py: no file matches {pattern!r} of PROJECT_FILES")
            for path in paths:
                self.mkpath(os.path.dirname(os.path.join(target, path)))
                self.copy_file(path, os.path.join(target, path))


cmdclass["build_py"] = BuildPyWithProjectFiles

setup(ext_modules=ext_modules, cmdclass=cmdclass)
