"""Where the ranks of a training job run: Slurm host lists, the rendezvous address and port, the local
launcher."""
