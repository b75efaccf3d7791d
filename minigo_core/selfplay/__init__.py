"""Self-play: one game of a model against itself, a job of many games, a run's cost by a probe."""
