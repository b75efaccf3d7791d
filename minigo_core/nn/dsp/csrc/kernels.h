// DSP-emulation kernels: declarations shared by kernels.cpp (no torch headers) and ops.cpp (torch bindings).
//
// Layout: activations are NHWC (B, H, W, C) row-major; a "pixel" q = (b * H + h) * W + w indexes a row of C
// channels. Convolution weights are packed in blocks of kKBlock output channels: (Kpad / 16 blocks, taps, C,
// 16) with Kpad = K rounded up to 8 (zeros in the padding; the last block is 8 wide when Kpad % 16 == 8), so
// the output channels of one (tap, c) sit side by side in SIMD registers: one input value is broadcast and
// multiplied with 16 weights (the paper's mapping of conv onto DSP vector units), and one block's weights are
// contiguous in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <vector>

namespace mgdsp {

// ---- instruction set of the kernels: every path has the same loop structure and, for float, the same
// results (each multiply-add one FMA, in the same order). The caller names one (Python's Runtime: "auto" is
// widest_isa()). portable16: the portable code at the AVX-512 build's width (16 lanes, 24 accumulators),
// never the widest: it runs the AVX-512 path's tiling on CPUs without AVX-512 (tests).
constexpr int kIsaPortable = 0, kIsaAvx2 = 1, kIsaAvx512 = 2, kIsaPortable16 = 3;
bool isa_supported(int isa);
bool cpu_has_avx2();
const char* isa_name(int isa);  // "portable", "avx2", "avx512", "portable16"
int widest_isa();               // avx512, avx2 or portable: the widest this CPU runs

// ---- how one call runs: on how many DSP cores, with which instruction set's kernels ----------------------
// Every entry point is given one (from Python: the Runtime of the network or of the training step); no
// setting here is process-wide. The worker threads behind the cores are a process resource: one pool,
// grown to the most cores a call has asked for.
constexpr int kMaxCores = 1024;
struct Exec {
  int cores = 1;           // DSP cores, 1 .. kMaxCores: the calling thread is core 0
  int isa = kIsaPortable;  // one this CPU runs (isa_supported)
};
// An Exec of `cores` cores on `isa`, or std::invalid_argument saying which is out of range or not run here.
Exec checked_exec(int cores, int isa);
// Runs fn(core) for core = 0 .. cores-1, the calling thread being core 0; returns when all are done.
void parallel(int cores, const std::function<void(int)>& fn);

// Allocator of 64-byte-aligned storage (one cache line, one AVX-512 vector): the Winograd buffers and weight
// sets, whose rows are whole vectors, so that no vector load or store straddles two cache lines.
template <typename T>
struct AlignedAlloc {
  using value_type = T;
  AlignedAlloc() = default;
  template <typename U>
  AlignedAlloc(const AlignedAlloc<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <typename U>
  bool operator==(const AlignedAlloc<U>&) const {
    return true;
  }
};
using AlignedFloats = std::vector<float, AlignedAlloc<float>>;

inline int round_up8(int k) { return (k + 7) / 8 * 8; }
constexpr int kKBlock = 16;  // output channels per packed weight block (2 AVX2 vectors, 1 AVX-512 vector)
// width of the output-channel block starting at k0, and where it starts in the packed weights
inline int kblock_width(int k0, int Kpad) { return Kpad - k0 < kKBlock ? Kpad - k0 : kKBlock; }
inline int64_t kblock_offset(int k0, int taps, int C) { return static_cast<int64_t>(k0) * taps * C; }

// Packs torch-layout weights (K, C, R, R) into the blocked layout above (multiplied by scale[k] if given);
// flip=true packs the input-gradient kernel: the spatially flipped, transposed weights (a conv from K
// channels to C channels).
template <typename T>
std::vector<T> pack_weights(const T* w, int K, int C, int R, bool flip, const T* scale = nullptr);

// out[q, k] = relu?(bias[k] + sum_{t, c} x[q shifted by tap t, c] * wp[t, c, k] + residual[q, k]) for
// q in [q0, q1), on the kernels of instruction set `isa`. Out-of-board taps contribute zero (pad R/2). bias
// (length Kpad) and residual may be null.
template <typename T>
void conv_forward_range(int isa, const T* x, int H, int W, int C, const T* wp, int K, int R, const T* bias,
                        const T* residual, bool relu, T* out, int64_t q0, int64_t q1);

// Multi-core conv forward over a whole batch: the batch is split evenly across the cores; residual (B, H, W,
// K) or null is added to each output after its sum (the input gradient's skip connection).
template <typename T>
void conv_forward(const Exec& ex, const T* x, int B, int H, int W, int C, const T* wp, int K, int R, T* out,
                  const T* residual = nullptr);

// Weight gradient dW (K, C, R, R) (torch layout) = sum over the batch of x (shifted) outer dy; each core
// accumulates its share of the batch into its own buffer, the buffers are summed by a pairwise tree.
template <typename T>
void conv_weight_grad(const Exec& ex, const T* x, const T* dy, int B, int H, int W, int C, int K, int R,
                      T* dw);

// Sums per-core partials (n values each) into partial[0] by a pairwise tree on the cores, one core per
// partial (level s adds core i+s's into core i's): the same order on every run.
template <typename T>
void tree_sum(const std::vector<T*>& partial, size_t n);

// Fused batch norm + ReLU (+ optional residual added before the ReLU), NHWC with M = B*H*W rows.
// training: batch statistics (mean, invstd written out, running stats updated in place, unbiased variance);
// eval: running statistics (mean, invstd computed from them and written out).
// sums (training, may be null): the per-channel sum and sum of squares of x (2 x C doubles) already summed by
// the pass that wrote x (a Winograd conv's output transform, `BnSums`), instead of a pass over x here.
template <typename T>
void bn_relu_forward(const Exec& ex, const T* x, const T* residual, int64_t M, int C, const T* gamma,
                     const T* beta, T* running_mean, T* running_var, bool training, double momentum,
                     double eps, T* y, T* mean, T* invstd, const double* sums = nullptr);

// dres = dy * (y > 0); dx = BN backward of dres (batch statistics when training, else the affine map).
// y null (a forward without residual): the mask y > 0 from x * scale + shift > 0, scale and shift recomputed
// from gamma, beta (then required), mean and invstd as the forward computed them (the same floats, one
// tensor less to read).
template <typename T>
void bn_relu_backward(const Exec& ex, const T* dy, const T* y, const T* x, int64_t M, int C, const T* gamma,
                      const T* mean, const T* invstd, bool training, T* dx, T* dgamma, T* dbeta, T* dres,
                      const T* beta = nullptr);

// FP32 peak of one core: GFLOP/s of an FMA loop on the vectors of instruction set `isa`, run for ~seconds.
double measure_peak_gflops(int isa, double seconds);

// ---- fused whole-network inference (BN folded into the convolutions) --------------------------------------
struct FusedConv {
  int C, K, R;
  std::vector<float> w;     // packed (blocked layout), BN scale folded in
  std::vector<float> bias;  // Kpad: BN shift
  AlignedFloats wino;       // conv3x3 with C >= kWinogradMinC: F(2x2,3x3)'s 16 packed weight sets, else empty
  AlignedFloats wino3;      // and F(3x3,3x3)'s 25
};

// Winograd F(m x m, 3x3) weights U = G g G^T of torch-layout (K, C, 3, 3) weights (m = 2 or 3, computed in
// double): (m+2)^2 packed (C -> K) sets; flip = true: those of the input gradient's kernel of torch-layout
// (C, K, 3, 3) weights w, i.e. of w'[k, c, t] = w[c, k, 8 - t] (the same floats as packing w' first).
AlignedFloats winograd_weights(const float* w, int K, int C, int m, bool flip = false);
double winograd_g(int m, int i, int j);  // G[i][j] of F(m x m, 3x3), (m+2) x 3
constexpr int kWinogradMinC = 16;
// The fused inference path's 3x3 convs with C >= kWinogradMinC, by the network's Winograd mode: 1 (default) =
// Winograd with the output tile of fewer multiplications for the board (F(3x3,3x3) on 5x5 .. 19x19), 2 / 3 =
// F(2x2,3x3) / F(3x3,3x3) forced, 0 = the direct kernel. The choice depends on the board size only, never on
// the CPU (same floats everywhere).
int winograd_tile(int mode, int board);  // 0, 2 or 3
// ---- Winograd 3x3 convolutions of the training path (winograd_train.cpp) ---------------------------------
// The training ops' float 3x3 convs (forward, input gradient, weight gradient), by the mode each op is given:
// 1 (default) = Winograd
// with the tile of fewer multiplications for the board (winograd_tile's rule) where both channel counts are
// >= kWinogradTrainMinC (fewer channels than a vector leave the transforms to scalar code: the direct kernel
// wins there, e.g. the 13 planes of mlperf07's conv3_initial), 2 / 3 = F(2x2,3x3) / F(3x3,3x3) forced on
// every shape, 0 = the direct kernels. By the shape only, never by CPU. float64 always runs direct.
constexpr int kWinogradTrainMinC = 16;
int winograd_training_tile(int mode, int H, int W, int C, int K);  // 0 (direct), 2 or 3
// The batch-norm statistics' sums of a training conv's output y, taken in its output transform (the values
// still in registers) instead of in a pass of their own over the stored y: per output channel k, s[k] = sum
// of y, t[k] = sum of y * y. Each element's expression is the BN kernel's; the order differs (per tile, per
// chunk of tiles, per core). (The backward's two BN sums are not taken the same way in the next layer's
// input-gradient pass: there its reads of the ReLU output and the BN input, cold and in tile order, would
// cost more than the BN kernel's streaming pass.)
struct BnSums {
  double* s = nullptr;
  double* t = nullptr;
};
// Per-ISA entry points (kernels.cpp), on the kernels of `isa`: nb images through winograd_conv (bias: >= K
// floats; sums: null, or the BN sums of the output, added to) and the weight gradient's products accumulated
// into Z ((m+2)^2 x C x ldk, ldk = K rounded up to 16).
void winograd_conv_images(int isa, int m, const float* x, int64_t nb, int H, int W, int C, const float* wino,
                          int K, const float* bias, const float* residual, float* out,
                          const BnSums* sums = nullptr);
void winograd_wgrad_images(int isa, int m, const float* x, const float* dy, int64_t nb, int H, int W, int C,
                           int K, int ldk, float* Z);
// Multi-core passes, the batch split across the cores (whole images), float32, 3x3, pad 1; w in torch layout
// (K, C, 3, 3). The weight gradient: per-core partials in the transform domain, summed by the same pairwise
// tree as the direct kernel's, then dW = G^T Z G (in double).
// sums (2 x K doubles, or null): the BN sums of y (BnSums: s then t), written.
void winograd_forward(const Exec& ex, const float* x, int B, int H, int W, int C, const float* w, int K,
                      int m, float* y, double* sums = nullptr);
void winograd_input_grad(const Exec& ex, const float* dy, int B, int H, int W, int C, const float* w, int K,
                         int m, float* dx, const float* residual = nullptr);
void winograd_weight_grad(const Exec& ex, const float* x, const float* dy, int B, int H, int W, int C, int K,
                          int m, float* dw);

// Floats of one activation buffer per chunk of images the fused net runs through the whole network at once
// (3 such buffers stay in a 512 KiB L2 alongside the weights).
constexpr int64_t kFusedChunkFloats = 24 * 1024;

// KataGo's global pooling bias of a residual block (c = 0: none): the first c channels of the block's first
// conv output (after BN+ReLU) pooled into (mean, mean * (N - 14) / 10, max) per channel, and a dense layer of
// those 3c values added as a bias to the other F - c channels at every point, before the second conv.
struct FusedGpool {
  int c = 0;
  std::vector<float> wt, b;  // (3c, F - c): the dense layer's weight transposed; (F - c)
};

struct FusedNetCore {
  int N = 0, planes = 0, filters = 0, blocks = 0, fc = 0;
  std::vector<FusedConv> convs;            // conv3_initial, 2 per block, conv1_policy, conv1_value
  std::vector<FusedGpool> gpool;           // per block (c = 0 where the block has none)
  std::vector<float> policy_wt, policy_b;  // (2*N*N in NHWC order, N*N+1), (N*N+1)
  std::vector<float> value_w1t, value_b1;  // (N*N, fc), (fc); with value_c: (3 * value_c, fc), (fc)
  std::vector<float> value_w2;             // (fc)
  float value_b2 = 0.f;
  // KataGo's pooled value head (mg_fused_set_value_pool; 0: AlphaGo Zero's): conv1_value has value_c output
  // channels, each pooled into (mean, mean * (N - 14) / 10, max) for the dense layer
  int value_c = 0;
  // the auxiliary heads (mg_fused_set_aux): ownership 1x1 conv (filters) + bias, score dense (fc) + bias
  bool has_aux = false;
  std::vector<float> own_w, score_w;
  float own_b = 0.f, score_b = 0.f;
  // how it runs (given at creation: mg_fused_create): its DSP cores and ISA, and its 3x3 convs' Winograd mode
  Exec ex;
  int winograd = 1;
  // input: NCHW (B, planes, N, N), uint8 (is_u8) or float32; writes policy (B, N*N+1) (softmax probabilities
  // if softmax else logits) and value (B,); with the auxiliary heads, where not null, the ownership logits
  // (B, N*N) and the score head's output (B,) (fused_impl.h).
  void run(const void* input, bool is_u8, int B, bool softmax, float* policy, float* value,
           float* ownership = nullptr, float* score = nullptr) const;
};

}  // namespace mgdsp
