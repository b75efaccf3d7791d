"""minigo_core: the library behind the MiniGo Snakemake pipeline (rules, network, search, data, training)."""

__version__ = "0.1.0"
