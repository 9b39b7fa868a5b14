// Reference kernel of DFT (ai.onnx 17: axis attribute; 20: axis input, default -2). The last dimension
// holds real (1) or complex (2) values. The signal along `axis` is zero-padded or truncated to
// dft_length (default: its length) and transformed in double; onesided keeps bins 0..n/2 of a forward
// transform. An inverse onesided transform reads a half spectrum (n defaults to 2 * (bins - 1)),
// completes it by Hermitian symmetry and returns the real signal; inverses are scaled by 1/n.
#include <fmt/format.h>

#include "ops/attention/ref_util.h"
#include "ops/signal/fft_ref.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
using tessera::ops::fft_ref::Complex;

int64_t scalar_int(const rt::KernelContext& ctx, const rt::Tensor& t, const char* what) {
  if (t.numel() != 1 || t.rank() > 1)
    ctx.fail(fmt::format("{} must be a scalar, got shape {}", what, rt::shape_str(t.shape())));
  if (t.dtype() != rt::DataType::kInt32 && t.dtype() != rt::DataType::kInt64)
    ctx.fail(fmt::format("{} must be int32 or int64", what));
  return t.to_int64(0);
}

class DFT : public rt::OpKernel {
 public:
  explicit DFT(const rt::KernelInfo& info)
      : version_(info.since_version()),
        axis_attr_(info.since_version() < 20 ? info.get_int("axis", 1) : -2),
        inverse_(info.get_int("inverse", 0) != 0),
        onesided_(info.get_int("onesided", 0) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    refk::require_float(x, "input");
    const int rank = x.rank();
    if (rank < 2 || (x.dim(-1) != 1 && x.dim(-1) != 2))
      ctx.fail(fmt::format("input {} must be [..., signal..., 1 or 2]", rt::shape_str(x.shape())));
    int64_t axis = axis_attr_;
    if (version_ >= 20) {
      if (const rt::Tensor* a = ctx.optional_input(2)) axis = scalar_int(ctx, *a, "axis");
    }
    if (axis < -rank || axis > rank - 2 || axis == -1)
      ctx.fail(fmt::format("axis {} is outside [-{}, -2] and [0, {}] for an input of rank {}", axis, rank,
                           rank - 2, rank));
    if (axis < 0) axis += rank;
    const int64_t len = x.dim(static_cast<int>(axis));
    const bool irfft = inverse_ && onesided_;
    int64_t n = irfft ? 2 * (len - 1) : len;
    if (const rt::Tensor* d = ctx.optional_input(1)) {
      n = scalar_int(ctx, *d, "dft_length");
      if (n <= 0) ctx.fail(fmt::format("dft_length must be positive, got {}", n));
    }
    if (n <= 0) ctx.fail(fmt::format("the transform length along axis {} is {}; give dft_length", axis, n));
    const int64_t out_len = irfft ? n : (onesided_ ? n / 2 + 1 : n);
    rt::Shape out_shape = x.shape();
    out_shape[axis] = out_len;
    out_shape.back() = irfft ? 1 : 2;
    // The doubles computed into, and one line of complex samples per thread.
    rt::check_scratch(rt::DataType::kDouble, out_shape);
    rt::check_scratch(rt::DataType::kComplex128, rt::Shape{n});

    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < rank - 1; ++d) inner *= x.dim(d);
    const int64_t c_in = x.dim(-1), c_out = out_shape.back();
    const std::vector<double> in = refk::to_doubles(x, "DFT input");
    std::vector<double> out(static_cast<size_t>(outer * out_len * inner * c_out));
    ctx.threads().parallel_for(outer * inner, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> a;
      for (int64_t line = begin; line < end; ++line) {
        const int64_t o = line / inner, i = line % inner;
        auto src = [&](int64_t k) -> Complex {
          const size_t p = static_cast<size_t>(((o * len + k) * inner + i) * c_in);
          return {in[p], c_in == 2 ? in[p + 1] : 0.0};
        };
        a.assign(static_cast<size_t>(n), Complex(0, 0));
        if (irfft) {
          // Bins 0..n/2 from the input (missing ones are 0), the rest mirrored as conjugates.
          for (int64_t k = 0; k <= n / 2; ++k) a[k] = k < len ? src(k) : Complex(0, 0);
          for (int64_t k = n / 2 + 1; k < n; ++k) a[k] = std::conj(a[n - k]);
        } else {
          for (int64_t k = 0; k < std::min(n, len); ++k) a[k] = src(k);
        }
        tessera::ops::fft_ref::transform(a, inverse_);
        const double norm = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
        for (int64_t k = 0; k < out_len; ++k) {
          const size_t p = static_cast<size_t>(((o * out_len + k) * inner + i) * c_out);
          out[p] = a[k].real() * norm;
          if (c_out == 2) out[p + 1] = a[k].imag() * norm;
        }
      }
    });
    refk::store_doubles(ctx.output(0, x.dtype(), out_shape), out, "DFT output");
  }

 private:
  int version_;
  int64_t axis_attr_;
  bool inverse_, onesided_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(signal_dft) {
  reg.add(tessera::rt::KernelDef::of<DFT>("DFT"));
}
