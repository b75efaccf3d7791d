"""Layer 9, the pipeline: the only part of the library that knows the Snakemake workflow: what the Snakefile
asks of the library (`workflow`), the bounded plan of one invocation (`plan`) and `minigo run` (`runner`).
"""
