"""A run's data on the shared filesystem: atomic storage, layout, games, shards, the window, matches."""
