// Winograd F(m x m, 3x3) kernel bodies, included by kernels_impl.h (so once per instruction-set build, inside
// its namespace, after the vector vocabulary and the broadcast-FMA step): the fused inference path's
// convolution and the training passes' (forward, input gradient, weight gradient). No include guard on
// purpose.

// ---- Winograd F(m x m, 3x3) for the fused inference path --------------------------------------------------
// Per tile of m x m outputs, the (m+2) x (m+2) input patch is transformed (V = B^T d B), then for each of the
// (m+2)^2 transform points a (tiles x C) by (C x K) product runs on the same broadcast-FMA kernel as the
// direct conv (as a 1x1 conv), then the output transform (Y = A^T M A) adds bias and residual and applies the
// ReLU. F(2x2, 3x3): 16 multiplications per 4 outputs (direct: 36); F(3x3, 3x3) (points 0, 1, -1, 2, inf): 25
// per 9 outputs (direct: 81), and a 9x9 board is exactly 3 x 3 tiles. The transforms are channel by channel
// (lanes are channels) written out below (adds, subtracts, 2x as x + x, 3x a multiply; no FMA:
// -ffp-contract=off), in the same order in every build and for the channels that do not fill a vector. kLanes
// floats as a GCC vector (the transforms only add, subtract and scale: the same bits in every build)
typedef float VT __attribute__((vector_size(4 * kLanes)));
static inline VT ldv(const float* p) {
  VT v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
static inline void stv(float* p, VT v) { std::memcpy(p, &v, sizeof(v)); }

// The 1-D transforms, on vectors of channels or on single floats: bt (B^T, A inputs -> A outputs) and at
// (A^T, A inputs -> M outputs); in[j * is], out[i * os].
template <int M>
struct Wino;
template <>
struct Wino<2> {  // points 0, 1, -1, inf
  static constexpr int A = 4;
  template <typename V>
  static MG_INLINE void bt(const V* in, int is, V* out, int os) {
    const V d0 = in[0], d1 = in[is], d2 = in[2 * is], d3 = in[3 * is];
    out[0] = d0 - d2;
    out[os] = d1 + d2;
    out[2 * os] = d2 - d1;
    out[3 * os] = d1 - d3;
  }
  template <typename V>
  static MG_INLINE void at(const V* in, int is, V* out, int os) {
    const V m0 = in[0], m1 = in[is], m2 = in[2 * is], m3 = in[3 * is];
    out[0] = (m0 + m1) + m2;
    out[os] = (m1 - m2) - m3;
  }
  // A (M inputs -> A outputs), the transpose of at: the output gradient's transform (weight gradient)
  template <typename V>
  static MG_INLINE void a(const V* in, int is, V* out, int os) {
    const V y0 = in[0], y1 = in[is];
    out[0] = y0;
    out[os] = y0 + y1;
    out[2 * os] = y0 - y1;
    out[3 * os] = -y1;
  }
};
template <>
struct Wino<3> {  // points 0, 1, -1, 2, inf (2x: x + x, exact)
  static constexpr int A = 5;
  template <typename V>
  static MG_INLINE void bt(const V* in, int is, V* out, int os) {
    const V d0 = in[0], d1 = in[is], d2 = in[2 * is], d3 = in[3 * is], d4 = in[4 * is];
    const V d1x2 = d1 + d1, d2x2 = d2 + d2;
    out[0] = (((d0 + d0) - d1) - d2x2) + d3;
    out[os] = (d3 - d1x2) - d2;
    out[2 * os] = (d1x2 - d2 * 3.f) + d3;
    out[3 * os] = d3 - d1;
    out[4 * os] = ((d1x2 - d2) - (d3 + d3)) + d4;
  }
  template <typename V>
  static MG_INLINE void at(const V* in, int is, V* out, int os) {
    const V m0 = in[0], m1 = in[is], m2 = in[2 * is], m3 = in[3 * is], m4 = in[4 * is];
    const V m3x2 = m3 + m3;
    out[0] = ((m0 + m1) + m2) + m3;
    out[os] = (m1 - m2) + m3x2;
    out[2 * os] = ((m1 + m2) + (m3x2 + m3x2)) + m4;
  }
  template <typename V>
  static MG_INLINE void a(const V* in, int is, V* out, int os) {
    const V y0 = in[0], y1 = in[is], y2 = in[2 * is];
    const V y2x2 = y2 + y2;
    out[0] = y0;
    out[os] = (y0 + y1) + y2;
    out[2 * os] = (y0 - y1) + y2;
    out[3 * os] = (y0 + (y1 + y1)) + (y2x2 + y2x2);
    out[4 * os] = y2;
  }
};

// The Winograd products: Mx (rows x ldm) = Vx (rows x C) times one packed (C -> K) weight set, rows a
// multiple of P (the rows past the chunk's tiles are computed and never read), ldm a multiple of kLanes:
// full-vector stores, no bias, residual or masks; the same broadcast-FMA order as the direct kernel.
template <int P, int NV, bool PART>
static MG_INLINE void gemm_tile(const float* a, int C, const float* const* w0, const int* ws, int wl,
                                float* m, int ldm) {
  VF acc[P][NV];
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) acc[p][v] = vzero();
  const float* w[NV];
#pragma GCC unroll 32
  for (int v = 0; v < NV; ++v) w[v] = w0[v];
  const float* x[P];
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p) x[p] = a + static_cast<int64_t>(p) * C;
  for (int c = 0; c < C; ++c) bfma_step<P, NV, PART>(acc, x, c, w, ws, wl);
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) vstore(m + static_cast<int64_t>(p) * ldm + kLanes * v, acc[p][v]);
}

constexpr int kGemmP = kAcc / 2;  // rows per tile, x 2 vectors of output channels

static void wino_gemm(const float* V, int64_t rows, int C, const float* wp, int K, float* M, int ldm) {
  const int Kpad = round_up8(K), nvec = (Kpad + kLanes - 1) / kLanes;
  for (int v0 = 0; v0 < nvec; v0 += 2) {
    const int nv = std::min(2, nvec - v0), k0 = kLanes * v0;
    const float* w0[2];
    int ws[2];
    const int wl = weight_group(wp, 1, C, Kpad, v0, nv, w0, ws);
    const bool part = wl < kLanes;
    for (int64_t i = 0; i < rows; i += kGemmP) {
      const float* a = V + i * C;
      float* m = M + i * ldm + k0;
      if (kLanes == 16 && part) {
        if (nv == 2)
          gemm_tile<kGemmP, 2, true>(a, C, w0, ws, wl, m, ldm);
        else
          gemm_tile<kGemmP, 1, true>(a, C, w0, ws, wl, m, ldm);
      } else if (nv == 2) {
        gemm_tile<kGemmP, 2, false>(a, C, w0, ws, wl, m, ldm);
      } else {
        gemm_tile<kGemmP, 1, false>(a, C, w0, ws, wl, m, ldm);
      }
    }
  }
}

// The input transform V = B^T d B of one tile (index tile = b * TPI + ty * TW + tx: image b, tile row ty,
// column tx) of NHWC x, channel by channel: V[xi * vs + c] for the (m+2)^2 transform points xi. The patch
// starts one pixel up and left of the tile's outputs; off-board pixels read `zero` (>= C zeros).
template <int M>
static MG_INLINE void wino_input_tile(const float* x, int H, int W, int C, int TW, int TPI, int64_t tile,
                                      const float* zero, float* v, int64_t vs) {
  constexpr int A = Wino<M>::A, A2 = A * A;
  const int64_t b = tile / TPI;
  const int ty = static_cast<int>(tile % TPI) / TW, tx = static_cast<int>(tile % TPI) % TW;
  const float* d[A2];
  for (int r = 0; r < A; ++r)
    for (int s = 0; s < A; ++s) {
      const int h = M * ty - 1 + r, w = M * tx - 1 + s;
      d[r * A + s] = (h < 0 || h >= H || w < 0 || w >= W) ? zero : x + ((b * H + h) * W + w) * C;
    }
  int c = 0;
  for (; c + kLanes <= C; c += kLanes) {
    VT in[A2], t[A2], o[A2];
#pragma GCC unroll 32
    for (int j = 0; j < A2; ++j) in[j] = ldv(d[j] + c);
#pragma GCC unroll 8
    for (int s = 0; s < A; ++s) Wino<M>::bt(in + s, A, t + s, A);  // B^T d (columns)
#pragma GCC unroll 8
    for (int r = 0; r < A; ++r) Wino<M>::bt(t + r * A, 1, o + r * A, 1);  // (B^T d) B (rows)
#pragma GCC unroll 32
    for (int j = 0; j < A2; ++j) stv(v + j * vs + c, o[j]);
  }
  for (; c < C; ++c) {
    float in[A2], t[A2], o[A2];
    for (int j = 0; j < A2; ++j) in[j] = d[j][c];
#pragma GCC unroll 8
    for (int s = 0; s < A; ++s) Wino<M>::bt(in + s, A, t + s, A);
#pragma GCC unroll 8
    for (int r = 0; r < A; ++r) Wino<M>::bt(t + r * A, 1, o + r * A, 1);
    for (int j = 0; j < A2; ++j) v[j * vs + c] = o[j];
  }
}

// Floats between two transform points' planes of n floats: whole cache lines, an odd number of them, so the
// (m+2)^2 planes written side by side by one tile's transform fall in different L1 sets (a plane of 4 KiB,
// 32 tiles x 32 channels, put every one in the same set).
static inline int64_t plane_stride(int64_t n) {
  const int64_t lines = (n + 15) / 16;
  return 16 * (lines % 2 ? lines : lines + 1);
}

// x, residual, out: nb images of H x W pixels, NHWC. wino: (m+2)^2 packed (C -> K) weight sets (U = G g G^T).
// kTiles: tiles per chunk, V and M stay in L2 (each tile's outputs are the same whatever the chunk).
// kSums (training): add the BN sums of the output (per channel: sum, sum of squares) to sums->s, t; each
// tile's outputs are summed in float in the tile's order, the tiles' sums in float over a chunk, each chunk's
// into the doubles.
template <int M, int64_t kTiles = 48, bool kPrefetch = false, bool kSums = false>
static void winograd_conv(const float* x, int64_t nb, int H, int W, int C, const float* wino, int K,
                          const float* bias, const float* residual, bool relu, float* out,
                          const BnSums* sums = nullptr) {
  constexpr int A = Wino<M>::A, A2 = A * A;
  const int TW = (W + M - 1) / M, TPI = ((H + M - 1) / M) * TW;
  const int64_t T = nb * TPI, wstride = static_cast<int64_t>(C) * round_up8(K);
  static_assert(kTiles % kGemmP == 0, "the products compute whole tiles of rows");
  const int ldm = (round_up8(K) + kLanes - 1) / kLanes * kLanes;  // row stride of the products
  thread_local AlignedFloats Vb, Mb, zero, chunk_sums;
  const int64_t vs = plane_stride(kTiles * C), ms = plane_stride(kTiles * ldm);
  Vb.resize(A2 * vs);
  Mb.resize(A2 * ms);
  zero.assign(std::max(C, K), 0.f);
  const int64_t HW = static_cast<int64_t>(H) * W;
  float *cs = nullptr, *ct = nullptr;  // a chunk's float sums (kSums)
  if constexpr (kSums) {
    chunk_sums.assign(2 * ldm, 0.f);
    cs = chunk_sums.data();
    ct = cs + ldm;
  }
  for (int64_t t0 = 0; t0 < T; t0 += kTiles) {
    const int64_t nt = std::min(kTiles, T - t0);
    for (int64_t i = 0; i < nt; ++i)  // input transform
      wino_input_tile<M>(x, H, W, C, TW, TPI, t0 + i, zero.data(), Vb.data() + i * C, vs);
    const int64_t rows = (nt + kGemmP - 1) / kGemmP * kGemmP;
    // training: the next chunk's input images and residual (cold: written by an earlier pass) and output
    // lines come in while the products run, a 1/A2 share of the lines before each transform point's product
    const char *px = nullptr, *po = nullptr, *pr = nullptr;
    int64_t nx = 0, no = 0;
    if (kPrefetch && t0 + kTiles < T) {
      const int64_t b0 = (t0 + kTiles) / TPI, b1 = std::min(nb, (t0 + 2 * kTiles + TPI - 1) / TPI);
      px = reinterpret_cast<const char*>(x + b0 * HW * C);
      po = reinterpret_cast<const char*>(out + b0 * HW * K);
      if (residual) pr = reinterpret_cast<const char*>(residual + b0 * HW * K);
      nx = ((b1 - b0) * HW * C * 4 + 63) / 64;
      no = ((b1 - b0) * HW * K * 4 + 63) / 64;
    }
    for (int xi = 0; xi < A2; ++xi) {  // the products, (tiles x C) x (C x K) each
      if (kPrefetch) {
        for (int64_t l = nx * xi / A2; l < nx * (xi + 1) / A2; ++l) __builtin_prefetch(px + 64 * l);
        for (int64_t l = no * xi / A2; l < no * (xi + 1) / A2; ++l) {
          __builtin_prefetch(po + 64 * l, 1);
          if (pr) __builtin_prefetch(pr + 64 * l);
        }
      }
      wino_gemm(Vb.data() + xi * vs, rows, C, wino + xi * wstride, K, Mb.data() + xi * ms, ldm);
    }
    for (int64_t i = 0; i < nt; ++i) {  // output transform, bias, residual, ReLU
      const int64_t tile = t0 + i, b = tile / TPI;
      const int ty = static_cast<int>(tile % TPI) / TW, tx = static_cast<int>(tile % TPI) % TW;
      const float* m = Mb.data() + i * ldm;
      float* o[M * M];
      const float* rs[M * M];
      for (int r = 0; r < M; ++r)
        for (int s = 0; s < M; ++s) {
          const int h = M * ty + r, w = M * tx + s;
          const bool ok = h < H && w < W;
          const int64_t q = (b * H + h) * W + w;
          o[r * M + s] = ok ? out + q * K : nullptr;
          rs[r * M + s] = ok && residual ? residual + q * K : zero.data();
        }
      int k = 0;
      for (; k + kLanes <= K; k += kLanes) {
        VT in[A2], t[M * A], y[M * M];
#pragma GCC unroll 32
        for (int j = 0; j < A2; ++j) in[j] = ldv(m + j * ms + k);
#pragma GCC unroll 8
        for (int s = 0; s < A; ++s) Wino<M>::at(in + s, A, t + s, A);  // A^T M: M x A
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) Wino<M>::at(t + r * A, 1, y + r * M, 1);  // (A^T M) A: M x M
        const VT bk = ldv(bias + k), vz{};
        VT s1{}, s2{};
#pragma GCC unroll 16
        for (int j = 0; j < M * M; ++j) {
          if (!o[j]) continue;
          VT val = y[j] + bk;
          if (residual) val += ldv(rs[j] + k);
          if (relu) val = val > vz ? val : vz;
          stv(o[j] + k, val);
          if constexpr (kSums) {
            s1 += val;
            s2 += val * val;
          }
        }
        if constexpr (kSums) {
          stv(cs + k, ldv(cs + k) + s1);
          stv(ct + k, ldv(ct + k) + s2);
        }
      }
      for (; k < K; ++k) {
        float in[A2], t[M * A], y[M * M];
        for (int j = 0; j < A2; ++j) in[j] = m[j * ms + k];
#pragma GCC unroll 8
        for (int s = 0; s < A; ++s) Wino<M>::at(in + s, A, t + s, A);
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) Wino<M>::at(t + r * A, 1, y + r * M, 1);
        float s1 = 0.f, s2 = 0.f;
        for (int j = 0; j < M * M; ++j) {
          if (!o[j]) continue;
          float val = y[j] + bias[k];
          if (residual) val += rs[j][k];
          if (relu) val = val > 0.f ? val : 0.f;
          o[j][k] = val;
          if constexpr (kSums) {
            s1 += val;
            s2 += val * val;
          }
        }
        if constexpr (kSums) {
          cs[k] += s1;
          ct[k] += s2;
        }
      }
    }
    if constexpr (kSums)  // the chunk's sums into the doubles
      for (int k = 0; k < K; ++k) {
        sums->s[k] += cs[k];
        sums->t[k] += ct[k];
        cs[k] = ct[k] = 0.f;
      }
  }
}

// ---- Winograd weight gradient (Lavin & Gray 2016) ---------------------------------------------------------
// dL/dg[k, c] = G^T Z[k, c] G with Z[xi][c][k] = sum over tiles of V[xi][tile][c] * D[xi][tile][k]: V the
// input transform B^T d B of the tile's (m+2) x (m+2) patch (as in the forward pass), D = A dY A^T the output
// gradient's m x m tile (zero past the board) taken to the transform domain. Per transform point xi, Z is a
// (C x tiles) by (tiles x K) product reduced over the tiles, on the broadcast-FMA kernel: rows are input
// channels (one V value broadcast), vectors are output channels, accumulated in registers over a chunk of
// tiles, then into Z. Every (c, k)'s sum runs over the tiles in the same order whatever the vector width.

// The output-gradient transform of one tile: D[xi * ds + k] for k < ldk (zeros past K).
template <int M>
static MG_INLINE void wino_grad_tile(const float* dy, int H, int W, int K, int ldk, int TW, int TPI,
                                     int64_t tile, const float* zero, float* dt, int64_t ds) {
  constexpr int A = Wino<M>::A, A2 = A * A;
  const int64_t b = tile / TPI;
  const int ty = static_cast<int>(tile % TPI) / TW, tx = static_cast<int>(tile % TPI) % TW;
  const float* y[M * M];
  for (int r = 0; r < M; ++r)
    for (int s = 0; s < M; ++s) {
      const int h = M * ty + r, w = M * tx + s;
      y[r * M + s] = (h >= H || w >= W) ? zero : dy + ((b * H + h) * W + w) * K;
    }
  int k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    VT in[M * M], t[A * M], o[A2];
#pragma GCC unroll 16
    for (int j = 0; j < M * M; ++j) in[j] = ldv(y[j] + k);
#pragma GCC unroll 8
    for (int s = 0; s < M; ++s) Wino<M>::a(in + s, M, t + s, M);  // A dY (columns): A x M
#pragma GCC unroll 8
    for (int r = 0; r < A; ++r) Wino<M>::a(t + r * M, 1, o + r * A, 1);  // (A dY) A^T (rows): A x A
#pragma GCC unroll 32
    for (int j = 0; j < A2; ++j) stv(dt + j * ds + k, o[j]);
  }
  for (; k < ldk; ++k) {
    float in[M * M], t[A * M], o[A2];
    for (int j = 0; j < M * M; ++j) in[j] = k < K ? y[j][k] : 0.f;
#pragma GCC unroll 8
    for (int s = 0; s < M; ++s) Wino<M>::a(in + s, M, t + s, M);
#pragma GCC unroll 8
    for (int r = 0; r < A; ++r) Wino<M>::a(t + r * M, 1, o + r * A, 1);
    for (int j = 0; j < A2; ++j) dt[j * ds + k] = o[j];
  }
}

// z[r][kLanes * v] += sum over nt tiles of v_[tile][r] * d[tile][kLanes * v], r < RT, v < NV (z row stride
// ldk, v_ row stride C, d row stride ldk).
template <int RT, int NV>
static MG_INLINE void wgemm_tile(const float* va, int C, const float* d, int ldk, int64_t nt, float* z) {
  VF acc[RT][NV];
#pragma GCC unroll 32
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) acc[r][v] = vload(z + static_cast<int64_t>(r) * ldk + kLanes * v);
  for (int64_t i = 0; i < nt; ++i, va += C, d += ldk) {
    VF bb[NV];
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) bb[v] = vload(d + kLanes * v);
#pragma GCC unroll 32
    for (int r = 0; r < RT; ++r) {
      const VF av = vbcast(va + r);
#pragma GCC unroll 32
      for (int v = 0; v < NV; ++v) acc[r][v] = vfma(av, bb[v], acc[r][v]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < RT; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < NV; ++v) vstore(z + static_cast<int64_t>(r) * ldk + kLanes * v, acc[r][v]);
}

// A run-time row count rt in [1, RT] and vector count nv in {1, 2} to the compiled tile.
template <int RT>
static void wgemm_tile_rt(int rt, int nv, const float* va, int C, const float* d, int ldk, int64_t nt,
                          float* z) {
  if constexpr (RT > 1) {
    if (rt < RT) {
      wgemm_tile_rt<RT - 1>(rt, nv, va, C, d, ldk, nt, z);
      return;
    }
  }
  if (nv == 2)
    wgemm_tile<RT, 2>(va, C, d, ldk, nt, z);
  else
    wgemm_tile<RT, 1>(va, C, d, ldk, nt, z);
}

// Z (A2 x C x ldk, accumulated into) += the weight-gradient products of nb images of x (C channels) and dy
// (K channels), NHWC H x W; ldk: K rounded up to a multiple of kLanes (Z's and D's row stride).
template <int M>
static void winograd_wgrad(const float* x, const float* dy, int64_t nb, int H, int W, int C, int K, int ldk,
                           float* Z) {
  constexpr int A = Wino<M>::A, A2 = A * A;
  constexpr int64_t kTiles = 32;  // tiles per chunk: V and D stay in L2
  constexpr int RTM = kAcc / 2;   // rows (input channels) per register tile, x 2 vectors
  const int TW = (W + M - 1) / M, TPI = ((H + M - 1) / M) * TW, nvec = ldk / kLanes;
  const int64_t T = nb * TPI;
  thread_local AlignedFloats Vb, Db, zero;
  const int64_t vs = plane_stride(kTiles * C), ds = plane_stride(kTiles * ldk);
  Vb.resize(A2 * vs);
  Db.resize(A2 * ds);
  zero.assign(std::max(C, K), 0.f);
  const int64_t HW = static_cast<int64_t>(H) * W;
  for (int64_t t0 = 0; t0 < T; t0 += kTiles) {
    const int64_t nt = std::min(kTiles, T - t0);
    // the next chunk's images into the cache (x was written long before: cold), a 1/A2 share of the lines
    // before each transform point's products
    const char *xp = nullptr, *dp = nullptr;
    int64_t nx = 0, nd = 0;
    if (t0 + kTiles < T) {
      const int64_t b0 = (t0 + kTiles) / TPI, b1 = std::min(nb, (t0 + 2 * kTiles + TPI - 1) / TPI);
      xp = reinterpret_cast<const char*>(x + b0 * HW * C);
      dp = reinterpret_cast<const char*>(dy + b0 * HW * K);
      nx = ((b1 - b0) * HW * C * 4 + 63) / 64;
      nd = ((b1 - b0) * HW * K * 4 + 63) / 64;
    }
    for (int64_t i = 0; i < nt; ++i) {
      wino_input_tile<M>(x, H, W, C, TW, TPI, t0 + i, zero.data(), Vb.data() + i * C, vs);
      wino_grad_tile<M>(dy, H, W, K, ldk, TW, TPI, t0 + i, zero.data(), Db.data() + i * ldk, ds);
    }
    for (int xi = 0; xi < A2; ++xi) {
      for (int64_t l = nx * xi / A2; l < nx * (xi + 1) / A2; ++l) __builtin_prefetch(xp + 64 * l);
      for (int64_t l = nd * xi / A2; l < nd * (xi + 1) / A2; ++l) __builtin_prefetch(dp + 64 * l);
      const float* v = Vb.data() + xi * vs;
      const float* d = Db.data() + xi * ds;
      float* z = Z + static_cast<int64_t>(xi) * C * ldk;
      for (int r0 = 0, rt; r0 < C; r0 += rt) {
        const int left = C - r0;  // a remainder of RTM+1 .. 2RTM-1 rows: two near-equal tiles
        rt = left > RTM && left < 2 * RTM ? (left + 1) / 2 : std::min(RTM, left);
        for (int v0 = 0; v0 < nvec; v0 += 2)
          wgemm_tile_rt<RTM>(rt, std::min(2, nvec - v0), v + r0, C, d + kLanes * v0, ldk, nt,
                             z + static_cast<int64_t>(r0) * ldk + kLanes * v0);
      }
    }
  }
}
