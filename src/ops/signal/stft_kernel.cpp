// Reference kernel of STFT (ai.onnx 17): frames of frame_length samples, frame_step apart, are
// multiplied by the window (if given) and transformed (in double); the output is
// [batch, frames, bins, 2] with bins = frame_length / 2 + 1 when onesided (real signals only).
#include <fmt/format.h>

#include "ops/attention/ref_util.h"
#include "ops/signal/fft_ref.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
using tessera::ops::fft_ref::Complex;

int64_t positive_scalar(const rt::KernelContext& ctx, const rt::Tensor& t, const char* what) {
  if (t.numel() != 1 || t.rank() > 1)
    ctx.fail(fmt::format("{} must be a scalar, got shape {}", what, rt::shape_str(t.shape())));
  if (t.dtype() != rt::DataType::kInt32 && t.dtype() != rt::DataType::kInt64)
    ctx.fail(fmt::format("{} must be int32 or int64", what));
  const int64_t v = t.to_int64(0);
  if (v <= 0) ctx.fail(fmt::format("{} must be positive, got {}", what, v));
  return v;
}

class STFT : public rt::OpKernel {
 public:
  explicit STFT(const rt::KernelInfo& info) : onesided_(info.get_int("onesided", 1) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& sig = ctx.input(0);
    refk::require_float(sig, "signal");
    if (sig.rank() != 3 || (sig.dim(2) != 1 && sig.dim(2) != 2))
      ctx.fail(fmt::format("signal {} must be [batch, signal_length, 1 or 2]", rt::shape_str(sig.shape())));
    const int64_t step = positive_scalar(ctx, ctx.input(1), "frame_step");
    const rt::Tensor* window = ctx.optional_input(2);
    const rt::Tensor* length_t = ctx.optional_input(3);
    if (!window && !length_t) ctx.fail("one of window and frame_length must be given");
    int64_t frame = length_t ? positive_scalar(ctx, *length_t, "frame_length") : window->numel();
    if (window) {
      if (window->rank() != 1 || window->dim(0) != frame)
        ctx.fail(
            fmt::format("window {} must be 1-D of frame_length {}", rt::shape_str(window->shape()), frame));
      if (window->dtype() != sig.dtype()) ctx.fail("window must have the element type of signal");
    }
    const int64_t batch = sig.dim(0), len = sig.dim(1), c_in = sig.dim(2);
    if (onesided_ && c_in == 2) ctx.fail("onesided is only defined for real signals (last dimension 1)");
    if (frame > len) ctx.fail(fmt::format("frame_length {} is longer than the signal ({})", frame, len));
    const int64_t frames = (len - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const std::vector<double> in = refk::to_doubles(sig, "STFT signal");
    const std::vector<double> w = window ? refk::to_doubles(*window, "STFT window") : std::vector<double>{};
    rt::check_scratch(rt::DataType::kDouble, rt::Shape{batch, frames, bins, 2});
    std::vector<double> out(static_cast<size_t>(rt::shape_numel(rt::Shape{batch, frames, bins, 2})));
    ctx.threads().parallel_for(batch * frames, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> a;
      for (int64_t bf = begin; bf < end; ++bf) {
        const int64_t b = bf / frames, f = bf % frames;
        a.resize(static_cast<size_t>(frame));
        for (int64_t j = 0; j < frame; ++j) {
          const size_t p = static_cast<size_t>((b * len + f * step + j) * c_in);
          const double scale = w.empty() ? 1.0 : w[j];
          a[j] = Complex(in[p], c_in == 2 ? in[p + 1] : 0.0) * scale;
        }
        tessera::ops::fft_ref::transform(a, false);
        for (int64_t k = 0; k < bins; ++k) {
          out[static_cast<size_t>(((bf)*bins + k) * 2)] = a[k].real();
          out[static_cast<size_t>(((bf)*bins + k) * 2 + 1)] = a[k].imag();
        }
      }
    });
    refk::store_doubles(ctx.output(0, sig.dtype(), {batch, frames, bins, 2}), out, "STFT output");
  }

 private:
  bool onesided_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(signal_stft) {
  reg.add(tessera::rt::KernelDef::of<STFT>("STFT"));
}
