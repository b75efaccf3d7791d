"""The one part that knows the Snakemake workflow: what the Snakefile asks, the bounded plan, `minigo run`."""
