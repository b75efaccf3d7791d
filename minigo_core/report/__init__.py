"""Reports read from a run's files alone: ratings, plots, status, progress, breakdown, TensorBoard."""
