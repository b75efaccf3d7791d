"""The network: the residual net, its file, the DSP-emulation kernels, fused inference, training."""
