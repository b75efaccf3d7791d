// The fused inference network behind the plain C interface of infer_capi.h, built into its own shared library
// (minigo_core/nn/dsp/_infer*.so) with no torch or Python dependency and loaded with ctypes by
// minigo_core/nn/fused.py. Self-play and evaluation jobs use it, so they never import torch: a job's start-up
// is then numpy + pyarrow, not libtorch (whose import would be most of a short job's time).
#include "infer_capi.h"

#include <cstdio>
#include <exception>
#include <new>

#include "kernels.h"

namespace {

void set_error(char* err, int errlen, const char* msg) {
  if (err != nullptr && errlen > 0) std::snprintf(err, static_cast<size_t>(errlen), "%s", msg);
}

std::vector<float> copy_of(const float* p, size_t n) { return std::vector<float>(p, p + n); }

}  // namespace

extern "C" {

MG_API void* mg_fused_create(int N, int planes, int filters, int blocks, int fc, const float* const* conv_w,
                             const float* const* conv_b, const float* policy_wt, const float* policy_b,
                             const float* value_w1t, const float* value_b1, const float* value_w2,
                             float value_b2, int cores, int isa, int winograd, char* err, int errlen) {
  if (N < 1 || planes < 1 || filters < 1 || blocks < 0 || fc < 1) {
    set_error(err, errlen, "bad network shape (board size, planes, filters, blocks, fc width)");
    return nullptr;
  }
  if (winograd < 0 || winograd > 3) {
    set_error(err, errlen, "bad Winograd mode (0 direct, 1 by the board, 2 or 3 forced)");
    return nullptr;
  }
  try {
    const mgdsp::Exec ex = mgdsp::checked_exec(cores, isa);
    auto* n = new mgdsp::FusedNetCore();
    n->ex = ex;
    n->winograd = winograd;
    n->N = N;
    n->planes = planes;
    n->filters = filters;
    n->blocks = blocks;
    n->fc = fc;
    n->gpool.resize(static_cast<size_t>(blocks));
    const int layers = 3 + 2 * blocks;
    for (int i = 0; i < layers; ++i) {
      mgdsp::FusedConv L;
      L.C = i == 0 ? planes : filters;
      L.K = i < layers - 2 ? filters : (i == layers - 2 ? 2 : 1);
      L.R = i < layers - 2 ? 3 : 1;
      L.w = mgdsp::pack_weights<float>(conv_w[i], L.K, L.C, L.R, false);
      if (L.R == 3 && L.C >= mgdsp::kWinogradMinC) {
        L.wino = mgdsp::winograd_weights(conv_w[i], L.K, L.C, 2);
        L.wino3 = mgdsp::winograd_weights(conv_w[i], L.K, L.C, 3);
      }
      L.bias = copy_of(conv_b[i], static_cast<size_t>(L.K));
      L.bias.resize(mgdsp::round_up8(L.K), 0.f);
      n->convs.push_back(std::move(L));
    }
    const size_t hw = static_cast<size_t>(N) * N;
    n->policy_wt = copy_of(policy_wt, 2 * hw * (hw + 1));
    n->policy_b = copy_of(policy_b, hw + 1);
    n->value_w1t = copy_of(value_w1t, hw * fc);
    n->value_b1 = copy_of(value_b1, static_cast<size_t>(fc));
    n->value_w2 = copy_of(value_w2, static_cast<size_t>(fc));
    n->value_b2 = value_b2;
    return n;
  } catch (const std::bad_alloc&) {
    set_error(err, errlen, "out of memory building the inference engine");
  } catch (const std::exception& e) {
    set_error(err, errlen, e.what());
  }
  return nullptr;
}

MG_API int mg_fused_set_gpool(void* handle, int block, int c, const float* wt, const float* b, char* err,
                              int errlen) {
  auto* n = static_cast<mgdsp::FusedNetCore*>(handle);
  if (n == nullptr || block < 0 || block >= n->blocks || c < 1 || c >= n->filters || wt == nullptr ||
      b == nullptr) {
    set_error(err, errlen, "bad global pooling layer (block, pooled channels)");
    return -1;
  }
  try {
    mgdsp::FusedGpool g;
    g.c = c;
    g.wt = copy_of(wt, 3 * static_cast<size_t>(c) * (n->filters - c));
    g.b = copy_of(b, static_cast<size_t>(n->filters - c));
    n->gpool[static_cast<size_t>(block)] = std::move(g);
    return 0;
  } catch (const std::bad_alloc&) {
    set_error(err, errlen, "out of memory building the inference engine");
  }
  return -1;
}

MG_API int mg_fused_set_value_pool(void* handle, int c, const float* w, const float* b,
                                   const float* value_w1t, char* err, int errlen) {
  auto* n = static_cast<mgdsp::FusedNetCore*>(handle);
  if (n == nullptr || c < 1 || c > n->filters || w == nullptr || b == nullptr || value_w1t == nullptr) {
    set_error(err, errlen, "bad pooled value head (no engine, channels or weights)");
    return -1;
  }
  try {
    mgdsp::FusedConv L;
    L.C = n->filters;
    L.K = c;
    L.R = 1;
    L.w = mgdsp::pack_weights<float>(w, L.K, L.C, L.R, false);
    L.bias = copy_of(b, static_cast<size_t>(c));
    L.bias.resize(mgdsp::round_up8(c), 0.f);
    n->convs.back() = std::move(L);
    n->value_w1t = copy_of(value_w1t, 3 * static_cast<size_t>(c) * n->fc);
    n->value_c = c;
    return 0;
  } catch (const std::bad_alloc&) {
    set_error(err, errlen, "out of memory building the inference engine");
  }
  return -1;
}

MG_API int mg_fused_run(const void* handle, const void* x, int is_u8, int B, int softmax, float* policy,
                        float* value) {
  if (handle == nullptr || x == nullptr || B < 0) return -1;
  try {
    static_cast<const mgdsp::FusedNetCore*>(handle)->run(x, is_u8 != 0, B, softmax != 0, policy, value);
    return 0;
  } catch (...) {
    return -1;
  }
}

MG_API int mg_fused_set_aux(void* handle, const float* own_w, float own_b, const float* score_w,
                            float score_b, char* err, int errlen) {
  auto* n = static_cast<mgdsp::FusedNetCore*>(handle);
  if (n == nullptr || own_w == nullptr || score_w == nullptr) {
    set_error(err, errlen, "bad auxiliary heads (no engine or no weights)");
    return -1;
  }
  try {
    n->own_w = copy_of(own_w, static_cast<size_t>(n->filters));
    n->score_w = copy_of(score_w, static_cast<size_t>(n->fc));
    n->own_b = own_b;
    n->score_b = score_b;
    n->has_aux = true;
    return 0;
  } catch (const std::bad_alloc&) {
    set_error(err, errlen, "out of memory building the inference engine");
  }
  return -1;
}

MG_API int mg_fused_run_aux(const void* handle, const void* x, int is_u8, int B, int softmax, float* policy,
                            float* value, float* ownership, float* score) {
  const auto* n = static_cast<const mgdsp::FusedNetCore*>(handle);
  if (n == nullptr || x == nullptr || B < 0) return -1;
  if (!n->has_aux && (ownership != nullptr || score != nullptr)) return -1;
  try {
    n->run(x, is_u8 != 0, B, softmax != 0, policy, value, ownership, score);
    return 0;
  } catch (...) {
    return -1;
  }
}

MG_API void mg_fused_destroy(void* handle) { delete static_cast<mgdsp::FusedNetCore*>(handle); }

MG_API int mg_isa_supported(int isa) { return mgdsp::isa_supported(isa) ? 1 : 0; }
MG_API int mg_widest_isa() { return mgdsp::widest_isa(); }
MG_API int mg_cpu_has_avx2() { return mgdsp::cpu_has_avx2() ? 1 : 0; }

}  // extern "C"
