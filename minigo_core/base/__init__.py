"""Layer 0, the foundation every other layer may use: the typed run config and its defaults (`config`), the
command harness (`command`), player specs (`playerspec`), the Elo arithmetic (`elo`), the CPU a measurement
ran on (`machine`), and the one loader of the compiled libraries (`native`).

Imports nothing of the other layers and no third-party library but pyyaml.
"""
