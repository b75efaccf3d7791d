"""Tools no workflow rule runs: the chaos run (`python -m tools.chaos`) and the run comparison
(`python -m tools.compare_runs`). They sit above the whole library (nothing in `minigo_core` imports them)
and are not installed with it: run them from the repository root.
"""
