// Torch bindings of the DSP-emulation kernels (minigo_core.nn.dsp._C). Tensors in, tensors out; the heavy
// work runs with the GIL released on the pool of "DSP cores" (kernels.cpp). Every op is first given how it
// runs, `run` = (DSP cores, ISA number, Winograd mode of the float32 3x3 convs): Python's
// minigo_core.nn.dsp.kernels.KernelRun, from the network's Runtime. Nothing is set process-wide.
#include <torch/extension.h>

#include <stdexcept>
#include <tuple>

#include "kernels.h"

namespace {

using torch::Tensor;
using Run = std::tuple<int, int, int>;  // (cores, isa, winograd mode)

mgdsp::Exec exec_of(const Run& run) {
  try {
    return mgdsp::checked_exec(std::get<0>(run), std::get<1>(run));
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, e.what());
  }
}

int training_tile(const Run& run, const Tensor& x, int H, int W, int C, int K, int R) {
  const int mode = std::get<2>(run);
  TORCH_CHECK(mode >= 0 && mode <= 3, "the Winograd mode must be 0, 1, 2 or 3, got ", mode);
  return R == 3 && x.scalar_type() == torch::kFloat32 ? mgdsp::winograd_training_tile(mode, H, W, C, K) : 0;
}

void check_act(const Tensor& t, const char* name) {
  TORCH_CHECK(t.device().is_cpu(), name, " must be a CPU tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kFloat64, name,
              " must be float32 or float64, got ", t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), name, " must be contiguous (NHWC)");
}

void check_same(const Tensor& a, const Tensor& b, const char* name) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), name, " has dtype ", b.scalar_type(), ", expected ",
              a.scalar_type());
}

// y (B,H,W,K) = conv(x (B,H,W,C), w (K,C,R,R)), stride 1, pad R/2; with want_sums, *sums = the BN sums of y
// (2, K) float64 (sum, sum of squares per channel) where a Winograd pass took them, else undefined
Tensor conv_forward_impl(const Run& run, const Tensor& x, const Tensor& w, Tensor* sums) {
  const mgdsp::Exec ex = exec_of(run);
  check_act(x, "x");
  TORCH_CHECK(x.dim() == 4, "x must be (B, H, W, C)");
  TORCH_CHECK(w.dim() == 4 && w.size(2) == w.size(3) && (w.size(2) == 1 || w.size(2) == 3),
              "w must be (K, C, R, R) with R 1 or 3");
  TORCH_CHECK(w.size(1) == x.size(3), "w has ", w.size(1), " input channels, x has ", x.size(3));
  check_same(x, w, "w");
  const Tensor wc = w.contiguous();
  const int B = x.size(0), H = x.size(1), W = x.size(2), C = x.size(3), K = w.size(0), R = w.size(2);
  Tensor y = torch::empty({B, H, W, K}, x.options());
  const int tile = training_tile(run, x, H, W, C, K, R);
  if (tile) {  // Winograd (float32 3x3 only; float64 stays on the direct reference kernel)
    if (sums) *sums = torch::empty({2, K}, x.options().dtype(torch::kFloat64));
    pybind11::gil_scoped_release nogil;
    mgdsp::winograd_forward(ex, x.data_ptr<float>(), B, H, W, C, wc.data_ptr<float>(), K, tile,
                            y.data_ptr<float>(), sums ? sums->data_ptr<double>() : nullptr);
    return y;
  }
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "conv_forward", [&] {
    pybind11::gil_scoped_release nogil;
    auto wp = mgdsp::pack_weights<scalar_t>(wc.data_ptr<scalar_t>(), K, C, R, false);
    mgdsp::conv_forward<scalar_t>(ex, x.data_ptr<scalar_t>(), B, H, W, C, wp.data(), K, R,
                                  y.data_ptr<scalar_t>());
  });
  return y;
}

Tensor conv_forward(const Run& run, const Tensor& x, const Tensor& w) {
  return conv_forward_impl(run, x, w, nullptr);
}

// (y, the BN sums of y or None): see conv_forward_impl
std::vector<Tensor> conv_forward_sums(const Run& run, const Tensor& x, const Tensor& w) {
  Tensor sums;
  Tensor y = conv_forward_impl(run, x, w, &sums);
  return {y, sums};
}

// (dx or undefined, dw or undefined): dx = conv(dy, flipped transposed w) (+ dx_residual, added to each
// output after its sum: the skip connection's gradient); dw = per-core partials, tree-summed
std::vector<Tensor> conv_backward(const Run& run, const Tensor& dy, const Tensor& x, const Tensor& w,
                                  bool need_input, bool need_weight,
                                  const c10::optional<Tensor>& dx_residual) {
  const mgdsp::Exec ex = exec_of(run);
  check_act(dy, "dy");
  check_act(x, "x");
  check_same(x, dy, "dy");
  check_same(x, w, "w");
  const Tensor wc = w.contiguous();
  const int B = x.size(0), H = x.size(1), W = x.size(2), C = x.size(3), K = w.size(0), R = w.size(2);
  TORCH_CHECK(dy.size(0) == B && dy.size(1) == H && dy.size(2) == W && dy.size(3) == K, "dy shape mismatch");
  Tensor dx, dw;
  const void* res = nullptr;
  if (dx_residual) {
    check_act(*dx_residual, "dx_residual");
    check_same(x, *dx_residual, "dx_residual");
    TORCH_CHECK(dx_residual->sizes() == x.sizes(), "dx_residual must have the shape of x");
    res = dx_residual->data_ptr();
  }
  if (need_input) dx = torch::empty({B, H, W, C}, x.options());
  if (need_weight) dw = torch::empty({K, C, R, R}, x.options());
  const int tile = training_tile(run, x, H, W, C, K, R);
  if (tile) {  // Winograd (float32 3x3 only)
    pybind11::gil_scoped_release nogil;
    if (need_input)
      mgdsp::winograd_input_grad(ex, dy.data_ptr<float>(), B, H, W, C, wc.data_ptr<float>(), K, tile,
                                 dx.data_ptr<float>(), static_cast<const float*>(res));
    if (need_weight)
      mgdsp::winograd_weight_grad(ex, x.data_ptr<float>(), dy.data_ptr<float>(), B, H, W, C, K, tile,
                                  dw.data_ptr<float>());
    return {dx, dw};
  }
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "conv_backward", [&] {
    pybind11::gil_scoped_release nogil;
    if (need_input) {
      auto wf = mgdsp::pack_weights<scalar_t>(wc.data_ptr<scalar_t>(), K, C, R, true);
      mgdsp::conv_forward<scalar_t>(ex, dy.data_ptr<scalar_t>(), B, H, W, K, wf.data(), C, R,
                                    dx.data_ptr<scalar_t>(), static_cast<const scalar_t*>(res));
    }
    if (need_weight)
      mgdsp::conv_weight_grad<scalar_t>(ex, x.data_ptr<scalar_t>(), dy.data_ptr<scalar_t>(), B, H, W, C, K, R,
                                        dw.data_ptr<scalar_t>());
  });
  return {dx, dw};
}

// (y, mean, invstd); updates running stats in place when training
std::vector<Tensor> bn_relu_forward(const Run& run, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    Tensor running_mean, Tensor running_var,
                                    const c10::optional<Tensor>& residual, bool training, double momentum,
                                    double eps, const c10::optional<Tensor>& sums) {
  const mgdsp::Exec ex = exec_of(run);
  check_act(x, "x");
  const int64_t C = x.size(-1), M = x.numel() / std::max<int64_t>(C, 1);
  const double* sp = nullptr;
  if (sums) {
    TORCH_CHECK(training, "sums are batch statistics: training only");
    TORCH_CHECK(sums->scalar_type() == torch::kFloat64 && sums->is_contiguous() && sums->numel() == 2 * C,
                "sums must be a contiguous float64 (2, ", C, ") tensor (conv_forward_sums' second result)");
    sp = sums->data_ptr<double>();
  }
  for (const Tensor* t : std::initializer_list<const Tensor*>{&gamma, &beta, &running_mean, &running_var}) {
    TORCH_CHECK(t->is_contiguous() && t->numel() == C, "BN parameters must be contiguous vectors of length ",
                C);
    check_same(x, *t, "BN parameter");
  }
  if (residual) {
    check_act(*residual, "residual");
    check_same(x, *residual, "residual");
    TORCH_CHECK(residual->sizes() == x.sizes(), "residual must have the shape of x");
  }
  Tensor y = torch::empty_like(x), mean = torch::empty({C}, x.options()),
         invstd = torch::empty({C}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bn_relu_forward", [&] {
    pybind11::gil_scoped_release nogil;
    mgdsp::bn_relu_forward<scalar_t>(
        ex, x.data_ptr<scalar_t>(), residual ? residual->data_ptr<scalar_t>() : nullptr, M, C,
        gamma.data_ptr<scalar_t>(), beta.data_ptr<scalar_t>(), running_mean.data_ptr<scalar_t>(),
        running_var.data_ptr<scalar_t>(), training, momentum, eps, y.data_ptr<scalar_t>(),
        mean.data_ptr<scalar_t>(), invstd.data_ptr<scalar_t>(), sp);
  });
  return {y, mean, invstd};
}

// (dx, dgamma, dbeta, dresidual or undefined); y None (a forward without residual): the ReLU's mask from x
// and the forward's scale and shift (beta required)
std::vector<Tensor> bn_relu_backward(const Run& run, const Tensor& dy, const c10::optional<Tensor>& y,
                                     const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& invstd, bool training, bool need_residual,
                                     const c10::optional<Tensor>& beta) {
  const mgdsp::Exec ex = exec_of(run);
  check_act(x, "x");
  const Tensor dyc = dy.contiguous();
  check_same(x, dyc, "dy");
  const int64_t C = x.size(-1), M = x.numel() / std::max<int64_t>(C, 1);
  if (y) {
    check_act(*y, "y");
    check_same(x, *y, "y");
    TORCH_CHECK(y->sizes() == x.sizes(), "y must have the shape of x");
  } else {
    TORCH_CHECK(beta && beta->is_contiguous() && beta->numel() == C,
                "without y (the ReLU output), beta (a contiguous vector of ", C, ") gives the ReLU's mask");
    check_same(x, *beta, "beta");
  }
  Tensor dx = torch::empty_like(x), dgamma = torch::empty({C}, x.options()),
         dbeta = torch::empty({C}, x.options());
  Tensor dres;
  if (need_residual) dres = torch::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bn_relu_backward", [&] {
    pybind11::gil_scoped_release nogil;
    mgdsp::bn_relu_backward<scalar_t>(
        ex, dyc.data_ptr<scalar_t>(), y ? y->data_ptr<scalar_t>() : nullptr, x.data_ptr<scalar_t>(), M, C,
        gamma.data_ptr<scalar_t>(), mean.data_ptr<scalar_t>(), invstd.data_ptr<scalar_t>(), training,
        dx.data_ptr<scalar_t>(), dgamma.data_ptr<scalar_t>(), dbeta.data_ptr<scalar_t>(),
        need_residual ? dres.data_ptr<scalar_t>() : nullptr, beta ? beta->data_ptr<scalar_t>() : nullptr);
  });
  return {dx, dgamma, dbeta, dres};
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  namespace py = pybind11;
  m.doc() =
      "MiniGo DSP-emulation kernels: NHWC conv3x3/conv1x1, fused BN+ReLU (training); each op's first "
      "argument "
      "`run` = (DSP cores, ISA number, Winograd mode of float32 3x3 convs)";
  m.def("conv_forward", &conv_forward, "y = conv(x NHWC, w (K,C,R,R)), stride 1, pad R/2", py::arg("run"),
        py::arg("x"), py::arg("w"));
  m.def("conv_forward_sums", &conv_forward_sums,
        "(y, BN sums of y (2, K) float64 or None) of conv_forward: the sums where a Winograd pass took them",
        py::arg("run"), py::arg("x"), py::arg("w"));
  m.def("conv_backward", &conv_backward, "(dx (+ dx_residual), dw) of conv_forward", py::arg("run"),
        py::arg("dy"), py::arg("x"), py::arg("w"), py::arg("need_input"), py::arg("need_weight"),
        py::arg("dx_residual") = py::none());
  m.def(
      "bn_relu_forward", &bn_relu_forward,
      "fused BN (+residual) + ReLU forward -> (y, mean, invstd); sums: the batch sums conv_forward_sums took",
      py::arg("run"), py::arg("x"), py::arg("gamma"), py::arg("beta"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("residual"), py::arg("training"), py::arg("momentum"), py::arg("eps"),
      py::arg("sums") = py::none());
  m.def(
      "bn_relu_backward", &bn_relu_backward,
      "fused BN + ReLU backward -> (dx, dgamma, dbeta, dresidual); y None (no residual in the forward): the "
      "ReLU's mask recomputed from x and the forward's scale and shift (beta required)",
      py::arg("run"), py::arg("dy"), py::arg("y"), py::arg("x"), py::arg("gamma"), py::arg("mean"),
      py::arg("invstd"), py::arg("training"), py::arg("need_residual"), py::arg("beta") = py::none());
  m.def("winograd_training_tile", &mgdsp::winograd_training_tile,
        "the Winograd tile (0: direct) a float32 3x3 conv of this shape runs under mode (1 by the board, 2 "
        "F(2x2,3x3), 3 F(3x3,3x3), 0 direct)",
        py::arg("mode"), py::arg("H"), py::arg("W"), py::arg("C"), py::arg("K"));
  m.def("cpu_has_avx2", &mgdsp::cpu_has_avx2);
  m.def("isa_supported", &mgdsp::isa_supported,
        "whether this CPU runs kernels of ISA 0 (portable), 1 (avx2), 2 (avx512), 3 (portable16)");
  m.def("isa_name", [](int isa) { return std::string(mgdsp::isa_name(isa)); });
  m.def("widest_isa", &mgdsp::widest_isa, "the widest ISA this CPU runs: 2 (avx512), 1 (avx2) or 0");
  m.def(
      "measure_peak_gflops",
      [](int isa, double seconds) {
        exec_of(Run{1, isa, 0});  // an ISA this CPU runs
        py::gil_scoped_release nogil;
        return mgdsp::measure_peak_gflops(isa, seconds);
      },
      "FP32 GFLOP/s of one core's FMA loop on the kernels of ISA isa", py::arg("isa"),
      py::arg("seconds") = 0.5);
}
