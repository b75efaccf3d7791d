// The fused inference network's kernel bodies (dense layers, deterministic exp/tanh, one chunk of images
// through the whole network), included by kernels_impl.h after winograd_impl.h, once per instruction-set
// build. No include guard on purpose.

// ---- dense layers and the fused network -------------------------------------------------------------------
// out[o] = b[o] + sum_i in[i] * wt[i, o], one FMA per term in the order of i (zero inputs, common after ReLU,
// are skipped: fma(0, w, s) == s for finite w, so skipping changes no bit)
static void dense_forward(const float* in, int I, const float* wt, const float* b, int O, float* out) {
  for (int o = 0; o < O; ++o) out[o] = b[o];
  for (int i = 0; i < I; ++i) {
    const float a = in[i];
    if (a == 0.f) continue;
    const float* w = wt + static_cast<int64_t>(i) * O;
    for (int o = 0; o < O; ++o) out[o] = __builtin_fmaf(a, w[o], out[o]);
  }
}

// e^x in double, the same bits on every CPU (libm may pick an FMA or a non-FMA variant of exp when it loads):
// x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, two FMAs), e^r by its Taylor polynomial of degree 13 (Horner,
// an FMA per step; truncation < 1e-17 relative), times 2^n.
static inline double det_exp(double x) {
  if (!(x > -745.0)) return x != x ? x : 0.0;
  if (x > 709.0) return HUGE_VAL;
  const double n = std::nearbyint(x * 1.4426950408889634);
  double r = __builtin_fma(-n, 6.93147180369123816490e-01, x);
  r = __builtin_fma(-n, 1.90821492927058770002e-10, r);
  double p = 1.0 / 6227020800.0;  // 1/13!
  constexpr double inv_fact[13] = {1.0 / 479001600.0,
                                   1.0 / 39916800.0,
                                   1.0 / 3628800.0,
                                   1.0 / 362880.0,
                                   1.0 / 40320.0,
                                   1.0 / 5040.0,
                                   1.0 / 720.0,
                                   1.0 / 120.0,
                                   1.0 / 24.0,
                                   1.0 / 6.0,
                                   0.5,
                                   1.0,
                                   1.0};  // 1/12! .. 1/0!
  for (double f : inv_fact) p = __builtin_fma(p, r, f);
  return std::ldexp(p, static_cast<int>(n));
}

// tanh from det_exp: sign(v) (1 - e) / (1 + e), e = exp(-2|v|)
static inline double det_tanh(double v) {
  const double e = det_exp(-2.0 * std::fabs(v)), t = (1.0 - e) / (1.0 + e);
  return v < 0 ? -t : t;
}

// KataGo's pooled statistics of one image's NHWC map x (N*N points, `stride` floats apart): per channel ch
// < c the mean (summed in double, point order), mean * (N - 14) / 10 and max, into feat (3c: all means, all
// scaled means, all maxes), the order of gpool.py's global_pool_bias and pooled_value_features.
static void pool_channels(const float* x, int N, int stride, int c, float* feat) {
  const int HW = N * N;
  const float scale = static_cast<float>((N - 14) / 10.0);
  for (int ch = 0; ch < c; ++ch) {
    double s = 0;
    float mx = x[ch];
    for (int q = 0; q < HW; ++q) {
      s += x[static_cast<int64_t>(q) * stride + ch];
      mx = std::max(mx, x[static_cast<int64_t>(q) * stride + ch]);
    }
    const float mean = static_cast<float>(s / HW);
    feat[ch] = mean;
    feat[c + ch] = mean * scale;
    feat[2 * c + ch] = mx;
  }
}

// The global pooling bias on NHWC r (nb images of N x N x F) in place: per image, the first g.c channels
// pooled (pool_channels), the dense layer of those 3c values (dense_forward), its F - c outputs added to
// channels c .. F - 1 at every point.
static void gpool_bias(const FusedGpool& g, int N, int F, int64_t nb, float* r) {
  const int c = g.c, O = F - c, HW = N * N;
  thread_local std::vector<float> feat, bias;
  feat.resize(3 * static_cast<size_t>(c));
  bias.resize(static_cast<size_t>(O));
  for (int64_t b = 0; b < nb; ++b) {
    float* rb = r + b * HW * F;
    pool_channels(rb, N, F, c, feat.data());
    dense_forward(feat.data(), 3 * c, g.wt.data(), g.b.data(), O, bias.data());
    for (int q = 0; q < HW; ++q) {
      float* p = rb + static_cast<int64_t>(q) * F + c;
      for (int o = 0; o < O; ++o) p[o] += bias[o];
    }
  }
}

// Runs images [b0, b1) of the batch through the whole network on the calling core.
// ownership (B, N*N) and score (B,), where not null (and the net has the auxiliary heads): the ownership
// head's logits per point (a 1x1 convolution of the trunk output) and the score head's output (margin / N*N),
// both from the view of the player to move, as DualNet.forward_all computes them.
static void fused_run_chunk(const FusedNetCore& net, const void* input, bool is_u8, int64_t b0, int64_t b1,
                            bool softmax, float* policy, float* value, float* ownership, float* score) {
  const int N = net.N, HW = N * N, P = net.planes, F = net.filters;
  const int64_t nb = b1 - b0, npix = nb * HW;
  if (nb <= 0) return;
  thread_local std::vector<float> in_buf, buf0, buf1, buf2, head;
  in_buf.resize(npix * P);
  const size_t act = static_cast<size_t>(npix) * F;
  buf0.resize(act);
  buf1.resize(act);
  buf2.resize(act);
  const int vc = std::max(net.value_c, 1);  // the value conv's output channels
  head.resize(static_cast<size_t>(HW) * (2 + vc) + 2 * (HW + 1) + 3 * vc + net.fc + 8);
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
  const int tile =
      winograd_tile(net.winograd, N);  // 0, 2 or 3: by the board size only, the same on every CPU
  auto conv = [&](const FusedConv& L, const float* x, const float* res, float* out) {
    if (tile == 3 && !L.wino3.empty())
      winograd_conv<3>(x, nb, N, N, L.C, L.wino3.data(), L.K, L.bias.data(), res, true, out);
    else if (tile == 2 && !L.wino.empty())
      winograd_conv<2>(x, nb, N, N, L.C, L.wino.data(), L.K, L.bias.data(), res, true, out);
    else
      conv_forward_range_isa<float>(x, N, N, L.C, L.w.data(), L.K, L.R, L.bias.data(), res, true, out, 0,
                                    npix);
  };
  float *h = buf0.data(), *r = buf1.data(), *h2 = buf2.data();
  conv(net.convs[0], in_buf.data(), nullptr, h);
  for (int k = 0; k < net.blocks; ++k) {
    conv(net.convs[1 + 2 * k], h, nullptr, r);
    if (net.gpool[k].c > 0) gpool_bias(net.gpool[k], N, F, nb, r);
    conv(net.convs[2 + 2 * k], r, h, h2);
    std::swap(h, h2);
  }
  const FusedConv& pol = net.convs[1 + 2 * net.blocks];
  const FusedConv& val = net.convs[2 + 2 * net.blocks];
  float* pfeat = head.data();        // 2*HW
  float* logits = pfeat + 2 * HW;    // HW + 1
  float* vfeat = logits + (HW + 1);  // HW * vc: the value head's map
  float* pooled = vfeat + HW * vc;   // 3 * vc, with the pooled value head
  float* hidden = pooled + 3 * vc;   // fc
  for (int64_t b = 0; b < nb; ++b) {
    const float* hb = h + b * HW * F;
    conv_forward_range_isa<float>(hb, N, N, F, pol.w.data(), 2, 1, pol.bias.data(), nullptr, true, pfeat, 0,
                                  HW);
    conv_forward_range_isa<float>(hb, N, N, F, val.w.data(), vc, 1, val.bias.data(), nullptr, true, vfeat, 0,
                                  HW);
    float* out_p = policy + (b0 + b) * (HW + 1);
    dense_forward(pfeat, 2 * HW, net.policy_wt.data(), net.policy_b.data(), HW + 1, logits);
    if (softmax) {
      float mx = logits[0];
      for (int i = 1; i <= HW; ++i) mx = std::max(mx, logits[i]);
      double s = 0;
      for (int i = 0; i <= HW; ++i) {
        out_p[i] = static_cast<float>(det_exp(static_cast<double>(logits[i] - mx)));
        s += out_p[i];
      }
      const float inv = static_cast<float>(1.0 / s);
      for (int i = 0; i <= HW; ++i) out_p[i] *= inv;
    } else {
      std::memcpy(out_p, logits, sizeof(float) * (HW + 1));
    }
    if (net.value_c > 0) {
      pool_channels(vfeat, N, vc, vc, pooled);  // KataGo's pooled value head
      dense_forward(pooled, 3 * vc, net.value_w1t.data(), net.value_b1.data(), net.fc, hidden);
    } else {
      dense_forward(vfeat, HW, net.value_w1t.data(), net.value_b1.data(), net.fc, hidden);
    }
    double v = net.value_b2;
    for (int i = 0; i < net.fc; ++i) v += static_cast<double>(std::max(hidden[i], 0.f)) * net.value_w2[i];
    value[b0 + b] = static_cast<float>(det_tanh(v));
    if (!net.has_aux) continue;
    if (ownership != nullptr) {
      float* own = ownership + (b0 + b) * HW;
      for (int q = 0; q < HW; ++q) {
        double s = net.own_b;
        const float* hq = hb + static_cast<int64_t>(q) * F;
        for (int c = 0; c < F; ++c) s += static_cast<double>(hq[c]) * net.own_w[c];
        own[q] = static_cast<float>(s);
      }
    }
    if (score != nullptr) {
      double s = net.score_b;
      for (int i = 0; i < net.fc; ++i) s += static_cast<double>(std::max(hidden[i], 0.f)) * net.score_w[i];
      score[b0 + b] = static_cast<float>(s);
    }
  }
}

// Runs images [b0, b1) through the network in chunks whose activations (3 buffers) stay in L2 (each image is
// computed alone: the chunking changes no result).
static void fused_run_images(const FusedNetCore& net, const void* input, bool is_u8, int64_t b0, int64_t b1,
                             bool softmax, float* policy, float* value, float* ownership, float* score) {
  const int64_t per_image = static_cast<int64_t>(net.N) * net.N * std::max(net.filters, net.planes);
  const int64_t chunk = std::max<int64_t>(1, kFusedChunkFloats / per_image);
  for (int64_t c0 = b0; c0 < b1; c0 += chunk)
    fused_run_chunk(net, input, is_u8, c0, std::min(b1, c0 + chunk), softmax, policy, value, ownership,
                    score);
}
