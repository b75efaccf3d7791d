"""Reports of a run, read from its files alone: ratings, plots, the status table, the live progress line."""
