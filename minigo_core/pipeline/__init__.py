"""Layer 6, the pipeline: the only part of the library that knows the Snakemake workflow.

The bounded plan of a Snakemake invocation, the run's status, `minigo run`, the games-complete marker and
the report's plots.
"""
