"""minigo_core: the library behind the MiniGo Snakemake pipeline.

Layers, bottom to top; a module imports only its own layer and those below (tests/test_architecture.py):

    base      config, player specs, the CLI harness
    game      rules of Go, features, symmetries, SGF
    data      storage, the run layout, game files, shards, the sample window
    nn        the network, model files, the DSP-emulation kernels, fused inference, training steps (torch)
    search    the reference MCTS, players, the GTP client
    jobs      one module per `minigo COMMAND`: bootstrap, selfplay, train, evaluate, ratings, gtp, inspect
    pipeline  the only part that knows Snakemake: plan, status, `minigo run`, games-complete, plots
    cli       the `minigo` dispatcher; bench: benchmarks

docs/ARCHITECTURE.md draws the layers and the data flow.
"""

__version__ = "0.1.0"
