"""minigo_core: the library behind the MiniGo Snakemake pipeline.

Layers, bottom to top; a module imports only its own layer and those below (tests/unit/test_architecture.py):

    base      config and its defaults, player specs, the CLI harness, Elo arithmetic, the native loader
    cluster   Slurm's rank variables and host lists, the rendezvous, the local rank launcher
    game      rules of Go (Python, and compiled in `csrc/`), the result string, features, symmetries, SGF
    data      storage, the run layout, game files, job records, shards, the window, match files, the schedule
    nn        the network, model files, the DSP-emulation kernels, fused inference, training (torch)
    search    the reference MCTS with Gumbel's root, the compiled engine, search by the clock
    selfplay  a self-play game, a self-play job, a run's cost measured by a probe job
    play      players from their specs, outside programs over GTP, refereed games and matches, clocks
    gtp       the protocols a model serves: GTP (analysis, clocks) and KataGo's analysis
    rating    strength on the fixed Elo scale: the ladder, its calibration, rating a player
    report    the run-relative ratings, plots, the status table, the live progress line, inspection
    jobs      one thin module per `minigo COMMAND`
    pipeline  the only part that knows Snakemake: the workflow's helpers, the bounded plan, `minigo run`
    cli       the `minigo` dispatcher; bench: benchmarks

Tools that no workflow rule runs (the chaos driver, the run comparison) live outside, in `tools/`.
docs/ARCHITECTURE.md draws the layers and the data flow.
"""

__version__ = "0.1.0"
