"""DSP-offload emulation: the compiled NHWC convolution and BN+ReLU kernels on a pool of "DSP cores"."""
