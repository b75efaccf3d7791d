# Two commands do all set-up on a fresh machine:
#   make run   - create .venv, install what the run needs, run the default local config end to end
#   make test  - the same set-up plus what the tests need, then lint, format checks, the architecture contracts
#                and the whole test suite (without root: README.md, "Set-up without root")
# While editing: `make test-fast` (lint, contracts and tests/unit: no end-to-end runs, no Slurm).
# The tests by kind: tests/unit (one module or a few), tests/e2e (`make test-e2e`: the workflow, Snakemake,
# the chaos driver, multi-rank training), tests/cluster (`make test-cluster`: the 2-node test Slurm).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXT_SOURCES := $(wildcard minigo_core/nn/dsp/csrc/*.cpp minigo_core/nn/dsp/csrc/*.h \
	minigo_core/search/csrc/*.cpp minigo_core/search/csrc/*.h minigo_core/game/csrc/*.cpp minigo_core/game/csrc/*.h)
PROFILE ?= profiles/local
CONFIG ?= config.yaml

.PHONY: run test test-fast test-e2e test-cluster setup system-deps lint contracts clean engine pachi

setup: system-deps $(STAMP) pachi

# Debian packages, each installed only by the targets that use it (workflow/scripts/install_system_deps.sh
# PURPOSE...): GNU Go (opponent, ladder rungs, referee: run and tests), Chromium (tests: the HTML report
# rendered headless), Slurm + munge (tests/cluster), clang-format (the C++ style check of `make lint`).
# Without root or a working sudo it names what is missing with the command that installs it and goes on. A
# plain `make setup` installs none of them.
SYSTEM_DEPS ?=
run: SYSTEM_DEPS = run
test: SYSTEM_DEPS = test cluster lint
test-fast: SYSTEM_DEPS = test lint
test-e2e: SYSTEM_DEPS = test
test-cluster: SYSTEM_DEPS = test cluster
lint: SYSTEM_DEPS = lint
system-deps:
	@if [ -n "$(SYSTEM_DEPS)" ]; then bash workflow/scripts/install_system_deps.sh $(SYSTEM_DEPS); fi

$(STAMP): pyproject.toml setup.py $(EXT_SOURCES)
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	@touch $(STAMP)

# Pachi (the pachi:N players, ladder rungs; their tests), built from its source on PyPI into the venv, without
# root (workflow/scripts/build_pachi.sh: seconds once, then a no-op). Where the download or the build fails it
# says so and how to retry (`make pachi`), and the set-up goes on; under CI (CI set) it fails instead.
pachi: $(STAMP)
	@bash workflow/scripts/build_pachi.sh $(VENV)/bin/pachi

run: setup
	$(VENV)/bin/python -m minigo_core.cli run --profile $(PROFILE) --config $(CONFIG)

# The whole suite: the Slurm tests (mostly waiting on Slurm) as one pytest stream beside the rest (tools/suite.py)
test: setup lint contracts
	$(VENV)/bin/python -m tools.suite

test-fast: setup lint contracts
	$(VENV)/bin/python -m pytest -q -ra -x tests/unit

test-e2e: setup
	$(VENV)/bin/python -m pytest -q -ra tests/e2e

test-cluster: setup
	$(VENV)/bin/python -m pytest -q -ra tests/cluster

lint: setup
	$(VENV)/bin/ruff check minigo_core tests workflow/scripts tools setup.py
	$(VENV)/bin/ruff format --check minigo_core tests workflow/scripts tools setup.py
	$(VENV)/bin/snakefmt --check Snakefile workflow/rules
	@if command -v clang-format >/dev/null; then clang-format --dry-run --Werror $(EXT_SOURCES); \
	elif [ -n "$$CI" ]; then echo "lint: clang-format is not installed (CI runs every check)"; exit 1; \
	else echo "lint: C++ style check skipped: clang-format is not installed (sudo apt-get install -y clang-format)"; fi

# The layers of minigo_core point one way; only nn/ imports torch; only pipeline/ knows Snakemake; no cycles.
contracts: setup
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/unit/test_architecture.py

# The GPU check (README, "On a Slurm cluster"; docs/GPU.md): on a machine whose torch sees a CUDA GPU, build the
# libraries against that torch in a scratch copy, run the tests marked cuda and a training-step benchmark,
# print one summary ($OUT/gpu_summary.txt or runs/gpu/summary.txt); without one, say so and exit 0. No venv
# set-up: GPU_PYTHON=/path/to/python picks the Python (default: the first that sees a GPU).
.PHONY: test-gpu
test-gpu:
	python3 tools/gpu_check.py

# Rebuild the compiled libraries in place (while editing minigo_core/search/csrc or game/csrc).
engine: setup
	$(PY) setup.py -q build_ext --inplace

clean:
	rm -rf build *.egg-info minigo_core/nn/dsp/*.so minigo_core/search/*.so minigo_core/game/*.so
