"""Layer 0, the foundation every other layer may use: the typed run config, player specs, the CLI harness.

Imports nothing of the other layers and no third-party library but pyyaml.
"""
