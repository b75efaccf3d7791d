"""Layer 4, the network: the dual-head residual net (`model`, torch), its file format (`modelfile`), the
DSP-emulation kernels (`dsp`, compiled), the torch-free fused inference engine (`fused`), one rank's training
steps (`training`, torch) and the torch-free rest of a training job's rank (`train_job`).

The only layer that imports torch (besides the benchmarks, which time torch as their baseline).
"""
