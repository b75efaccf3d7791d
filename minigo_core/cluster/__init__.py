"""Where a training job's ranks run: Slurm's rank variables, host lists, the local rank launcher."""
