"""Layer 5, the jobs: one module per command a workflow rule or a person runs (`minigo COMMAND`): bootstrap,
self-play, training, evaluation, ratings, the GTP engine, inspection.

Each is a thin program over the layers below; none knows Snakemake.
"""
