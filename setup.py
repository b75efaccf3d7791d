"""Builds the DSP-emulation extension (minigo_core.dsp._C) against the installed torch.

Install with `pip install --no-build-isolation -e .` so the extension is compiled once, at install
time, against torch==2.13.0 already in the environment (never on first import inside a job).
"""

import glob
import os

from setuptools import setup

ext_modules = []
cmdclass = {}
sources = sorted(glob.glob(os.path.join("minigo_core", "dsp", "csrc", "*.cpp")))
if sources:
    from torch.utils.cpp_extension import BuildExtension, CppExtension

    ext_modules.append(
        CppExtension(
            "minigo_core.dsp._C",
            sources,
            extra_compile_args=["-O3", "-g0", "-std=c++20", "-fno-math-errno", "-pthread"],
            extra_link_args=["-pthread"],
        )
    )
    cmdclass["build_ext"] = BuildExtension.with_options(use_ninja=False)

setup(ext_modules=ext_modules, cmdclass=cmdclass)
