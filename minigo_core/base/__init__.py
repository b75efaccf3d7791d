"""The foundation: the run config, the command harness, player specs, Elo arithmetic, native loading."""
