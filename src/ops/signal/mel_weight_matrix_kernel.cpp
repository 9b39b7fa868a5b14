// Reference kernel of MelWeightMatrix (ai.onnx 17), following the spec's reference: num_mel_bins + 2
// points evenly spaced on the mel scale (mel = 2595 log10(1 + hz / 700)) from the lower edge frequency
// are mapped to spectrogram bins floor((dft_length + 1) * hz / sample_rate); band i rises linearly from
// point i to point i + 1 and falls to point i + 2. The result is [dft_length / 2 + 1, num_mel_bins].
#include <fmt/format.h>

#include <cmath>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;

double scalar(const rt::KernelContext& ctx, int i, const char* what) {
  const rt::Tensor& t = ctx.input(i);
  if (t.numel() != 1 || t.rank() > 1)
    ctx.fail(fmt::format("{} must be a scalar, got shape {}", what, rt::shape_str(t.shape())));
  return t.to_double(0);
}

class MelWeightMatrix : public rt::OpKernel {
 public:
  explicit MelWeightMatrix(const rt::KernelInfo& info)
      : dtype_(static_cast<rt::DataType>(info.get_int("output_datatype", 1))) {}

  void compute(rt::KernelContext& ctx) const override {
    const int64_t mel_bins = static_cast<int64_t>(scalar(ctx, 0, "num_mel_bins"));
    const int64_t dft_length = static_cast<int64_t>(scalar(ctx, 1, "dft_length"));
    const int64_t sample_rate = static_cast<int64_t>(scalar(ctx, 2, "sample_rate"));
    const double lower = scalar(ctx, 3, "lower_edge_hertz");
    const double upper = scalar(ctx, 4, "upper_edge_hertz");
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0)
      ctx.fail(fmt::format("num_mel_bins ({}), dft_length ({}) and sample_rate ({}) must be positive",
                           mel_bins, dft_length, sample_rate));
    if (!(lower >= 0) || !(upper >= lower))
      ctx.fail(fmt::format("edge frequencies must satisfy 0 <= lower ({}) <= upper ({})", lower, upper));
    const int64_t rows = dft_length / 2 + 1;
    rt::check_scratch(rt::DataType::kDouble, rt::Shape{rows, mel_bins});
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    // The spec's reference spaces num_mel_bins + 2 points by (high - low) / (num_mel_bins + 2), so the last
    // point falls short of upper_edge_hertz; kept for conformance.
    const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      points[i] = static_cast<int64_t>(
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
      if (points[i] < 0 || points[i] >= rows)
        ctx.fail(
            fmt::format("upper_edge_hertz {} maps past the last spectrogram bin ({}); it must be at most "
                        "about sample_rate / 2",
                        upper, rows - 1));
    }
    std::vector<double> out(static_cast<size_t>(rows * mel_bins), 0.0);
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = points[i], mid = points[i + 1], hi = points[i + 2];
      if (mid == lo) {
        out[mid * mel_bins + i] = 1.0;
      } else {
        for (int64_t j = lo; j <= mid; ++j)
          out[j * mel_bins + i] = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
      }
      for (int64_t j = mid; j < hi; ++j)
        out[j * mel_bins + i] = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
    }
    refk::store_numeric(ctx.output(0, dtype_, {rows, mel_bins}), out, "MelWeightMatrix output");
  }

 private:
  rt::DataType dtype_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(signal_mel_weight_matrix) {
  reg.add(tessera::rt::KernelDef::of<MelWeightMatrix>("MelWeightMatrix"));
}
