# Two commands do all set-up on a fresh machine:
#   make run   - create .venv, install everything, run the default local config end to end
#   make test  - the same set-up, then lint, format checks, the architecture contracts and the whole test suite
# While editing: `make test-fast` (lint, contracts and tests/unit: no end-to-end runs, no Slurm).
# The tests by kind: tests/unit (one module or a few), tests/e2e (`make test-e2e`: the workflow, Snakemake,
# the chaos driver, multi-rank training), tests/cluster (`make test-cluster`: the 2-node test Slurm).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXT_SOURCES := $(wildcard minigo_core/nn/dsp/csrc/*.cpp minigo_core/nn/dsp/csrc/*.h \
	minigo_core/search/csrc/*.cpp minigo_core/search/csrc/*.h)
PROFILE ?= profiles/local
CONFIG ?= config.yaml

.PHONY: run test test-fast test-e2e test-cluster setup system-deps lint contracts clean engine

setup: system-deps $(STAMP)

# Debian packages the pipeline and its tests use: GNU Go (referee/opponent), Slurm + munge (Slurm profile tests),
# clang-format (the C++ style check of `make lint`, .clang-format).
system-deps:
	@bash workflow/scripts/install_system_deps.sh

$(STAMP): pyproject.toml setup.py $(EXT_SOURCES)
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	@touch $(STAMP)

run: setup
	$(VENV)/bin/python -m minigo_core.cli run --profile $(PROFILE) --config $(CONFIG)

test: setup lint contracts
	$(VENV)/bin/python -m pytest -q -ra tests

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
	clang-format --dry-run --Werror $(EXT_SOURCES)

# The layers of minigo_core point one way; only nn/ imports torch; only pipeline/ knows Snakemake; no cycles.
contracts: setup
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/unit/test_architecture.py

# Rebuild only the compiled self-play engine in place (while editing minigo_core/search/csrc).
engine: setup
	$(PY) setup.py -q build_ext --inplace

clean:
	rm -rf build *.egg-info minigo_core/nn/dsp/*.so minigo_core/search/*.so
