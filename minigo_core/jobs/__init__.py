"""Layer 8, the commands: one thin module per `minigo COMMAND` a workflow rule or a person runs (its
arguments and `main`), over the layers below; none knows Snakemake.
"""
