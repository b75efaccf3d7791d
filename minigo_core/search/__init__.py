"""Search: the reference MCTS with Gumbel's root, the compiled engine, and search by the clock."""
