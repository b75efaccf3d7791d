"""Benchmarks, not tests: `python -m minigo_core.bench NAME` prints ratios against a same-run baseline."""
