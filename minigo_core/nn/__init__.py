"""Layer 3, the network: the dual-head residual net (`model`, torch), its file format (`modelfile`), the
DSP-emulation kernels (`dsp`, compiled), the torch-free fused inference engine (`fused`) and training steps.

The only layer that imports torch (besides the benchmarks, which time torch as their baseline).
"""
