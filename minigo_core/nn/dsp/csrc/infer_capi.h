// The C API of the fused inference library `minigo_core/nn/dsp/_infer*.so`: every function it exports
// (extern "C", loaded with ctypes; `minigo_core/nn/fused.py`'s table INFER_FUNCTIONS mirrors this header line
// for line). The self-play engine library `_engine` links the same definitions (infer_capi.cpp) and exports
// them too (search/csrc/engine_capi.h includes this header). No struct crosses this interface.
//
// The weights come in torch layout, BN already folded in (done in numpy by fused.py):
//   conv i (i = 0 .. 2 + 2*blocks): weight (K, C, R, R) and bias (K), in network order: conv3_initial,
//   conv1/conv2 of each block, conv1_policy (K=2, R=1), conv1_value (K=1, R=1);
//   policy_wt (2*N*N, N*N+1) in NHWC-flatten order, policy_b (N*N+1); value_w1t (N*N, fc), value_b1 (fc),
//   value_w2 (fc), value_b2.
#pragma once

// The libraries are compiled with -fvisibility=hidden: only the functions marked MG_API are exported, so a
// library's copy of the kernels never interposes on (or is interposed by) another's in the same process.
#define MG_API __attribute__((visibility("default")))

extern "C" {

// Returns an engine handle, or null with a message in err. How the engine runs is given here, once: `cores`
// DSP cores (1 .. 1024) and the kernels of instruction set `isa` (0 portable, 1 avx2, 2 avx512, 3
// portable16: kernels.h; one this CPU runs), its 3x3 convs by `winograd` (0: direct, 1: Winograd with the
// tile chosen by the board size, 2 / 3: F(2x2) / F(3x3) forced).
MG_API void* mg_fused_create(int N, int planes, int filters, int blocks, int fc, const float* const* conv_w,
                             const float* const* conv_b, const float* policy_wt, const float* policy_b,
                             const float* value_w1t, const float* value_b1, const float* value_w2,
                             float value_b2, int cores, int isa, int winograd, char* err, int errlen);
// Gives residual block `block` of the engine KataGo's global pooling bias (before the first run; blocks have
// none by default): its first c channels after conv1 pooled (mean, mean * (N - 14) / 10, max), and the dense
// layer wt (3c, filters - c) (the torch weight transposed), b (filters - c) biasing the other channels.
// Returns 0, or -1 with a message in err.
MG_API int mg_fused_set_gpool(void* handle, int block, int c, const float* wt, const float* b, char* err,
                              int errlen);
// Gives the engine the auxiliary heads (KataGo's ownership and score): the ownership 1x1 convolution own_w
// (filters) and bias own_b, the score layer score_w (fc, on the value head's hidden layer after ReLU) and
// score_b. Returns 0, or -1 with a message in err.
MG_API int mg_fused_set_aux(void* handle, const float* own_w, float own_b, const float* score_w,
                            float score_b, char* err, int errlen);
// Gives the engine KataGo's pooled value head (before the first run): conv1_value becomes the 1x1 conv w
// (c, filters) with bias b (c), BN folded in, its c channels after ReLU pooled (mean, mean * (N - 14) / 10,
// max, as mg_fused_set_gpool's) into value_w1t (3c, fc), which replaces mg_fused_create's. Returns 0, or -1
// with a message in err.
MG_API int mg_fused_set_value_pool(void* handle, int c, const float* w, const float* b,
                                   const float* value_w1t, char* err, int errlen);
// mg_fused_run, and (where not null) the ownership logits (B, N*N, the mover's point where positive) and the
// score head's output (B,: the final margin / N*N, the mover's view). Returns 0, or -1 on failure or when
// ownership or score is asked of an engine without the auxiliary heads.
MG_API int mg_fused_run_aux(const void* handle, const void* x, int is_u8, int B, int softmax, float* policy,
                            float* value, float* ownership, float* score);
// x: (B, planes, N, N) NCHW contiguous, uint8 (is_u8) or float32. Writes policy (B, N*N+1) (probabilities if
// softmax, else logits) and value (B,). Returns 0, or -1 on failure.
MG_API int mg_fused_run(const void* handle, const void* x, int is_u8, int B, int softmax, float* policy,
                        float* value);
MG_API void mg_fused_destroy(void* handle);

// The kernels' instruction sets: whether this CPU runs one (0 portable, 1 avx2, 2 avx512, 3 portable16), and
// the widest it runs (2, 1 or 0).
MG_API int mg_isa_supported(int isa);
MG_API int mg_widest_isa(void);
MG_API int mg_cpu_has_avx2(void);

}  // extern "C"
