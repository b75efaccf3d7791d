// DSP-emulation kernels (no torch headers here, so this unit compiles quickly): the pool of "DSP cores", the
// conv / BN+ReLU kernels in an AVX-512, an AVX2+FMA and a portable build chosen at run time, and the fused
// network.
#include "kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <pthread.h>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MG_HAVE_X86 1
#endif

namespace mgdsp {

// ===========================================================================================================
// Kernel bodies: an AVX-512 build and an AVX2+FMA build (x86-64 only) and a portable build, one chosen at run
// time.
#ifdef MG_HAVE_X86
#pragma GCC push_options
// (prfchw: __builtin_prefetch(p, 1) becomes PREFETCHW, the line fetched ready to be written; every AVX-512
// CPU has it)
#pragma GCC target("avx512f,avx2,fma,prfchw")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's avx512fintrin.h: _mm512_undefined_ps()
namespace avx512 {
#define MG_AVX512 1
#include "kernels_impl.h"
#undef MG_AVX512
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#define MG_AVX2 1
#include "kernels_impl.h"
#undef MG_AVX2
}  // namespace avx2
#pragma GCC pop_options
#endif

namespace portable {
#include "kernels_impl.h"
}  // namespace portable

namespace portable16 {
#define MG_PORTABLE16 1
#include "kernels_impl.h"
#undef MG_PORTABLE16
}  // namespace portable16

// ===========================================================================================================
// Instruction-set dispatch: each call names the ISA whose kernels it runs (tests run every path the machine
// has); widest_isa() is what Python's Runtime calls "auto".
bool cpu_has_avx2() { return isa_supported(kIsaAvx2); }

bool isa_supported(int isa) {
  if (isa == kIsaPortable || isa == kIsaPortable16) return true;
#ifdef MG_HAVE_X86
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == kIsaAvx2) return avx2;
  if (isa == kIsaAvx512) return avx2 && __builtin_cpu_supports("avx512f");
#endif
  return false;
}

const char* isa_name(int isa) {
  switch (isa) {
    case kIsaAvx512: return "avx512";
    case kIsaAvx2: return "avx2";
    case kIsaPortable: return "portable";
    case kIsaPortable16: return "portable16";
    default: return "unknown";
  }
}

int widest_isa() {
  for (int isa = kIsaAvx512; isa > kIsaPortable; --isa)
    if (isa_supported(isa)) return isa;
  return kIsaPortable;
}

// fn(...) of the kernels of instruction set `isa` (an int expression, evaluated once per use)
#define MG_COMMA ,  // a comma inside MG_DISPATCH's second argument (a template's arguments)
#ifdef MG_HAVE_X86
#define MG_DISPATCH(isa, fn, ...)                          \
  ((isa) == kIsaAvx512       ? avx512::fn(__VA_ARGS__)     \
   : (isa) == kIsaAvx2       ? avx2::fn(__VA_ARGS__)       \
   : (isa) == kIsaPortable16 ? portable16::fn(__VA_ARGS__) \
                             : portable::fn(__VA_ARGS__))
#else
#define MG_DISPATCH(isa, fn, ...) \
  ((isa) == kIsaPortable16 ? portable16::fn(__VA_ARGS__) : portable::fn(__VA_ARGS__))
#endif

// ===========================================================================================================
// The pool of worker threads standing for DSP cores, a process resource. Core 0 is the calling thread; the
// workers (cores 1, 2, ...) wait on a condition variable for the next job, and a job of c cores runs on the
// first c - 1 of them. The pool grows (never shrinks) to the most cores a call asks for. One job at a time
// (a mutex serialises callers from several threads).
namespace {
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void run(int cores, const std::function<void(int)>& fn) {  // cores: 1 .. kMaxCores (checked_exec)
    if (cores <= 1) {
      fn(0);
      return;
    }
    std::lock_guard<std::mutex> serial(run_m_);
    grow(cores - 1);
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &fn;
      active_ = cores;
      pending_ = cores - 1;
      ++generation_;
    }
    cv_.notify_all();
    fn(0);
    std::unique_lock<std::mutex> lock(m_);
    done_cv_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  // at least n workers (called with run_m_ held: no job is running)
  void grow(int n) {
    std::lock_guard<std::mutex> lock(m_);
    while (static_cast<int>(workers_.size()) < n) {
      const int core = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, core, seen = generation_] { loop(core, seen); });
    }
  }
  void loop(int core, uint64_t seen) {
    for (;;) {
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (core >= active_) continue;  // a job of fewer cores
        job = job_;
      }
      (*job)(core);
      {
        std::lock_guard<std::mutex> lock(m_);
        if (--pending_ == 0) done_cv_.notify_one();
      }
    }
  }
  std::vector<std::thread> workers_;
  std::mutex m_, run_m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  int active_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

std::mutex g_pool_m;
std::unique_ptr<Pool> g_pool;  // created on first use

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_m);
  if (!g_pool) g_pool = std::make_unique<Pool>();
  return *g_pool;
}

// A forked child (multiprocessing, DataLoader workers) has none of the parent's worker threads: forget the
// parent's pool without joining it and build a fresh one on first use.
void forget_pool_after_fork() {
  new (&g_pool_m) std::mutex();
  (void)g_pool.release();
}
const int g_atfork = pthread_atfork(nullptr, nullptr, forget_pool_after_fork);

// [begin, end) of core i's share when n items are split evenly across `cores`
inline std::pair<int64_t, int64_t> share(int64_t n, int cores, int i) {
  return {n * i / cores, n * (i + 1) / cores};
}
}  // namespace

void parallel(int cores, const std::function<void(int)>& fn) { pool().run(cores, fn); }

Exec checked_exec(int cores, int isa) {
  if (cores < 1 || cores > kMaxCores)
    throw std::invalid_argument("the number of DSP cores must be 1 .. " + std::to_string(kMaxCores) +
                                ", got " + std::to_string(cores));
  if (!isa_supported(isa))
    throw std::invalid_argument(std::string("this CPU cannot run the ") + isa_name(isa) + " kernels");
  return Exec{cores, isa};
}

// ===========================================================================================================
// Weight packing
// index of (tap t, input channel c, output channel k) in the blocked layout of a conv with Cin inputs
static inline size_t packed_index(int t, int c, int k, int taps, int Cin, int Kpad) {
  const int k0 = k / kKBlock * kKBlock, width = kblock_width(k0, Kpad);
  return static_cast<size_t>(kblock_offset(k0, taps, Cin)) + (static_cast<size_t>(t) * Cin + c) * width +
         (k - k0);
}

template <typename T>
std::vector<T> pack_weights(const T* w, int K, int C, int R, bool flip, const T* scale) {
  const int taps = R * R;
  if (!flip) {  // conv C -> K
    const int Kpad = round_up8(K);
    std::vector<T> out(static_cast<size_t>(taps) * C * Kpad, T(0));
    for (int k = 0; k < K; ++k)
      for (int c = 0; c < C; ++c)
        for (int t = 0; t < taps; ++t)
          out[packed_index(t, c, k, taps, C, Kpad)] =
              w[(static_cast<size_t>(k) * C + c) * taps + t] * (scale ? scale[k] : T(1));
    return out;
  }
  // input-gradient kernel, a conv K -> C: tap t reads the weight of tap taps-1-t, transposed
  const int Cpad = round_up8(C);
  std::vector<T> out(static_cast<size_t>(taps) * K * Cpad, T(0));
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < taps; ++t)
        out[packed_index(t, k, c, taps, K, Cpad)] = w[(static_cast<size_t>(k) * C + c) * taps + taps - 1 - t];
  return out;
}

double winograd_g(int m, int i, int j) {
  // G of F(2x2,3x3) (points 0, 1, -1, inf) and of F(3x3,3x3) (points 0, 1, -1, 2, inf), in double
  static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double G3[5][3] = {
      {0.5, 0, 0}, {-0.5, -0.5, -0.5}, {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 6, 1.0 / 3, 2.0 / 3}, {0, 0, 1}};
  return m == 3 ? G3[i][j] : G2[i][j];
}

// Plain IEEE multiplies and adds (no FMA: -ffp-contract=off): the vector clones give the scalar code's bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) AlignedFloats winograd_weights(const float* w,
                                                                                            int K, int C,
                                                                                            int m,
                                                                                            bool flip) {
  const int A = m + 2, A2 = A * A, Kpad = round_up8(K);
  double G[5][3];
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < 3; ++j) G[i][j] = winograd_g(m, i, j);
  const size_t set = static_cast<size_t>(C) * Kpad;
  AlignedFloats out(A2 * set, 0.f);
  std::vector<double> g(9 * static_cast<size_t>(K)), t(15 * static_cast<size_t>(K));  // [tap][k], [i, j][k]
  for (int c = 0; c < C; ++c) {  // one input channel at a time, the output channels k innermost
    if (flip)                    // the input gradient's kernel: w[c, k, 8 - j] of (C, K) weights
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < 9; ++j) g[j * K + k] = w[(static_cast<size_t>(c) * K + k) * 9 + 8 - j];
    else
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < 9; ++j) g[j * K + k] = w[(static_cast<size_t>(k) * C + c) * 9 + j];
    for (int i = 0; i < A; ++i)  // G g
      for (int j = 0; j < 3; ++j) {
        double* tt = t.data() + (i * 3 + j) * K;
        const double *g0 = g.data() + j * K, *g1 = g.data() + (3 + j) * K, *g2 = g.data() + (6 + j) * K;
        for (int k = 0; k < K; ++k) tt[k] = G[i][0] * g0[k] + G[i][1] * g1[k] + G[i][2] * g2[k];
      }
    for (int i = 0; i < A; ++i)  // (G g) G^T, stored in the packed layout of transform point i * A + j
      for (int j = 0; j < A; ++j) {
        const double *t0 = t.data() + (i * 3) * K, *t1 = t0 + K, *t2 = t1 + K;
        float* o = out.data() + (i * A + j) * set;
        for (int k0 = 0; k0 < K; k0 += kKBlock) {
          float* ob = o + kblock_offset(k0, 1, C) + static_cast<size_t>(c) * kblock_width(k0, Kpad) - k0;
          for (int k = k0; k < std::min(K, k0 + kKBlock); ++k)
            ob[k] = static_cast<float>(t0[k] * G[j][0] + t1[k] * G[j][1] + t2[k] * G[j][2]);
        }
      }
  }
  return out;
}

int winograd_tile(int mode, int board) {
  if (mode != 1) return mode == 2 || mode == 3 ? mode : 0;
  // multiplications per image: F(3x3): 25 per 3x3 tile; F(2x2): 16 per 2x2 tile
  const int t3 = (board + 2) / 3, t2 = (board + 1) / 2;
  return 25 * t3 * t3 <= 16 * t2 * t2 ? 3 : 2;
}

// ===========================================================================================================
// Convolution
template <typename T>
void conv_forward_range(int isa, const T* x, int H, int W, int C, const T* wp, int K, int R, const T* bias,
                        const T* residual, bool relu, T* out, int64_t q0, int64_t q1) {
  MG_DISPATCH(isa, conv_forward_range_isa<T>, x, H, W, C, wp, K, R, bias, residual, relu, out, q0, q1);
}

template <typename T>
void conv_forward(const Exec& ex, const T* x, int B, int H, int W, int C, const T* wp, int K, int R, T* out,
                  const T* residual) {
  const int64_t HW = static_cast<int64_t>(H) * W;
  const int cores = ex.cores;
  parallel(cores, [&](int i) {
    int64_t q0, q1;
    if (B >= cores) {  // the paper's mapping: whole images to each core
      auto [b0, b1] = share(B, cores, i);
      q0 = b0 * HW;
      q1 = b1 * HW;
    } else {  // fewer images than cores: split the pixels
      std::tie(q0, q1) = share(B * HW, cores, i);
    }
    if (q1 > q0) conv_forward_range<T>(ex.isa, x, H, W, C, wp, K, R, nullptr, residual, false, out, q0, q1);
  });
}

template <typename T>
static void wgrad_images(int isa, const T* A, int Ca, int Rr, const T* Bm, int Bs, int Vc, int64_t b0,
                         int64_t b1, int H, int W, int R, T* G) {
  MG_DISPATCH(isa, wgrad_images_isa<T>, A, Ca, Rr, Bm, Bs, Vc, b0, b1, H, W, R, G);
}

template <typename T>
void tree_sum(const std::vector<T*>& partial, size_t n) {
  const int cores = static_cast<int>(partial.size());
  for (int s = 1; s < cores; s *= 2) {  // level s adds core i+s's partial into core i's
    parallel(cores, [&](int i) {
      if (i % (2 * s) == 0 && i + s < cores) {
        T* dst = partial[i];
        const T* src = partial[i + s];
        for (size_t j = 0; j < n; ++j) dst[j] += src[j];
      }
    });
  }
}

template <typename T>
void conv_weight_grad(const Exec& ex, const T* x, const T* dy, int B, int H, int W, int C, int K, int R,
                      T* dw) {
  const int64_t M = static_cast<int64_t>(B) * H * W;
  const int taps = R * R;
  // For a 1x1 conv with few output channels (the policy/value heads) vectorise over C instead of K:
  // G^T[k, c] = sum dy[., k] * x[., c] (rows = K, vectors = C); otherwise G[t, c, k] (rows = C, vectors = K).
  const bool swapped = (R == 1 && K < 8 && C >= 8);
  const T* A = swapped ? dy : x;
  const int Ca = swapped ? K : C, Rr = Ca;
  const T* Bsrc = swapped ? x : dy;
  const int Bc = swapped ? C : K, Vc = round_up8(Bc);
  std::vector<T> Bpad;
  if (Vc != Bc) {  // pad the vector operand's channels to a multiple of 8
    Bpad.assign(static_cast<size_t>(M) * Vc, T(0));
    for (int64_t m = 0; m < M; ++m) std::memcpy(&Bpad[m * Vc], Bsrc + m * Bc, sizeof(T) * Bc);
  }
  const T* Bm = Vc != Bc ? Bpad.data() : Bsrc;
  const int cores = ex.cores;
  const size_t gsize = static_cast<size_t>(taps) * Rr * Vc;
  std::vector<std::vector<T>> partial(cores);
  // 1. each core accumulates the weight gradient of its share of the batch
  parallel(cores, [&](int i) {
    partial[i].assign(gsize, T(0));
    auto [b0, b1] = share(B, cores, i);
    wgrad_images<T>(ex.isa, A, Ca, Rr, Bm, Vc, Vc, b0, b1, H, W, R, partial[i].data());
  });
  // 2. pairwise (binary tree) reduction across cores
  std::vector<T*> parts(cores);
  for (int i = 0; i < cores; ++i) parts[i] = partial[i].data();
  tree_sum(parts, gsize);
  // 3. unpack to torch layout (K, C, R, R)
  const T* G = partial[0].data();
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < taps; ++t)
        dw[(static_cast<size_t>(k) * C + c) * taps + t] =
            swapped ? G[static_cast<size_t>(k) * Vc + c] : G[(static_cast<size_t>(t) * Rr + c) * Vc + k];
}

// Winograd entry points of the training path (the passes themselves are in winograd_train.cpp)
template <int M, bool kSums>
static void winograd_conv_train(int isa, const float* x, int64_t nb, int H, int W, int C, const float* wino,
                                int K, const float* bias, const float* residual, float* out,
                                const BnSums* sums) {
  MG_DISPATCH(isa, winograd_conv<M MG_COMMA 24 MG_COMMA true MG_COMMA kSums>, x, nb, H, W, C, wino, K, bias,
              residual, false, out, sums);
}

void winograd_conv_images(int isa, int m, const float* x, int64_t nb, int H, int W, int C, const float* wino,
                          int K, const float* bias, const float* residual, float* out, const BnSums* sums) {
  // chunks of 24 tiles (fewer than the fused network's 48: training's images come in larger batches), the
  // next chunk's images prefetched (a step's activations come from L3 or memory, cold)
  auto fn = m == 3 ? (sums ? winograd_conv_train<3, true> : winograd_conv_train<3, false>)
                   : (sums ? winograd_conv_train<2, true> : winograd_conv_train<2, false>);
  fn(isa, x, nb, H, W, C, wino, K, bias, residual, out, sums);
}

void winograd_wgrad_images(int isa, int m, const float* x, const float* dy, int64_t nb, int H, int W, int C,
                           int K, int ldk, float* Z) {
  if (m == 3)
    MG_DISPATCH(isa, winograd_wgrad<3>, x, dy, nb, H, W, C, K, ldk, Z);
  else
    MG_DISPATCH(isa, winograd_wgrad<2>, x, dy, nb, H, W, C, K, ldk, Z);
}

// ===========================================================================================================
// BN + ReLU
template <typename T>
void bn_relu_forward(const Exec& ex, const T* x, const T* residual, int64_t M, int C, const T* gamma,
                     const T* beta, T* running_mean, T* running_var, bool training, double momentum,
                     double eps, T* y, T* mean, T* invstd, const double* sums) {
  const int cores = ex.cores;
  if (training) {
    std::vector<std::vector<double>> part(cores);
    if (!sums)
      parallel(cores, [&](int i) {
        part[i].assign(2 * static_cast<size_t>(C), 0.0);
        auto [m0, m1] = share(M, cores, i);
        MG_DISPATCH(ex.isa, bn_stats_range<T>, x, m0, m1, C, part[i].data(), part[i].data() + C);
      });
    for (int c = 0; c < C; ++c) {
      double s = sums ? sums[c] : 0.0, ss = sums ? sums[C + c] : 0.0;
      for (int i = 0; !sums && i < cores; ++i) {
        s += part[i][c];
        ss += part[i][C + c];
      }
      const double mu = s / M, var = std::max(ss / M - mu * mu, 0.0);
      mean[c] = static_cast<T>(mu);
      invstd[c] = static_cast<T>(1.0 / std::sqrt(var + eps));
      const double unbiased = M > 1 ? var * M / (M - 1) : var;
      running_mean[c] = static_cast<T>((1 - momentum) * running_mean[c] + momentum * mu);
      running_var[c] = static_cast<T>((1 - momentum) * running_var[c] + momentum * unbiased);
    }
  } else {
    for (int c = 0; c < C; ++c) {
      mean[c] = running_mean[c];
      invstd[c] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(running_var[c]) + eps));
    }
  }
  std::vector<T> scale(C), shift(C);
  for (int c = 0; c < C; ++c) {
    scale[c] = gamma[c] * invstd[c];
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  parallel(cores, [&](int i) {
    auto [m0, m1] = share(M, cores, i);
    MG_DISPATCH(ex.isa, bn_apply_range<T>, x, residual, m0, m1, C, scale.data(), shift.data(), y);
  });
}

template <typename T>
void bn_relu_backward(const Exec& ex, const T* dy, const T* y, const T* x, int64_t M, int C, const T* gamma,
                      const T* mean, const T* invstd, bool training, T* dx, T* dgamma, T* dbeta, T* dres,
                      const T* beta) {
  const int cores = ex.cores;
  std::vector<T> scale(y ? 0 : C), shift(y ? 0 : C);  // y null: the forward's, for the ReLU's mask
  for (int c = 0; !y && c < C; ++c) {
    scale[c] = gamma[c] * invstd[c];
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  std::vector<std::vector<double>> part(cores);
  parallel(cores, [&](int i) {
    part[i].assign(2 * static_cast<size_t>(C), 0.0);
    auto [m0, m1] = share(M, cores, i);
    MG_DISPATCH(ex.isa, bn_bwd_stats_range<T>, dy, y, x, m0, m1, C, mean, scale.data(), shift.data(),
                part[i].data(), part[i].data() + C);
  });
  std::vector<T> ca(C), cb(C), cc(C);
  for (int c = 0; c < C; ++c) {
    double sg = 0, sgx = 0;
    for (int i = 0; i < cores; ++i) {
      sg += part[i][c];
      sgx += part[i][C + c];
    }
    const double is = invstd[c];
    dbeta[c] = static_cast<T>(sg);
    dgamma[c] = static_cast<T>(sgx * is);
    ca[c] = static_cast<T>(gamma[c] * is);
    if (training) {  // dx = gamma*invstd * (g - mean(g) - xhat * mean(g*xhat))
      cb[c] = static_cast<T>(-gamma[c] * is * is * is * sgx / M);
      cc[c] = static_cast<T>(-gamma[c] * is * sg / M);
    } else {
      cb[c] = T(0);
      cc[c] = T(0);
    }
  }
  parallel(cores, [&](int i) {
    auto [m0, m1] = share(M, cores, i);
    MG_DISPATCH(ex.isa, bn_bwd_apply_range<T>, dy, y, x, m0, m1, C, mean, scale.data(), shift.data(),
                ca.data(), cb.data(), cc.data(), dx, dres);
  });
}

// ===========================================================================================================
// Seconds of CPU time used by the calling thread (so that time-sharing a busy machine with other processes
// does not count), or of wall time where that clock is missing.
static double thread_seconds() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double measure_peak_gflops(int isa, double seconds) {
  int64_t iters = 1 << 16;
  volatile double sink = 0;
  for (;;) {  // grow until one run takes ~seconds/8, then report the best of 8 runs
    const double t0 = thread_seconds();
    double flops;
    sink = sink + MG_DISPATCH(isa, fma_loop, iters, &flops);
    const double dt = thread_seconds() - t0;
    if (dt > seconds / 8 || iters > (int64_t(1) << 40)) break;
    iters *= 2;
  }
  double best = 0;
  for (int rep = 0; rep < 8; ++rep) {
    const double t0 = thread_seconds();
    double flops;
    sink = sink + MG_DISPATCH(isa, fma_loop, iters, &flops);
    const double dt = thread_seconds() - t0;
    best = std::max(best, flops / dt / 1e9);
  }
  return best;
}

// ===========================================================================================================
void FusedNetCore::run(const void* input, bool is_u8, int B, bool softmax, float* policy, float* value,
                       float* ownership, float* score) const {
  const int cores = ex.cores;
  if (B == 1 || cores == 1) {  // no wake-up of other cores for a single position
    MG_DISPATCH(ex.isa, fused_run_images, *this, input, is_u8, 0, B, softmax, policy, value, ownership,
                score);
    return;
  }
  parallel(cores, [&](int i) {  // each core runs its share of the batch through the whole network
    auto [b0, b1] = share(B, cores, i);
    MG_DISPATCH(ex.isa, fused_run_images, *this, input, is_u8, b0, b1, softmax, policy, value, ownership,
                score);
  });
}

// explicit instantiations
#define MG_INSTANTIATE(T)                                                                                   \
  template std::vector<T> pack_weights<T>(const T*, int, int, int, bool, const T*);                         \
  template void conv_forward_range<T>(int, const T*, int, int, int, const T*, int, int, const T*, const T*, \
                                      bool, T*, int64_t, int64_t);                                          \
  template void conv_forward<T>(const Exec&, const T*, int, int, int, int, const T*, int, int, T*,          \
                                const T*);                                                                  \
  template void tree_sum<T>(const std::vector<T*>&, size_t);                                                \
  template void conv_weight_grad<T>(const Exec&, const T*, const T*, int, int, int, int, int, int, T*);     \
  template void bn_relu_forward<T>(const Exec&, const T*, const T*, int64_t, int, const T*, const T*, T*,   \
                                   T*, bool, double, double, T*, T*, T*, const double*);                    \
  template void bn_relu_backward<T>(const Exec&, const T*, const T*, const T*, int64_t, int, const T*,      \
                                    const T*, const T*, bool, T*, T*, T*, T*, const T*);
MG_INSTANTIATE(float)
MG_INSTANTIATE(double)

}  // namespace mgdsp
