// Float BN + ReLU row loops for NHWC rows of a whole number of vectors (1 to 4: 16 to 64 channels on
// AVX-512, 8 to 32 on AVX2), included by kernels_impl.h once per instruction-set build, inside its
// namespace. The per-channel sums stay in registers over a block of rows (the generic loops keep them in
// memory, the channel count unknown at compile time); every element runs the generic loop's expression, in
// the same order, without FMA (-ffp-contract=off), so the floats are the generic loops'. No include guard on
// purpose.

typedef float BnV __attribute__((vector_size(4 * kLanes)));
static inline BnV bnv_ld(const float* p) {
  BnV v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
static inline void bnv_st(float* p, BnV v) { std::memcpy(p, &v, sizeof(v)); }

// the sums of a block of rows into the double totals, channel by channel
template <int NV>
static MG_INLINE void bn_vec_flush(const BnV* a, const BnV* b, double* sa, double* sb) {
  float fa[NV * kLanes], fb[NV * kLanes];
  for (int j = 0; j < NV; ++j) {
    bnv_st(fa + j * kLanes, a[j]);
    bnv_st(fb + j * kLanes, b[j]);
  }
  for (int c = 0; c < NV * kLanes; ++c) {
    sa[c] += fa[c];
    sb[c] += fb[c];
  }
}

// The passes read activations written a while before (by the conv before them, or in the backward by the
// forward pass: from L2, L3 or memory): each row prefetches the row kBnAhead rows on of every input, far
// enough ahead to hide a cold row's latency (a longer distance gains nothing; docs/BENCHMARKS.md)
constexpr int64_t kBnAhead = 64;
template <int NV>
static MG_INLINE void bn_prefetch_row(const float* p, int64_t m) {
  constexpr int64_t kRowBytes = NV * kLanes * 4;
  for (int64_t l = 0; l < kRowBytes; l += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(p) + (m + kBnAhead) * kRowBytes + l);
}
// the output row kBnAhead rows on, for writing (a fresh tensor's lines: without it each store waits for its
// line to be read)
template <int NV>
static MG_INLINE void bn_prefetch_row_w(float* p, int64_t m) {
  constexpr int64_t kRowBytes = NV * kLanes * 4;
  for (int64_t l = 0; l < kRowBytes; l += 64)
    __builtin_prefetch(reinterpret_cast<char*>(p) + (m + kBnAhead) * kRowBytes + l, 1);
}
template <int NV>
static MG_INLINE void bn_prefetch_rows(const float* a, const float* b, const float* c, int64_t m) {
  bn_prefetch_row<NV>(a, m);
  bn_prefetch_row<NV>(b, m);
  bn_prefetch_row<NV>(c, m);
}

template <int NV>
static void bn_stats_vec(const float* x, int64_t m0, int64_t m1, double* sum, double* sumsq) {
  constexpr int C = NV * kLanes;
  for (int64_t mb = m0; mb < m1; mb += kBnBlock) {
    BnV s[NV], ss[NV];
    for (int j = 0; j < NV; ++j) s[j] = ss[j] = BnV{};
    const int64_t me = std::min(m1, mb + kBnBlock);
    for (int64_t m = mb; m < me; ++m) {
      bn_prefetch_row<NV>(x, m);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        const BnV v = bnv_ld(x + m * C + j * kLanes);
        s[j] += v;
        ss[j] += v * v;
      }
    }
    bn_vec_flush<NV>(s, ss, sum, sumsq);
  }
}

template <int NV>
static void bn_apply_vec(const float* x, const float* res, int64_t m0, int64_t m1, const float* scale,
                         const float* shift, float* y) {
  constexpr int C = NV * kLanes;
  BnV sc[NV], sh[NV];
  for (int j = 0; j < NV; ++j) {
    sc[j] = bnv_ld(scale + j * kLanes);
    sh[j] = bnv_ld(shift + j * kLanes);
  }
  const BnV z{};
  for (int64_t m = m0; m < m1; ++m) {
    bn_prefetch_row<NV>(x, m);
    if (res) bn_prefetch_row<NV>(res, m);
    bn_prefetch_row_w<NV>(y, m);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const int64_t o = m * C + j * kLanes;
      BnV v = bnv_ld(x + o) * sc[j] + sh[j];
      if (res) v += bnv_ld(res + o);
      bnv_st(y + o, v > z ? v : z);
    }
  }
}

// The ReLU's mask of the backward: its stored output y > 0 or, with kFromX (y null: a BN+ReLU without a
// residual), the forward's pre-ReLU value x * scale + shift recomputed (the same expression, the same
// floats), which reads one tensor less.
template <int NV, bool kFromX>
struct BnMask {
  BnV sc[NV], sh[NV];
  BnMask(const float* scale, const float* shift) {
    if constexpr (kFromX)
      for (int j = 0; j < NV; ++j) {
        sc[j] = bnv_ld(scale + j * kLanes);
        sh[j] = bnv_ld(shift + j * kLanes);
      }
  }
  MG_INLINE BnV operator()(const float* y, const float* x, int64_t o, int j) const {
    if constexpr (kFromX) return bnv_ld(x + o) * sc[j] + sh[j];
    return bnv_ld(y + o);
  }
  // the rows kBnAhead on of the inputs the backward passes read with this mask (dy, x and, stored, y)
  static MG_INLINE void prefetch(const float* dy, const float* y, const float* x, int64_t m) {
    if constexpr (kFromX) {
      bn_prefetch_row<NV>(dy, m);
      bn_prefetch_row<NV>(x, m);
    } else {
      bn_prefetch_rows<NV>(dy, y, x, m);
    }
  }
};

template <int NV, bool kFromX>
static void bn_bwd_stats_vec_t(const float* dy, const float* y, const float* x, int64_t m0, int64_t m1,
                               const float* mean, const float* scale, const float* shift, double* sg,
                               double* sgx) {
  constexpr int C = NV * kLanes;
  const BnMask<NV, kFromX> mask(scale, shift);
  BnV mu[NV];
  for (int j = 0; j < NV; ++j) mu[j] = bnv_ld(mean + j * kLanes);
  const BnV z{};
  for (int64_t mb = m0; mb < m1; mb += kBnBlock) {
    BnV s[NV], sx[NV];
    for (int j = 0; j < NV; ++j) s[j] = sx[j] = BnV{};
    const int64_t me = std::min(m1, mb + kBnBlock);
    for (int64_t m = mb; m < me; ++m) {
      mask.prefetch(dy, y, x, m);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        const int64_t o = m * C + j * kLanes;
        const BnV g = mask(y, x, o, j) > z ? bnv_ld(dy + o) : z;
        s[j] += g;
        sx[j] += g * (bnv_ld(x + o) - mu[j]);
      }
    }
    bn_vec_flush<NV>(s, sx, sg, sgx);
  }
}

template <int NV>
static void bn_bwd_stats_vec(const float* dy, const float* y, const float* x, int64_t m0, int64_t m1,
                             const float* mean, const float* scale, const float* shift, double* sg,
                             double* sgx) {
  if (y)
    bn_bwd_stats_vec_t<NV, false>(dy, y, x, m0, m1, mean, scale, shift, sg, sgx);
  else
    bn_bwd_stats_vec_t<NV, true>(dy, y, x, m0, m1, mean, scale, shift, sg, sgx);
}

template <int NV, bool kFromX>
static void bn_bwd_apply_vec_t(const float* dy, const float* y, const float* x, int64_t m0, int64_t m1,
                               const float* mean, const float* scale, const float* shift, const float* ca,
                               const float* cb, const float* cc, float* dx, float* dres) {
  constexpr int C = NV * kLanes;
  const BnMask<NV, kFromX> mask(scale, shift);
  BnV mu[NV], a[NV], b[NV], c0[NV];
  for (int j = 0; j < NV; ++j) {
    mu[j] = bnv_ld(mean + j * kLanes);
    a[j] = bnv_ld(ca + j * kLanes);
    b[j] = bnv_ld(cb + j * kLanes);
    c0[j] = bnv_ld(cc + j * kLanes);
  }
  const BnV z{};
  for (int64_t m = m0; m < m1; ++m) {
    mask.prefetch(dy, y, x, m);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const int64_t o = m * C + j * kLanes;
      const BnV g = mask(y, x, o, j) > z ? bnv_ld(dy + o) : z;
      bnv_st(dx + o, a[j] * g + b[j] * (bnv_ld(x + o) - mu[j]) + c0[j]);
      if (dres) bnv_st(dres + o, g);
    }
  }
}

template <int NV>
static void bn_bwd_apply_vec(const float* dy, const float* y, const float* x, int64_t m0, int64_t m1,
                             const float* mean, const float* scale, const float* shift, const float* ca,
                             const float* cb, const float* cc, float* dx, float* dres) {
  if (y)
    bn_bwd_apply_vec_t<NV, false>(dy, y, x, m0, m1, mean, scale, shift, ca, cb, cc, dx, dres);
  else
    bn_bwd_apply_vec_t<NV, true>(dy, y, x, m0, m1, mean, scale, shift, ca, cb, cc, dx, dres);
}

// The vector loop for float rows of C = NV * kLanes channels, NV 1..4: call fn<NV>(args...) and return
// true; false for any other shape or type.
#define MG_BN_VEC(T, C, fn, ...)                     \
  do {                                               \
    if constexpr (std::is_same_v<T, float>) {        \
      if ((C) % kLanes == 0) switch ((C) / kLanes) { \
          case 1: fn<1>(__VA_ARGS__); return;        \
          case 2: fn<2>(__VA_ARGS__); return;        \
          case 3: fn<3>(__VA_ARGS__); return;        \
          case 4: fn<4>(__VA_ARGS__); return;        \
          default: break;                            \
        }                                            \
    }                                                \
  } while (0)
