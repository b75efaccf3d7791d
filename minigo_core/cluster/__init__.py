"""Layer 1, where a training job's ranks run: Slurm's rank variables, host lists and the rendezvous address
and port (`slurm`), and the local launcher of N rank processes (`launch`).

Imports only `base`: no torch, no files of a run.
"""
