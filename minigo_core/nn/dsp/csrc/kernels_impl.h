// Kernel bodies, included by kernels.cpp once per build, each inside its own namespace and instruction set:
//   `avx512`     under `#pragma GCC target("avx512f,avx2,fma")` with MG_AVX512 defined (16 lanes,
//                32 registers),
//   `avx2`       under `#pragma GCC target("avx2,fma")` with MG_AVX2 defined (8 lanes, 16 registers),
//   `portable`   with neither: GCC vectors of 8 floats the compiler maps onto whatever the target has (NEON
//                on Arm, SSE on a plain x86-64), every multiply-add an explicit fused multiply-add;
//   `portable16` the same with MG_PORTABLE16: 16 lanes and 24 accumulators, the AVX-512 build's tile shapes
//                on any CPU, so that its tiling (8-wide last blocks under 16 lanes) is tested where AVX-512
//                is not.
// The kernels are written once, against the small vector vocabulary below (VF, kLanes, vload, vfma, ...), so
// the four builds have the same loop structure: NHWC, K output channels across the lanes of a few registers,
// one input value broadcast and multiplied with them (broadcast-FMA), P pixels per register tile.
// Because the lanes are output channels, every output's sum runs over (tap, input channel) in the same order
// whatever the vector width, and every step is one FMA (rounded once): the float results of the four builds
// are identical (tests/unit/test_dsp_isa.py). No include guard on purpose. Expects <algorithm>, <cmath>,
// <cstdint>, <cstring>, <vector> (and <immintrin.h> on x86) to be included by the includer.

// ---- the vector vocabulary of this build ------------------------------------------------------------------
#pragma GCC diagnostic ignored "-Wpsabi"  // static, always-inlined vector helpers: no ABI is crossed
#if defined(MG_AVX512)
constexpr int kLanes = 16;  // floats per register
constexpr int kAcc = 24;    // accumulator registers of a tile (32 zmm: 24 + weights + broadcast)
typedef __m512 VF;
static inline __mmask16 lane_bits(int n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }
static inline VF vzero() { return _mm512_setzero_ps(); }
static inline VF vload(const float* p) { return _mm512_loadu_ps(p); }
static inline VF vloadn(const float* p, int n) { return _mm512_maskz_loadu_ps(lane_bits(n), p); }
static inline void vstore(float* p, VF a) { _mm512_storeu_ps(p, a); }
static inline void vstoren(float* p, VF a, int n) { _mm512_mask_storeu_ps(p, lane_bits(n), a); }
static inline VF vbcast(const float* p) { return _mm512_set1_ps(*p); }
static inline VF vfma(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
static inline VF vadd(VF a, VF b) { return _mm512_add_ps(a, b); }
static inline VF vrelu(VF a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }  // a > 0 ? a : +0
#elif defined(MG_AVX2)
constexpr int kLanes = 8;
constexpr int kAcc = 12;  // 16 ymm: 12 + 2 weights + broadcast
typedef __m256 VF;
static inline __m256i lane_mask(int n) {  // first n lanes on
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline VF vzero() { return _mm256_setzero_ps(); }
static inline VF vload(const float* p) { return _mm256_loadu_ps(p); }
static inline VF vloadn(const float* p, int n) { return _mm256_maskload_ps(p, lane_mask(n)); }
static inline void vstore(float* p, VF a) { _mm256_storeu_ps(p, a); }
static inline void vstoren(float* p, VF a, int n) { _mm256_maskstore_ps(p, lane_mask(n), a); }
static inline VF vbcast(const float* p) { return _mm256_broadcast_ss(p); }
static inline VF vfma(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
static inline VF vadd(VF a, VF b) { return _mm256_add_ps(a, b); }
static inline VF vrelu(VF a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
#else
// portable16: the AVX-512 build's shapes (16 lanes, 24 accumulators) in portable code: tests its tiling
#ifdef MG_PORTABLE16
constexpr int kLanes = 16;
constexpr int kAcc = 24;
#else
constexpr int kLanes = 8;
constexpr int kAcc = 12;
#endif
typedef float VF __attribute__((vector_size(4 * kLanes)));
static inline VF vzero() { return VF{}; }
static inline VF vload(const float* p) {
  VF v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
static inline VF vloadn(const float* p, int n) {
  VF v{};
  for (int i = 0; i < n && i < kLanes; ++i) v[i] = p[i];
  return v;
}
static inline void vstore(float* p, VF a) { std::memcpy(p, &a, sizeof(a)); }
static inline void vstoren(float* p, VF a, int n) {
  for (int i = 0; i < n && i < kLanes; ++i) p[i] = a[i];
}
static inline VF vbcast(const float* p) { return VF{} + *p; }
// one rounding per lane, as the FMA instructions of the other builds: inlined where the target has a vector
// FMA (Arm's NEON/SVE, an x86 build with -mfma), where the compiler turns the lanes into one instruction;
// else (a plain x86-64 build) libm's fmaf per lane, exact but slow, out of line so the tiles stay small.
#if defined(__FMA__) || defined(__aarch64__) || defined(__ARM_FEATURE_FMA)
static inline VF vfma(VF a, VF b, VF c) {
  VF r;
#pragma GCC unroll 16
  for (int i = 0; i < kLanes; ++i) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
  return r;
}
#else
__attribute__((noinline)) static VF vfma(VF a, VF b, VF c) {
  VF r;
  for (int i = 0; i < kLanes; ++i) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
  return r;
}
#endif
static inline VF vadd(VF a, VF b) { return a + b; }
static inline VF vrelu(VF a) { return a > VF{} ? a : VF{}; }
#endif
#define MG_INLINE inline __attribute__((always_inline))

// ---- convolution forward ----------------------------------------------------------------------------------
// The scalar reference loop, used for double (gradcheck) only.
template <typename T>
static void conv_forward_range_scalar(const T* x, int H, int W, int C, const T* wp, int K, int R,
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
        if (hh < 0 || hh >= H || ww < 0 || ww >= W) continue;
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

// One input channel c of a register tile: NV weight vectors loaded (w[v] then advanced by ws[v]; PART: the
// last has wl floats), x[p][c] broadcast, P x NV FMAs. Shared by the direct conv and the Winograd products.
template <int P, int NV, bool PART>
static MG_INLINE void bfma_step(VF (&acc)[P][NV], const float* const* x, int c, const float** w,
                                const int* ws, int wl) {
  VF wv[NV];
#pragma GCC unroll 32
  for (int v = 0; v < NV; ++v) {
    wv[v] = (PART && v == NV - 1) ? vloadn(w[v], wl) : vload(w[v]);
    w[v] += ws[v];
  }
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p) {
    const VF a = vbcast(x[p] + c);
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) acc[p][v] = vfma(a, wv[v], acc[p][v]);
  }
}

// Where the weights of output-channel vectors v0 .. v0+nv-1 start in the packed blocks (w0), their row stride
// (ws: the block's width) and the floats of the last one (returned: kLanes, or 8 for an 8-wide block under
// 16).
static inline int weight_group(const float* wp, int taps, int C, int Kpad, int v0, int nv, const float** w0,
                               int* ws) {
  int wl = kLanes;
  for (int v = 0; v < nv; ++v) {
    const int kv = kLanes * (v0 + v), kb = kv / kKBlock * kKBlock;
    w0[v] = wp + kblock_offset(kb, taps, C) + (kv - kb);
    ws[v] = kblock_width(kb, Kpad);
    if (v == nv - 1) wl = std::min(kLanes, Kpad - kv);
  }
  return wl;
}

// One register tile: P pixels x NV vectors of output channels, accumulated over taps x C. rows[t * P + p] is
// pixel p's input row for tap t (a shared zero row stands for the padding); w[v] walks vector v's weights,
// one (tap, c) row of wstride[v] floats at a time (the packed blocks are 16 channels wide, the last one may
// be 8). PART: the last vector has only wlanes floats of weights (an 8-wide block under 16 lanes). The tile
// computes P pixels but stores only the first pvalid (the last tile of a range); kvalid output channels are
// stored.
template <int P, int NV, bool PART>
static MG_INLINE void fwd_tile(const float* const* rows, int ntaps, int C, const float* const* w0,
                               const int* wstride, int wlanes, const float* bias, const float* residual,
                               bool relu, float* out, int K, int kvalid, int pvalid) {
  VF acc[P][NV];
#pragma GCC unroll 32
  for (int v = 0; v < NV; ++v) {
    const VF b0 = !bias                   ? vzero()
                  : (PART && v == NV - 1) ? vloadn(bias + kLanes * v, wlanes)
                                          : vload(bias + kLanes * v);
#pragma GCC unroll 32
    for (int p = 0; p < P; ++p) acc[p][v] = b0;
  }
  const float* w[NV];
  int ws[NV];
#pragma GCC unroll 32
  for (int v = 0; v < NV; ++v) {
    w[v] = w0[v];
    ws[v] = wstride[v];
  }
  for (int t = 0; t < ntaps; ++t) {
    const float* x[P];
#pragma GCC unroll 32
    for (int p = 0; p < P; ++p) x[p] = rows[t * P + p];
    for (int c = 0; c < C; ++c) bfma_step<P, NV, PART>(acc, x, c, w, ws, wlanes);
  }
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p) {
    if (p >= pvalid) break;
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) {
      const int n = kvalid - kLanes * v;  // valid output channels in this vector
      if (n <= 0) break;
      float* o = out + static_cast<int64_t>(p) * K + kLanes * v;
      const float* r = residual ? residual + static_cast<int64_t>(p) * K + kLanes * v : nullptr;
      VF s = acc[p][v];
      if (n >= kLanes) {
        if (r) s = vadd(s, vload(r));
        if (relu) s = vrelu(s);
        vstore(o, s);
      } else {
        if (r) s = vadd(s, vloadn(r, n));
        if (relu) s = vrelu(s);
        vstoren(o, s, n);
      }
    }
  }
}

// Tile shapes: NV vectors of output channels (kLanes each) x P pixels, P * NV = kAcc accumulators.
constexpr int kNVMax = 2;
template <int P>
static void fwd_tile_nv(int nv, bool part, const float* const* rows, int ntaps, int C, const float* const* w0,
                        const int* ws, int wl, const float* bias, const float* res, bool relu, float* out,
                        int K, int kvalid, int pvalid) {
  if constexpr (kLanes == 16) {  // a partial (8-wide) weight block only exists under 16 lanes
    if (part) {
      if constexpr (2 * P <= kAcc) {
        if (nv == 2) {
          fwd_tile<P, 2, true>(rows, ntaps, C, w0, ws, wl, bias, res, relu, out, K, kvalid, pvalid);
          return;
        }
      }
      fwd_tile<P, 1, true>(rows, ntaps, C, w0, ws, wl, bias, res, relu, out, K, kvalid, pvalid);
      return;
    }
  }
  if constexpr (2 * P <= kAcc) {
    if (nv == 2) {
      fwd_tile<P, 2, false>(rows, ntaps, C, w0, ws, wl, bias, res, relu, out, K, kvalid, pvalid);
      return;
    }
  }
  fwd_tile<P, 1, false>(rows, ntaps, C, w0, ws, wl, bias, res, relu, out, K, kvalid, pvalid);
}

// out[q, k] = relu?(bias[k] + sum_{t, c} x[q shifted by tap t, c] * wp[t, c, k] + residual[q, k]), q in [q0,
// q1). Tiles of P pixels are grouped in strips of ST; for each strip the groups of output-channel vectors are
// the outer loop, so one group's weights stay in L1 while all the strip's tiles use them.
template <int P>
static void conv_forward_range_tiled(const float* x, int H, int W, int C, const float* wp, int K, int R,
                                     const float* bias, const float* residual, bool relu, float* out,
                                     int64_t q0, int64_t q1) {
  constexpr int ST = std::max(2, 48 / P);
  const int Kpad = round_up8(K), nvec = (Kpad + kLanes - 1) / kLanes, pad = R / 2, HW = H * W, ntaps = R * R;
  thread_local std::vector<float> zero_row;
  if (static_cast<int>(zero_row.size()) < C) zero_row.assign(C, 0.f);
  const float* strip_rows[ST][9 * P];
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
    // 1. locate the input rows of every tap of every pixel of the strip's tiles (past q1: the zero row)
    int ntile = 0;
    for (; ntile < ST && qs < q1; ++ntile) {
      const int pv = static_cast<int>(std::min<int64_t>(P, q1 - qs));
      strip_p[ntile] = pv;
      strip_q[ntile] = qs;
      qs += pv;
      const float** rows = strip_rows[ntile];
      for (int p = 0; p < P; ++p) {
        const float* img = x + b * HW * C;
        for (int t = 0; t < ntaps; ++t) {
          const int hh = h + tdy[t], ww = w + tdx[t];
          rows[t * P + p] = (p >= pv || hh < 0 || hh >= H || ww < 0 || ww >= W)
                                ? zero_row.data()
                                : img + (static_cast<int64_t>(hh) * W + ww) * C;
        }
        if (p >= pv) continue;
        if (++w == W) {
          w = 0;
          if (++h == H) {
            h = 0;
            ++b;
          }
        }
      }
    }
    // 2. for each group of up to kNVMax vectors of output channels, all the strip's tiles
    for (int v0 = 0; v0 < nvec; v0 += kNVMax) {
      const int nv = std::min(kNVMax, nvec - v0), k0 = kLanes * v0;
      const float* w0[kNVMax];
      int ws[kNVMax];
      const int wl = weight_group(wp, ntaps, C, Kpad, v0, nv, w0, ws);
      const bool part = wl < kLanes;
      const float* bb = bias ? bias + k0 : nullptr;
      for (int i = 0; i < ntile; ++i) {
        const int64_t q = strip_q[i];
        const float* rr = residual ? residual + q * K + k0 : nullptr;
        fwd_tile_nv<P>(nv, part, strip_rows[i], ntaps, C, w0, ws, wl, bb, rr, relu, out + q * K + k0, K,
                       K - k0, strip_p[i]);
      }
    }
  }
}

template <typename T>
static void conv_forward_range_isa(const T* x, int H, int W, int C, const T* wp, int K, int R, const T* bias,
                                   const T* residual, bool relu, T* out, int64_t q0, int64_t q1) {
  if constexpr (std::is_same_v<T, float>) {
    const int nvec = (round_up8(K) + kLanes - 1) / kLanes;
    if (nvec >= 2)  // 2 vectors of channels per tile (one 16-channel block at 8 lanes, two at 16)
      conv_forward_range_tiled<kAcc / 2>(x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
    else  // few output channels (the policy and value heads): 1 vector, twice the pixels
      conv_forward_range_tiled<kAcc>(x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
  } else {
    conv_forward_range_scalar(x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
  }
}

// ---- convolution weight gradient --------------------------------------------------------------------------
// G[t, r, v] += sum over images b in [b0, b1) and pixels (h, w) of A[b, h + dy_t, w + dx_t, r] * Bm[b, h, w,
// v] with (dy_t, dx_t) the tap's offset; pixels whose shifted A row is off the board contribute nothing. A
// has row stride Ca (rows r in [0, Rr)), Bm row stride Bs >= Vc, Vc a multiple of 8; G is (taps, Rr, Vc).
template <typename T>
static void wgrad_images_scalar(const T* A, int Ca, int Rr, const T* Bm, int Bs, int Vc, int64_t b0,
                                int64_t b1, int H, int W, int R, T* G) {
  const int pad = R / 2;
  for (int64_t b = b0; b < b1; ++b) {
    for (int t = 0; t < R * R; ++t) {
      const int dy = t / R - pad, dx = t % R - pad;
      const int h0 = std::max(0, -dy), h1 = std::min(H, H - dy), w0 = std::max(0, -dx),
                w1 = std::min(W, W - dx);
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

// RT rows of A x V vectors of Vc, accumulated in registers over the tap's pixels; the last vector has vl
// lanes.
template <int RT, int V, bool PART>
static MG_INLINE void wgrad_tile(const float* A, int Ca, const float* Bm, int Bs, int64_t b, int H, int W,
                                 int dy, int dx, int h0, int h1, int w0, int w1, float* G, int Vc, int vl) {
  VF acc[RT][V];
#pragma GCC unroll 32
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
      const float* g = G + static_cast<int64_t>(r) * Vc + kLanes * v;
      acc[r][v] = (PART && v == V - 1) ? vloadn(g, vl) : vload(g);
    }
  for (int h = h0; h < h1; ++h) {
    const float* a = A + ((b * H + h + dy) * W + w0 + dx) * Ca;
    const float* bv = Bm + ((b * H + h) * W + w0) * Bs;
    for (int w = w0; w < w1; ++w, a += Ca, bv += Bs) {
      VF bb[V];
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v)
        bb[v] = (PART && v == V - 1) ? vloadn(bv + kLanes * v, vl) : vload(bv + kLanes * v);
#pragma GCC unroll 32
      for (int r = 0; r < RT; ++r) {
        const VF av = vbcast(a + r);
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) acc[r][v] = vfma(av, bb[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
      float* g = G + static_cast<int64_t>(r) * Vc + kLanes * v;
      if (PART && v == V - 1)
        vstoren(g, acc[r][v], vl);
      else
        vstore(g, acc[r][v]);
    }
}

// Dispatches a run-time row count rt in [1, RT] and vector count v in {1, 2} to the compiled tile.
template <int RT>
static void wgrad_tile_rt(int rt, int V, bool part, const float* A, int Ca, const float* Bm, int Bs,
                          int64_t b, int H, int W, int dy, int dx, int h0, int h1, int w0, int w1, float* G,
                          int Vc, int vl) {
  if constexpr (RT > 1) {
    if (rt < RT) {
      wgrad_tile_rt<RT - 1>(rt, V, part, A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc, vl);
      return;
    }
  }
  if constexpr (kLanes == 16) {
    if (part) {
      if (V == 2)
        wgrad_tile<RT, 2, true>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc, vl);
      else
        wgrad_tile<RT, 1, true>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc, vl);
      return;
    }
  }
  if (V == 2)
    wgrad_tile<RT, 2, false>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc, vl);
  else
    wgrad_tile<RT, 1, false>(A, Ca, Bm, Bs, b, H, W, dy, dx, h0, h1, w0, w1, G, Vc, vl);
}

static void wgrad_images_vec(const float* A, int Ca, int Rr, const float* Bm, int Bs, int Vc, int64_t b0,
                             int64_t b1, int H, int W, int R, float* G) {
  constexpr int RTM = kAcc / 2;  // A rows per register tile; x 2 vectors = kAcc accumulators
  const int pad = R / 2, nvec = (Vc + kLanes - 1) / kLanes;
  for (int64_t b = b0; b < b1; ++b) {
    for (int t = 0; t < R * R; ++t) {
      const int dy = t / R - pad, dx = t % R - pad;
      const int h0 = std::max(0, -dy), h1 = std::min(H, H - dy), w0 = std::max(0, -dx),
                w1 = std::min(W, W - dx);
      for (int r0 = 0, RT; r0 < Rr; r0 += RT) {
        // tiles of RTM rows; a remainder of RTM+1..2RTM-1 rows is split in two near-equal tiles rather than
        // leaving a thin last tile with too few accumulators to hide the FMA latency
        const int left = Rr - r0;
        RT = left > RTM && left < 2 * RTM ? (left + 1) / 2 : std::min(RTM, left);
        for (int v0 = 0; v0 < nvec; v0 += 2) {
          const int V = std::min(2, nvec - v0), vl = std::min(kLanes, Vc - kLanes * (v0 + V - 1));
          float* g = G + (static_cast<int64_t>(t) * Rr + r0) * Vc + kLanes * v0;
          wgrad_tile_rt<RTM>(RT, V, vl < kLanes, A + r0, Ca, Bm + kLanes * v0, Bs, b, H, W, dy, dx, h0, h1,
                             w0, w1, g, Vc, vl);
        }
      }
    }
  }
}

template <typename T>
static void wgrad_images_isa(const T* A, int Ca, int Rr, const T* Bm, int Bs, int Vc, int64_t b0, int64_t b1,
                             int H, int W, int R, T* G) {
  if constexpr (std::is_same_v<T, float>)
    wgrad_images_vec(A, Ca, Rr, Bm, Bs, Vc, b0, b1, H, W, R, G);
  else
    wgrad_images_scalar(A, Ca, Rr, Bm, Bs, Vc, b0, b1, H, W, R, G);
}

// ---- BN + ReLU row-range loops (vectorised over the channels of NHWC rows) --------------------------------
// Sums are accumulated in T over blocks of rows (vectorises fully), then added into double totals.
constexpr int64_t kBnBlock = 64;

// Rows of 1 to 4 channels (the policy and value heads' BN) on the generic loop compiled for that channel
// count (CC): the per-channel sums stay in registers, the same expressions in the same order (the same
// floats); inside the generic instance (CC = 0) only.
#define MG_BN_FEW(Crt, fn, ...)                \
  do {                                         \
    if constexpr (CC == 0) switch (Crt) {      \
        case 1: fn<T, 1>(__VA_ARGS__); return; \
        case 2: fn<T, 2>(__VA_ARGS__); return; \
        case 3: fn<T, 3>(__VA_ARGS__); return; \
        case 4: fn<T, 4>(__VA_ARGS__); return; \
        default: break;                        \
      }                                        \
  } while (0)

#include "bn_vec_impl.h"  // NOLINT(build/include_what_you_use): float rows of whole vectors

template <typename T, int CC = 0>
static void bn_stats_range(const T* x, int64_t m0, int64_t m1, int Crt, double* sum, double* sumsq) {
  MG_BN_VEC(T, Crt, bn_stats_vec, x, m0, m1, sum, sumsq);
  MG_BN_FEW(Crt, bn_stats_range, x, m0, m1, Crt, sum, sumsq);
  const int C = CC ? CC : Crt;
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

template <typename T, int CC = 0>
static void bn_apply_range(const T* x, const T* res, int64_t m0, int64_t m1, int Crt, const T* scale,
                           const T* shift, T* y) {
  MG_BN_VEC(T, Crt, bn_apply_vec, x, res, m0, m1, scale, shift, y);
  MG_BN_FEW(Crt, bn_apply_range, x, res, m0, m1, Crt, scale, shift, y);
  const int C = CC ? CC : Crt;
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

// y > 0 ? d : +0 without a branch (on random signs a branch is mispredicted per element, which costs the
// generic loops far more than their arithmetic): d's bits masked, so the value is exactly the select's
template <typename T>
static MG_INLINE T pass_if_pos(T y, T d) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U b;
  std::memcpy(&b, &d, sizeof(b));
  b &= U(0) - static_cast<U>(y > T(0));
  std::memcpy(&d, &b, sizeof(b));
  return d;
}

// The ReLU's pre-activation of row element c: the stored ReLU output yr[c] or, with y null, the forward's
// x * scale + shift recomputed (the same floats; see BnMask)
template <typename T>
static MG_INLINE T relu_in(const T* yr, const T* xr, const T* scale, const T* shift, int c) {
  return yr ? yr[c] : xr[c] * scale[c] + shift[c];
}

// sums of g = dy * (y > 0) and of g * (x - mean) per channel (y null: the mask from x, scale and shift)
template <typename T, int CC = 0>
static void bn_bwd_stats_range(const T* dy, const T* y, const T* x, int64_t m0, int64_t m1, int Crt,
                               const T* mean, const T* scale, const T* shift, double* sg, double* sgx) {
  MG_BN_VEC(T, Crt, bn_bwd_stats_vec, dy, y, x, m0, m1, mean, scale, shift, sg, sgx);
  MG_BN_FEW(Crt, bn_bwd_stats_range, dy, y, x, m0, m1, Crt, mean, scale, shift, sg, sgx);
  const int C = CC ? CC : Crt;
  std::vector<T> s(C), sx(C);
  for (int64_t mb = m0; mb < m1; mb += kBnBlock) {
    std::fill(s.begin(), s.end(), T(0));
    std::fill(sx.begin(), sx.end(), T(0));
    const int64_t me = std::min(m1, mb + kBnBlock);
    T* __restrict__ sp = s.data();
    T* __restrict__ sxp = sx.data();
    for (int64_t m = mb; m < me; ++m) {
      const T* __restrict__ d = dy + m * C;
      const T* __restrict__ yr = y ? y + m * C : nullptr;
      const T* __restrict__ xr = x + m * C;
      for (int c = 0; c < C; ++c) {
        const T g = pass_if_pos(relu_in(yr, xr, scale, shift, c), d[c]);
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
template <typename T, int CC = 0>
static void bn_bwd_apply_range(const T* dy, const T* y, const T* x, int64_t m0, int64_t m1, int Crt,
                               const T* mean, const T* scale, const T* shift, const T* ca, const T* cb,
                               const T* cc, T* dx, T* dres) {
  MG_BN_VEC(T, Crt, bn_bwd_apply_vec, dy, y, x, m0, m1, mean, scale, shift, ca, cb, cc, dx, dres);
  MG_BN_FEW(Crt, bn_bwd_apply_range, dy, y, x, m0, m1, Crt, mean, scale, shift, ca, cb, cc, dx, dres);
  const int C = CC ? CC : Crt;
  for (int64_t m = m0; m < m1; ++m) {
    const T* __restrict__ d = dy + m * C;
    const T* __restrict__ yr = y ? y + m * C : nullptr;
    const T* __restrict__ xr = x + m * C;
    T* __restrict__ o = dx + m * C;
    for (int c = 0; c < C; ++c) {
      const T g = pass_if_pos(relu_in(yr, xr, scale, shift, c), d[c]);
      o[c] = ca[c] * g + cb[c] * (xr[c] - mean[c]) + cc[c];
    }
    if (dres) {
      T* __restrict__ r = dres + m * C;
      for (int c = 0; c < C; ++c) r[c] = pass_if_pos(relu_in(yr, xr, scale, shift, c), d[c]);
    }
  }
}

// ---- FP32 peak: independent FMA chains on this build's widest vectors, enough to cover FMA latency x ports
// --- Returns a value that depends on the result (so the loop is not removed); *flops: floating-point
// operations.
static double fma_loop(int64_t iters, double* flops) {
  constexpr int kChains = 12;
  const float mv = 0.999999f, cv = 1e-7f;
  const VF m = vbcast(&mv), c = vbcast(&cv);
  VF a[kChains];
  for (int i = 0; i < kChains; ++i) {
    const float f = static_cast<float>(i);
    a[i] = vbcast(&f);
  }
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = vfma(a[i], m, c);
  }
  VF s = a[0];
  for (int i = 1; i < kChains; ++i) s = vadd(s, a[i]);
  float out[kLanes];
  vstore(out, s);
  *flops = static_cast<double>(iters) * kChains * kLanes * 2;
  return out[0];
}

// Winograd convolutions (inference and training), then the fused network that uses them, written against the
// same vocabulary (in this order)
#include "winograd_impl.h"

#include "fused_impl.h"  // NOLINT(build/include_order): after winograd_impl.h
