// The Winograd 3x3 convolutions of the training path (Lavin & Gray 2016), on the pool of DSP cores: the
// batch split across the cores in whole images as the direct kernels split it; each core runs the same
// transforms and broadcast-FMA products as the fused inference path (kernels.cpp's per-ISA entry points).
// The forward pass and the input gradient (a conv K -> C with the flipped, transposed weights) are
// winograd_conv; the weight gradient accumulates per-core partials in the transform domain, sums them by the
// direct kernel's pairwise tree, then takes them back to 3x3 weights (G^T Z G, in double). Every sum runs in
// one order fixed by the shape and the number of cores, so reruns give the same bytes.
#include <algorithm>
#include <vector>

#include "kernels.h"

namespace mgdsp {

namespace {
// dW[k, c] = G^T Z[., c, k] G (Z: (m+2)^2 x C x ldk floats), in double, eight output channels k at a time in
// registers. Plain IEEE multiplies and adds (no FMA: -ffp-contract=off), each sum from 0 in the order of a,
// b, so the vector clones give the scalar code's bits.
template <int A>  // m + 2, known to the compiler: every loop but the channels' unrolled
__attribute__((always_inline)) inline void transform_to_weights_t(const float* Z, int C, int K, int ldk,
                                                                  float* dw) {
  constexpr int L = 8;  // ldk is a multiple of 16: a chunk of 8 lanes never reads past a row
  double G[5][3];
  for (int a = 0; a < A; ++a)
    for (int j = 0; j < 3; ++j) G[a][j] = winograd_g(A - 2, a, j);
  for (int c = 0; c < C; ++c)  // one input channel at a time
    for (int k0 = 0; k0 < K; k0 += L) {
      double t[5][3][L];  // Z G: [a][j][k]
      for (int a = 0; a < A; ++a) {
        double z[5][L];
        for (int b = 0; b < A; ++b)
          for (int l = 0; l < L; ++l) z[b][l] = Z[(static_cast<size_t>(a * A + b) * C + c) * ldk + k0 + l];
        for (int j = 0; j < 3; ++j)
          for (int l = 0; l < L; ++l) {
            double acc = 0.0;
            for (int b = 0; b < A; ++b) acc += z[b][l] * G[b][j];
            t[a][j][l] = acc;
          }
      }
      float r[9][L];  // G^T (Z G): [i * 3 + j][k]
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          for (int l = 0; l < L; ++l) {
            double acc = 0.0;
            for (int a = 0; a < A; ++a) acc += G[a][i] * t[a][j][l];
            r[i * 3 + j][l] = static_cast<float>(acc);
          }
      for (int l = 0; l < std::min(L, K - k0); ++l)  // dw[k, c, 0..8]: nine floats in a row
        for (int ij = 0; ij < 9; ++ij) dw[(static_cast<size_t>(k0 + l) * C + c) * 9 + ij] = r[ij][l];
    }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void transform_to_weights(const float* Z, int C,
                                                                                       int K, int m, int ldk,
                                                                                       float* dw) {
  if (m == 3)
    transform_to_weights_t<5>(Z, C, K, ldk, dw);
  else
    transform_to_weights_t<4>(Z, C, K, ldk, dw);
}

// [b0, b1) of core i's images when B images are split evenly across `cores`
inline std::pair<int64_t, int64_t> image_share(int B, int cores, int i) {
  return {static_cast<int64_t>(B) * i / cores, static_cast<int64_t>(B) * (i + 1) / cores};
}
}  // namespace

int winograd_training_tile(int mode, int H, int W, int C, int K) {
  if (mode != 1) return mode == 2 || mode == 3 ? mode : 0;  // forced (2, 3) or off (0), whatever the shape
  if (std::min(C, K) < kWinogradTrainMinC) return 0;
  // multiplications per image and channel pair: direct 9 per pixel; F(3x3): 25 per 3x3 tile; F(2x2): 16 per
  // 2x2 tile
  const int direct = 9 * H * W, f3 = 25 * ((H + 2) / 3) * ((W + 2) / 3),
            f2 = 16 * ((H + 1) / 2) * ((W + 1) / 2);
  if (direct <= std::min(f3, f2)) return 0;
  return f3 <= f2 ? 3 : 2;
}

void winograd_forward(const Exec& ex, const float* x, int B, int H, int W, int C, const float* w, int K,
                      int m, float* y, double* sums) {
  const AlignedFloats wino = winograd_weights(w, K, C, m);
  const std::vector<float> zero(round_up8(K), 0.f);
  const int64_t HW = static_cast<int64_t>(H) * W;
  const int cores = ex.cores;
  std::vector<std::vector<double>> part(sums ? cores : 0);
  parallel(cores, [&](int i) {
    auto [b0, b1] = image_share(B, cores, i);
    BnSums bs;
    if (sums) {  // this core's sums of its images
      part[i].assign(2 * static_cast<size_t>(K), 0.0);
      bs.s = part[i].data();
      bs.t = bs.s + K;
    }
    if (b1 > b0)
      winograd_conv_images(ex.isa, m, x + b0 * HW * C, b1 - b0, H, W, C, wino.data(), K, zero.data(), nullptr,
                           y + b0 * HW * K, sums ? &bs : nullptr);
  });
  for (int k = 0; sums && k < 2 * K; ++k) {  // in core order, as the BN kernel adds its per-core partials
    double s = 0;
    for (int i = 0; i < cores; ++i) s += part[i][k];
    sums[k] = s;
  }
}

void winograd_input_grad(const Exec& ex, const float* dy, int B, int H, int W, int C, const float* w, int K,
                         int m, float* dx, const float* residual) {
  // the input gradient's kernel: a conv K -> C with the weights w[k, c, 8 - t] as [c, k, t]
  const AlignedFloats wino = winograd_weights(w, C, K, m, true);
  const std::vector<float> zero(round_up8(C), 0.f);
  const int64_t HW = static_cast<int64_t>(H) * W;
  const int cores = ex.cores;
  parallel(cores, [&](int i) {
    auto [b0, b1] = image_share(B, cores, i);
    if (b1 > b0)
      winograd_conv_images(ex.isa, m, dy + b0 * HW * K, b1 - b0, H, W, K, wino.data(), C, zero.data(),
                           residual ? residual + b0 * HW * C : nullptr, dx + b0 * HW * C);
  });
}

void winograd_weight_grad(const Exec& ex, const float* x, const float* dy, int B, int H, int W, int C, int K,
                          int m, float* dw) {
  const int A = m + 2, A2 = A * A, ldk = (K + 15) / 16 * 16;
  const size_t zsize = static_cast<size_t>(A2) * C * ldk;
  const int64_t HW = static_cast<int64_t>(H) * W;
  const int cores = ex.cores;
  std::vector<AlignedFloats> partial(cores);
  // 1. each core: the transform-domain products of its share of the batch
  parallel(cores, [&](int i) {
    partial[i].assign(zsize, 0.f);
    auto [b0, b1] = image_share(B, cores, i);
    if (b1 > b0)
      winograd_wgrad_images(ex.isa, m, x + b0 * HW * C, dy + b0 * HW * K, b1 - b0, H, W, C, K, ldk,
                            partial[i].data());
  });
  // 2. the pairwise tree across cores; 3. dW[k, c] = G^T Z[., c, k] G, in double
  std::vector<float*> parts(cores);
  for (int i = 0; i < cores; ++i) parts[i] = partial[i].data();
  tree_sum(parts, zsize);
  transform_to_weights(partial[0].data(), C, K, m, ldk, dw);
}

}  // namespace mgdsp
