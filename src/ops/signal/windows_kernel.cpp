// Reference kernels of HannWindow, HammingWindow and BlackmanWindow (ai.onnx 17): cosine-sum windows
//   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),  n = 0..size-1,
// with N = size when periodic (the default) and size - 1 when symmetric, computed in double and
// stored as output_datatype. Hamming uses a0 = 25/46 as the spec does (not the rounded 0.54).
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;

struct Coefficients {
  double a0, a1, a2;
};

class Window : public rt::OpKernel {
 public:
  Window(const rt::KernelInfo& info, Coefficients c)
      : c_(c),
        periodic_(info.get_int("periodic", 1) != 0),
        dtype_(static_cast<rt::DataType>(info.get_int("output_datatype", 1))) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& size_input = ctx.input(0);
    if (size_input.numel() != 1 || size_input.rank() > 1)
      ctx.fail(fmt::format("size must be a scalar, got shape {}", rt::shape_str(size_input.shape())));
    const int64_t size = size_input.to_int64(0);
    if (size < 0) ctx.fail(fmt::format("size must not be negative, got {}", size));
    rt::check_scratch(rt::DataType::kDouble, rt::Shape{size});
    const double n_denominator = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t n = 0; n < size; ++n) {
      if (n_denominator <= 0) {
        w[n] = 1.0;  // a symmetric window of one sample
        continue;
      }
      const double x = 2.0 * std::numbers::pi * static_cast<double>(n) / n_denominator;
      w[n] = c_.a0 - c_.a1 * std::cos(x) + c_.a2 * std::cos(2 * x);
    }
    refk::store_numeric(ctx.output(0, dtype_, {size}), w, "window output");
  }

 private:
  Coefficients c_;
  bool periodic_;
  rt::DataType dtype_;
};

class HannWindow : public Window {
 public:
  explicit HannWindow(const rt::KernelInfo& info) : Window(info, {0.5, 0.5, 0.0}) {}
};
class HammingWindow : public Window {
 public:
  explicit HammingWindow(const rt::KernelInfo& info) : Window(info, {25.0 / 46.0, 21.0 / 46.0, 0.0}) {}
};
class BlackmanWindow : public Window {
 public:
  explicit BlackmanWindow(const rt::KernelInfo& info) : Window(info, {0.42, 0.5, 0.08}) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(signal_windows) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<HannWindow>("HannWindow"));
  reg.add(KernelDef::of<HammingWindow>("HammingWindow"));
  reg.add(KernelDef::of<BlackmanWindow>("BlackmanWindow"));
}
