// Kernel bodies, included twice by kernels.cpp: once inside `namespace avx2` under
// `#pragma GCC target("avx2,fma")` with MG_AVX2 defined (float convs use AVX2/FMA intrinsics), and once inside
// `namespace generic` for any x86-64 / other CPU (plain loops in the same order, auto-vectorised by the compiler).
// No include guard on purpose. Expects <algorithm>, <cmath>, <cstdint>, <cstring>, <vector> (and <immintrin.h>
// for MG_AVX2) to be included by the includer.

// ---- convolution forward ---------------------------------------------------------------------------------------
// Output pixels q in [q0, q1) are processed in tiles of P pixels; for each tap the P input rows are located
// (a shared zero row stands for the padding), then for each K block the tile's P x (8*V) outputs are
// accumulated in registers over taps x C.
template <typename T>
static void conv_forward_range_portable(const T* x, int H, int W, int C, const T* wp, int K, int R,
                                        const T* bias, const T* residual, bool relu, T* out, int64_t q0,
                                        int64_t q1) {
  const int Kpad = round_up8(K), pad = R / 2, HW = H * W;
  std::vector<T> acc(Kpad);
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t b = q / HW;
    const int h = static_cast<int>(q % HW) / W, w = static_cast<int>(q % HW) % W;
    for (int k = 0; k < Kpad; ++k) acc[k] = bias ? bias[k] : T(0);
    for (int k0 = 0; k0 < Kpad; k0 += kKBlock) {
      const int KB = kblock_width(k0, Kpad);
      const T* wblk = wp + kblock_offset(k0, R * R, C);
      T* a_out = acc.data() + k0;
      for (int t = 0; t < R * R; ++t) {
        const int hh = h + t / R - pad, ww = w + t % R - pad;
        if (hh < 0 || hh >= H || ww < 0 || ww >= W) continue;  // zero padding: adds exact zeros in AVX path
        const T* xr = x + ((b * H + hh) * W + ww) * C;
        const T* wt = wblk + static_cast<int64_t>(t) * C * KB;
        for (int c = 0; c < C; ++c) {
          const T a = xr[c];
          const T* wr = wt + static_cast<int64_t>(c) * KB;
          for (int k = 0; k < KB; ++k) a_out[k] += a * wr[k];
        }
      }
    }
    T* o = out + q * K;
    const T* r = residual ? residual + q * K : nullptr;
    for (int k = 0; k < K; ++k) {
      T v = acc[k];
      if (r) v += r[k];
      if (relu) v = v > T(0) ? v : T(0);
      o[k] = v;
    }
  }
}

#ifdef MG_AVX2
static inline __m256i lane_mask(int n) {  // first n lanes on
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

template <int P, int V>
static inline __attribute__((always_inline)) void fwd_tile(const float* const* rows, int ntaps, int C,
                                                           const float* wblk, int KB, const float* bias,
                                                           const float* residual, bool relu, float* out,
                                                           int K, int kvalid) {
  __m256 acc[P][V];
#pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    const __m256 b0 = bias ? _mm256_loadu_ps(bias + 8 * v) : _mm256_setzero_ps();
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[p][v] = b0;
  }
  for (int t = 0; t < ntaps; ++t) {
    const float* x[P];
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) x[p] = rows[t * P + p];
    const float* wt = wblk + static_cast<int64_t>(t) * C * KB;
    for (int c = 0; c < C; ++c) {
      __m256 wv[V];
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) wv[v] = _mm256_loadu_ps(wt + 8 * v);
      wt += KB;
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) {
        const __m256 a = _mm256_broadcast_ss(x[p] + c);
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[p][v] = _mm256_fmadd_ps(a, wv[v], acc[p][v]);
      }
    }
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      const int n = kvalid - 8 * v;  // valid lanes in this vector
      float* o = out + static_cast<int64_t>(p) * K + 8 * v;
      const float* r = residual ? residual + static_cast<int64_t>(p) * K + 8 * v : nullptr;
      __m256 s = acc[p][v];
      if (n >= 8) {
        if (r) s = _mm256_add_ps(s, _mm256_loadu_ps(r));
        if (relu) s = _mm256_max_ps(s, zero);
        _mm256_storeu_ps(o, s);
      } else if (n > 0) {
        const __m256i m = lane_mask(n);
        if (r) s = _mm256_add_ps(s, _mm256_maskload_ps(r, m));
        if (relu) s = _mm256_max_ps(s, zero);
        _mm256_maskstore_ps(o, m, s);
      }
    }
  }
}

template <int P>
static inline void fwd_tile_v(int V, const float* const* rows, int ntaps, int C, const float* wblk, int KB,
                              const float* bias, const float* residual, bool relu, float* out, int K,
                              int kvalid) {
  if (V == 2)
    fwd_tile<P, 2>(rows, ntaps, C, wblk, KB, bias, residual, relu, out, K, kvalid);
  else
    fwd_tile<P, 1>(rows, ntaps, C, wblk, KB, bias, residual, relu, out, K, kvalid);
}

static void conv_forward_range_avx2(const float* x, int H, int W, int C, const float* wp, int K, int R,
                                    const float* bias, const float* residual, bool relu, float* out,
                                    int64_t q0, int64_t q1) {
  // PT pixels per register tile x 2 vectors of 8 output channels = 12 accumulators. Tiles are grouped in
  // strips of ST; for each strip the output-channel blocks are the outer loop, so one block's weights stay
  // in L1 while they are used by all the strip's tiles.
  constexpr int PT = 6, ST = 8;
  const int Kpad = round_up8(K), nvec = Kpad / 8, pad = R / 2, HW = H * W, ntaps = R * R;
  std::vector<float> zero_row(C, 0.f);
  const float* strip_rows[ST][9 * PT];
  int strip_p[ST];
  int64_t strip_q[ST];
  int tdy[9], tdx[9];
  for (int t = 0; t < ntaps; ++t) {
    tdy[t] = t / R - pad;
    tdx[t] = t % R - pad;
  }
  int64_t b = q0 / HW;  // coordinates of pixel q, advanced incrementally (no divisions per pixel)
  int h = static_cast<int>(q0 % HW) / W, w = static_cast<int>(q0 % HW) % W;
  for (int64_t qs = q0; qs < q1;) {
    // 1. locate the input rows of every tap of every pixel of the strip's tiles
    int ntile = 0;
    for (; ntile < ST && qs < q1; ++ntile) {
      const int P = static_cast<int>(std::min<int64_t>(PT, q1 - qs));
      strip_p[ntile] = P;
      strip_q[ntile] = qs;
      qs += P;
      const float** rows = strip_rows[ntile];
      for (int p = 0; p < P; ++p) {
        const float* img = x + b * HW * C;
        for (int t = 0; t < ntaps; ++t) {
          const int hh = h + tdy[t], ww = w + tdx[t];
          rows[t * P + p] = (hh < 0 || hh >= H || ww < 0 || ww >= W)
                                ? zero_row.data()
                                : img + (static_cast<int64_t>(hh) * W + ww) * C;
        }
        if (++w == W) {
          w = 0;
          if (++h == H) {
            h = 0;
            ++b;
          }
        }
      }
    }
    // 2. for each block of 16 output channels, all the strip's tiles
    for (int v0 = 0; v0 < nvec; v0 += 2) {
      const int V = std::min(2, nvec - v0), k0 = 8 * v0, KB = 8 * V, kvalid = K - k0;
      const float* wblk = wp + kblock_offset(k0, ntaps, C);
      const float* bb = bias ? bias + k0 : nullptr;
      for (int i = 0; i < ntile; ++i) {
        const int64_t q = strip_q[i];
        const float* const* rows = strip_rows[i];
        const float* rr = residual ? residual + q * K + k0 : nullptr;
        float* oo = out + q * K + k0;
        switch (strip_p[i]) {
          case 6: fwd_tile_v<6>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
          case 5: fwd_tile_v<5>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
          case 4: fwd_tile_v<4>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
          case 3: fwd_tile_v<3>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
          case 2: fwd_tile_v<2>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
          default: fwd_tile_v<1>(V, rows, ntaps, C, wblk, KB, bb, rr, relu, oo, K, kvalid); break;
        }
      }
    }
  }
}
#endif

template <typename T>
static void conv_forward_range_isa(const T* x, int H, int W, int C, const T* wp, int K, int R, const T* bias,
                                   const T* residual, bool relu, T* out, int64_t q0, int64_t q1) {
#ifdef MG_AVX2
  if constexpr (std::is_same_v<T, float>) {
    conv_forward_range_avx2(x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
    return;
  }
#endif
  conv_forward_range_portable(x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
}

// ---- convolution weight gradient -----------------------------------------------------------------------------
// G[t, r, v] += sum over images b in [b0, b1) and pixels (h, w) of A[b, h + dy_t, w + dx_t, r] * Bm[b, h, w, v]
// with (dy_t, dx_t) the tap's offset; pixels whose shifted A row is off the board contribute nothing.
// A has row stride Ca (rows r in [0, Rr)), Bm row stride Bs >= Vc, Vc a multiple of 8; G is (taps, Rr, Vc).
template <typename T>
static void wgrad_images_portable(const T* A, int Ca, int Rr, const T* Bm, int Bs, int Vc, int64_t b0,
                                  int64_t b1, int H, int W, int R, T* G) {
  const int pad = R / 2;
  for (int64_t b = b0; b < b1; ++b) {
    for (int t = 0; t < R * R; ++t) {
      const int dy = t / R - pad, dx = t % R - pad;
      const int h0 = std::max(0, -dy), h1 = std::min(H, H - dy), w0 = std::max(0, -dx), w1 = std::min(W, W - dx);
      T* Gt = G + static_cast<int64_t>(t) * Rr * Vc;
      for (int r = 0; r < Rr; ++r) {
        T* g = Gt + static_cast<int64_t>(r) * Vc;
        for (int h = h0; h < h1; ++h) {
          for (int w = w0; w < w1; ++w) {
            const T a = A[((b * H + h + dy) * W + w + dx) * Ca + r];
            const T* bv = Bm + ((b * H + h) * W + w) * Bs;
            for (int v = 0; v < Vc; ++v) g[v] += a * bv[v];
          }
        }
      }
    }
  }
}

#ifdef MG_AVX2
template <int RT, int V>
static inline __attribute__((always_inline)) void wgrad_tile(const float* A, int Ca, const float* Bm, int Bs,
                                                             int64_t b, int H, int W, int dy, int dx, int h0,
                                                             int h1, int w0, int w1, float* G, int Vc) {
  __m256 acc[RT][V];
#pragma GCC unroll 16
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_loadu_ps(G + static_cast<int64_t>(r) * Vc + 8 * v);
  for (int h = h0; h < h1; ++h) {
    const float* a = A + ((b * H + h + dy) * W + w0 + dx) * Ca;
    const float* bv = Bm + ((b * H + h) * W + w0) * Bs;
    for (int w = w0; w < w1; ++w, a += Ca, bv += Bs) {
      __m256 bb[V];
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) bb[v] = _mm256_loadu_ps(bv + 8 * v);
#pragma GCC unroll 16
      for (int r = 0; r < RT; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + r);
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bb[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) _mm256_storeu_ps(G + static_cast<int64_t>(r) * Vc + 8 * v, acc[r][v]);
}

template <int RT>
static inline void wgrad_tile_v(int V, const float* A, int Ca, const float* Bm, int Bs, int64_t b, int H, int W,
                                int dy, int dx, int h0, int h1, int w0, int w1, float* G, int Vc) {
  if (V == 2)
    wgrad_tile<RT, 2>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc);
  else
    wgrad_tile<RT, 1>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc);
}

static void wgrad_images_avx2(const float* A, int Ca, int Rr, const float* Bm, int Bs, int Vc, int64_t b0,
                              int64_t b1, int H, int W, int R, float* G) {
  constexpr int RTM = 6;  // A rows per register tile; x 2 vectors = 12 accumulators
  const int pad = R / 2, nvec = Vc / 8;
  for (int64_t b = b0; b < b1; ++b) {
    for (int t = 0; t < R * R; ++t) {
      const int dy = t / R - pad, dx = t % R - pad;
      const int h0 = std::max(0, -dy), h1 = std::min(H, H - dy), w0 = std::max(0, -dx), w1 = std::min(W, W - dx);
      for (int r0 = 0, RT; r0 < Rr; r0 += RT) {
        // tiles of RTM rows; a remainder of 7..11 rows is split in two near-equal tiles rather than leaving
        // a thin last tile with too few accumulators to hide the FMA latency
        const int left = Rr - r0;
        RT = left > RTM && left < 2 * RTM ? (left + 1) / 2 : std::min(RTM, left);
        for (int v0 = 0; v0 < nvec; v0 += 2) {
          const int V = std::min(2, nvec - v0);
          float* g = G + (static_cast<int64_t>(t) * Rr + r0) * Vc + 8 * v0;
          const float* a = A + r0;
          const float* bm = Bm + 8 * v0;
          switch (RT) {
            case 6: wgrad_tile_v<6>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
            case 5: wgrad_tile_v<5>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
            case 4: wgrad_tile_v<4>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
            case 3: wgrad_tile_v<3>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
            case 2: wgrad_tile_v<2>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
            default: wgrad_tile_v<1>(V, a, Ca, bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, g, Vc); break;
          }
        }
      }
    }
  }
}
#endif

template <typename T>
static void wgrad_images_isa(const T* A, int Ca, int Rr, const T* Bm, int Bs, int Vc, int64_t b0, int64_t b1,
                             int H, int W, int R, T* G) {
#ifdef MG_AVX2
  if constexpr (std::is_same_v<T, float>) {
    wgrad_images_avx2(A, Ca, Rr, Bm, Bs, Vc, b0, b1, H, W, R, G);
    return;
  }
#endif
  wgrad_images_portable(A, Ca, Rr, Bm, Bs, Vc, b0, b1, H, W, R, G);
}

// ---- BN + ReLU row-range loops (vectorised over the channels of NHWC rows) --------------------------------------
// Sums are accumulated in T over blocks of rows (vectorises fully), then added into double totals.
constexpr int64_t kBnBlock = 64;

template <typename T>
static void bn_stats_range(const T* x, int64_t m0, int64_t m1, int C, double* sum, double* sumsq) {
  std::vector<T> s(C), ss(C);
  for (int64_t mb = m0; mb < m1; mb += kBnBlock) {
    std::fill(s.begin(), s.end(), T(0));
    std::fill(ss.begin(), ss.end(), T(0));
    const int64_t me = std::min(m1, mb + kBnBlock);
    T* __restrict__ sp = s.data();
    T* __restrict__ ssp = ss.data();
    for (int64_t m = mb; m < me; ++m) {
      const T* __restrict__ xr = x + m * C;
      for (int c = 0; c < C; ++c) {
        const T v = xr[c];
        sp[c] += v;
        ssp[c] += v * v;
      }
    }
    for (int c = 0; c < C; ++c) {
      sum[c] += sp[c];
      sumsq[c] += ssp[c];
    }
  }
}

template <typename T>
static void bn_apply_range(const T* x, const T* res, int64_t m0, int64_t m1, int C, const T* scale,
                           const T* shift, T* y) {
  for (int64_t m = m0; m < m1; ++m) {
    const T* __restrict__ xr = x + m * C;
    T* __restrict__ yr = y + m * C;
    if (res) {
      const T* __restrict__ rr = res + m * C;
      for (int c = 0; c < C; ++c) {
        const T v = xr[c] * scale[c] + shift[c] + rr[c];
        yr[c] = v > T(0) ? v : T(0);
      }
    } else {
      for (int c = 0; c < C; ++c) {
        const T v = xr[c] * scale[c] + shift[c];
        yr[c] = v > T(0) ? v : T(0);
      }
    }
  }
}

// sums of g = dy * (y > 0) and of g * (x - mean) per channel
template <typename T>
static void bn_bwd_stats_range(const T* dy, const T* y, const T* x, int64_t m0, int64_t m1, int C, const T* mean,
                               double* sg, double* sgx) {
  std::vector<T> s(C), sx(C);
  for (int64_t mb = m0; mb < m1; mb += kBnBlock) {
    std::fill(s.begin(), s.end(), T(0));
    std::fill(sx.begin(), sx.end(), T(0));
    const int64_t me = std::min(m1, mb + kBnBlock);
    T* __restrict__ sp = s.data();
    T* __restrict__ sxp = sx.data();
    for (int64_t m = mb; m < me; ++m) {
      const T* __restrict__ d = dy + m * C;
      const T* __restrict__ yr = y + m * C;
      const T* __restrict__ xr = x + m * C;
      for (int c = 0; c < C; ++c) {
        const T g = yr[c] > T(0) ? d[c] : T(0);
        sp[c] += g;
        sxp[c] += g * (xr[c] - mean[c]);
      }
    }
    for (int c = 0; c < C; ++c) {
      sg[c] += sp[c];
      sgx[c] += sxp[c];
    }
  }
}

// dx = a * g + b * (x - mean) + c0 per channel; dres = g
template <typename T>
static void bn_bwd_apply_range(const T* dy, const T* y, const T* x, int64_t m0, int64_t m1, int C, const T* mean,
                               const T* ca, const T* cb, const T* cc, T* dx, T* dres) {
  for (int64_t m = m0; m < m1; ++m) {
    const T* __restrict__ d = dy + m * C;
    const T* __restrict__ yr = y + m * C;
    const T* __restrict__ xr = x + m * C;
    T* __restrict__ o = dx + m * C;
    for (int c = 0; c < C; ++c) {
      const T g = yr[c] > T(0) ? d[c] : T(0);
      o[c] = ca[c] * g + cb[c] * (xr[c] - mean[c]) + cc[c];
    }
    if (dres) {
      T* __restrict__ r = dres + m * C;
      for (int c = 0; c < C; ++c) r[c] = yr[c] > T(0) ? d[c] : T(0);
    }
  }
}

// ---- dense layers and the fused network --------------------------------------------------------------------------
// out[o] = b[o] + sum_i in[i] * wt[i, o] (zero inputs, common after ReLU, are skipped)
static void dense_forward(const float* in, int I, const float* wt, const float* b, int O, float* out) {
  for (int o = 0; o < O; ++o) out[o] = b[o];
  for (int i = 0; i < I; ++i) {
    const float a = in[i];
    if (a == 0.f) continue;
    const float* w = wt + static_cast<int64_t>(i) * O;
    for (int o = 0; o < O; ++o) out[o] += a * w[o];
  }
}

// 8 floats as a GCC vector (one AVX register in the AVX2 build, two SSE registers in the portable one)
// (static helpers, always inlined: the -Wpsabi note about passing them without AVX does not apply)
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v8f __attribute__((vector_size(32)));
static inline v8f ld8(const float* p) {
  v8f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
static inline void st8(float* p, v8f v) { std::memcpy(p, &v, sizeof(v)); }

// Winograd F(2x2, 3x3) conv3x3 for the fused inference path (fewer multiplications: 16 per 2x2 outputs instead
// of 36): per tile of 2x2 outputs, the 4x4 input patch is transformed (V = B^T d B), then for each of the 16
// transform points a (tiles x C) by (C x K) product runs on the same broadcast-FMA kernel as the direct conv
// (as a 1x1 conv), then the output transform (Y = A^T M A) adds bias and residual and applies the ReLU.
// x, residual, out: nb images of H x W pixels, NHWC. wino: 16 packed (C -> K) weight sets (U = G g G^T).
static void winograd_conv(const float* x, int64_t nb, int H, int W, int C, const float* wino, int K,
                          const float* bias, const float* residual, bool relu, float* out) {
  constexpr int64_t kTiles = 48;  // tiles per chunk: V and M stay in L2
  const int TW = (W + 1) / 2, TPI = ((H + 1) / 2) * TW;
  const int64_t T = nb * TPI, wstride = static_cast<int64_t>(C) * round_up8(K);
  thread_local std::vector<float> V, M, zero;
  V.resize(16 * kTiles * C);
  M.resize(16 * kTiles * K);
  zero.assign(C, 0.f);
  for (int64_t t0 = 0; t0 < T; t0 += kTiles) {
    const int64_t nt = std::min(kTiles, T - t0);
    for (int64_t i = 0; i < nt; ++i) {  // input transform
      const int64_t tile = t0 + i, b = tile / TPI;
      const int ty = static_cast<int>(tile % TPI) / TW, tx = static_cast<int>(tile % TPI) % TW;
      const float* d[4][4];
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) {
          const int h = 2 * ty - 1 + r, w = 2 * tx - 1 + s;
          d[r][s] = (h < 0 || h >= H || w < 0 || w >= W) ? zero.data() : x + ((b * H + h) * W + w) * C;
        }
      float* v = V.data() + i * C;
      const int64_t vs = kTiles * C;  // stride between transform points
      int c = 0;
      for (; c + 8 <= C; c += 8) {  // 8 channels at a time
        v8f t[4][4];
        for (int s = 0; s < 4; ++s) {
          const v8f d0 = ld8(d[0][s] + c), d1 = ld8(d[1][s] + c), d2 = ld8(d[2][s] + c), d3 = ld8(d[3][s] + c);
          t[0][s] = d0 - d2;
          t[1][s] = d1 + d2;
          t[2][s] = d2 - d1;
          t[3][s] = d1 - d3;
        }
        for (int r = 0; r < 4; ++r) {
          st8(v + (4 * r + 0) * vs + c, t[r][0] - t[r][2]);
          st8(v + (4 * r + 1) * vs + c, t[r][1] + t[r][2]);
          st8(v + (4 * r + 2) * vs + c, t[r][2] - t[r][1]);
          st8(v + (4 * r + 3) * vs + c, t[r][1] - t[r][3]);
        }
      }
      for (; c < C; ++c) {
        float t[4][4];
        for (int s = 0; s < 4; ++s) {
          t[0][s] = d[0][s][c] - d[2][s][c];
          t[1][s] = d[1][s][c] + d[2][s][c];
          t[2][s] = d[2][s][c] - d[1][s][c];
          t[3][s] = d[1][s][c] - d[3][s][c];
        }
        for (int r = 0; r < 4; ++r) {
          v[(4 * r + 0) * vs + c] = t[r][0] - t[r][2];
          v[(4 * r + 1) * vs + c] = t[r][1] + t[r][2];
          v[(4 * r + 2) * vs + c] = t[r][2] - t[r][1];
          v[(4 * r + 3) * vs + c] = t[r][1] - t[r][3];
        }
      }
    }
    for (int xi = 0; xi < 16; ++xi)  // the 16 products, each a 1x1 conv over the chunk's tiles
      conv_forward_range_isa<float>(V.data() + xi * kTiles * C, 1, static_cast<int>(nt), C, wino + xi * wstride,
                                    K, 1, nullptr, nullptr, false, M.data() + xi * kTiles * K, 0, nt);
    for (int64_t i = 0; i < nt; ++i) {  // output transform, bias, residual, ReLU
      const int64_t tile = t0 + i, b = tile / TPI;
      const int ty = static_cast<int>(tile % TPI) / TW, tx = static_cast<int>(tile % TPI) % TW;
      const float* m = M.data() + i * K;
      const int64_t ms = kTiles * K;
      float* o[2][2];
      const float* rs[2][2];
      bool ok[2][2];
      for (int r = 0; r < 2; ++r)
        for (int s = 0; s < 2; ++s) {
          const int h = 2 * ty + r, w = 2 * tx + s;
          ok[r][s] = h < H && w < W;
          const int64_t q = ok[r][s] ? (b * H + h) * W + w : 0;
          o[r][s] = out + q * K;
          rs[r][s] = residual ? residual + q * K : nullptr;
        }
      int k = 0;
      const v8f vzero = {0, 0, 0, 0, 0, 0, 0, 0};
      for (; k + 8 <= K; k += 8) {  // 8 output channels at a time
        v8f t[2][4];
        for (int s = 0; s < 4; ++s) {
          const v8f m0 = ld8(m + (0 + s) * ms + k), m1 = ld8(m + (4 + s) * ms + k), m2 = ld8(m + (8 + s) * ms + k),
                    m3 = ld8(m + (12 + s) * ms + k);
          t[0][s] = m0 + m1 + m2;
          t[1][s] = m1 - m2 - m3;
        }
        const v8f bk = ld8(bias + k);
        for (int r = 0; r < 2; ++r) {
          const v8f y[2] = {t[r][0] + t[r][1] + t[r][2], t[r][1] - t[r][2] - t[r][3]};
          for (int s = 0; s < 2; ++s) {
            if (!ok[r][s]) continue;
            v8f val = y[s] + bk;
            if (rs[r][s]) val += ld8(rs[r][s] + k);
            if (relu) val = val > vzero ? val : vzero;
            st8(o[r][s] + k, val);
          }
        }
      }
      for (; k < K; ++k) {
        float t[2][4];
        for (int s = 0; s < 4; ++s) {
          const float m0 = m[(0 + s) * ms + k], m1 = m[(4 + s) * ms + k], m2 = m[(8 + s) * ms + k],
                      m3 = m[(12 + s) * ms + k];
          t[0][s] = m0 + m1 + m2;
          t[1][s] = m1 - m2 - m3;
        }
        for (int r = 0; r < 2; ++r) {
          const float y[2] = {t[r][0] + t[r][1] + t[r][2], t[r][1] - t[r][2] - t[r][3]};
          for (int s = 0; s < 2; ++s) {
            if (!ok[r][s]) continue;
            float val = y[s] + bias[k];
            if (rs[r][s]) val += rs[r][s][k];
            if (relu) val = val > 0.f ? val : 0.f;
            o[r][s][k] = val;
          }
        }
      }
    }
  }
}

// Runs images [b0, b1) of the batch through the whole network on the calling core.
static void fused_run_images(const FusedNetCore& net, const void* input, bool is_u8, int64_t b0, int64_t b1,
                             bool softmax, float* policy, float* value) {
  const int N = net.N, HW = N * N, P = net.planes, F = net.filters;
  const int64_t nb = b1 - b0, npix = nb * HW;
  if (nb <= 0) return;
  thread_local std::vector<float> in_buf, buf0, buf1, buf2, head;
  in_buf.resize(npix * P);
  const size_t act = static_cast<size_t>(npix) * F;
  buf0.resize(act);
  buf1.resize(act);
  buf2.resize(act);
  head.resize(static_cast<size_t>(HW) * 2 + 2 * (HW + 1) + net.fc + 8);
  // NCHW input -> NHWC float
  for (int64_t b = 0; b < nb; ++b) {
    float* dst = in_buf.data() + b * HW * P;
    if (is_u8) {
      const uint8_t* src = static_cast<const uint8_t*>(input) + (b0 + b) * HW * P;
      for (int c = 0; c < P; ++c)
        for (int q = 0; q < HW; ++q) dst[q * P + c] = static_cast<float>(src[c * HW + q]);
    } else {
      const float* src = static_cast<const float*>(input) + (b0 + b) * HW * P;
      for (int c = 0; c < P; ++c)
        for (int q = 0; q < HW; ++q) dst[q * P + c] = src[c * HW + q];
    }
  }
  const bool use_winograd = winograd_enabled();
  auto conv = [&](const FusedConv& L, const float* x, const float* res, float* out) {
    if (use_winograd && !L.wino.empty())
      winograd_conv(x, nb, N, N, L.C, L.wino.data(), L.K, L.bias.data(), res, true, out);
    else
      conv_forward_range_isa<float>(x, N, N, L.C, L.w.data(), L.K, L.R, L.bias.data(), res, true, out, 0, npix);
  };
  float *h = buf0.data(), *r = buf1.data(), *h2 = buf2.data();
  conv(net.convs[0], in_buf.data(), nullptr, h);
  for (int k = 0; k < net.blocks; ++k) {
    conv(net.convs[1 + 2 * k], h, nullptr, r);
    conv(net.convs[2 + 2 * k], r, h, h2);
    std::swap(h, h2);
  }
  const FusedConv& pol = net.convs[1 + 2 * net.blocks];
  const FusedConv& val = net.convs[2 + 2 * net.blocks];
  float* pfeat = head.data();              // 2*HW
  float* logits = pfeat + 2 * HW;          // HW + 1
  float* vfeat = logits + (HW + 1);        // HW
  float* hidden = vfeat + HW + 1;          // fc
  for (int64_t b = 0; b < nb; ++b) {
    const float* hb = h + b * HW * F;
    conv_forward_range_isa<float>(hb, N, N, F, pol.w.data(), 2, 1, pol.bias.data(), nullptr, true, pfeat, 0, HW);
    conv_forward_range_isa<float>(hb, N, N, F, val.w.data(), 1, 1, val.bias.data(), nullptr, true, vfeat, 0, HW);
    float* out_p = policy + (b0 + b) * (HW + 1);
    dense_forward(pfeat, 2 * HW, net.policy_wt.data(), net.policy_b.data(), HW + 1, logits);
    if (softmax) {
      float mx = logits[0];
      for (int i = 1; i <= HW; ++i) mx = std::max(mx, logits[i]);
      double s = 0;
      for (int i = 0; i <= HW; ++i) {
        out_p[i] = std::exp(logits[i] - mx);
        s += out_p[i];
      }
      const float inv = static_cast<float>(1.0 / s);
      for (int i = 0; i <= HW; ++i) out_p[i] *= inv;
    } else {
      std::memcpy(out_p, logits, sizeof(float) * (HW + 1));
    }
    dense_forward(vfeat, HW, net.value_w1t.data(), net.value_b1.data(), net.fc, hidden);
    double v = net.value_b2;
    for (int i = 0; i < net.fc; ++i) v += static_cast<double>(std::max(hidden[i], 0.f)) * net.value_w2[i];
    value[b0 + b] = static_cast<float>(std::tanh(v));
  }
}

// ---- FP32 peak: independent FMA chains, enough to cover FMA latency x FMA ports ---------------------------------
static double fma_loop(int64_t iters) {
#ifdef MG_AVX2
  __m256 a[10];
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 10; ++i) a[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 10
    for (int i = 0; i < 10; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
  }
  __m256 s = a[0];
  for (int i = 1; i < 10; ++i) s = _mm256_add_ps(s, a[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
#else
  float a[10][8];
  for (int i = 0; i < 10; ++i)
    for (int l = 0; l < 8; ++l) a[i][l] = static_cast<float>(i);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 10; ++i)
      for (int l = 0; l < 8; ++l) a[i][l] = a[i][l] * 0.999999f + 1e-7f;
  double s = 0;
  for (int i = 0; i < 10; ++i) s += a[i][0];
  return s;
#endif
}
// flops per fma_loop iteration: 10 vectors x 8 lanes x 2
