// The CUDA backend's DFT (ai.onnx 17: axis attribute; 20: axis input, default -2) and STFT (17): real or
// complex input, dft_length, onesided, inverse and the onesided inverse (irfft), with the CPU reference's
// checks (ops/signal/dft_kernel.cpp). dft_length and axis are read on the host.
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/dft_ops.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

int64_t scalar_int(const rt::KernelContext& ctx, const rt::Tensor& t, const char* what) {
  if (t.numel() != 1 || t.rank() > 1)
    ctx.fail(fmt::format("{} must be a scalar, got shape {}", what, rt::shape_str(t.shape())));
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64)
    ctx.fail(fmt::format("{} must be int32 or int64", what));
  return t.to_int64(0);
}

bool dft_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0)) return false;
  const DataType t = info.input_dtype(0);
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kDouble;
}

class Dft : public rt::OpKernel {
 public:
  explicit Dft(const rt::KernelInfo& info)
      : version_(info.since_version()),
        axis_attr_(info.since_version() < 20 ? info.get_int("axis", 1) : -2),
        inverse_(info.get_int("inverse", 0) != 0),
        onesided_(info.get_int("onesided", 0) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const int rank = x.rank();
    if (rank < 2 || (x.dim(-1) != 1 && x.dim(-1) != 2))
      ctx.fail(fmt::format("input {} must be [..., signal..., 1 or 2]", rt::shape_str(x.shape())));
    int64_t axis = axis_attr_;
    if (version_ >= 20)
      if (const rt::Tensor* a = ctx.optional_input(2)) axis = scalar_int(ctx, *a, "axis");
    if (axis < -rank || axis > rank - 2 || axis == -1)
      ctx.fail(fmt::format("axis {} is outside [-{}, -2] and [0, {}] for an input of rank {}", axis, rank,
                           rank - 2, rank));
    if (axis < 0) axis += rank;
    DftSpec s;
    s.len = x.dim(static_cast<int>(axis));
    s.irfft = inverse_ && onesided_;
    s.inverse = inverse_;
    s.n = s.irfft ? 2 * (s.len - 1) : s.len;
    if (const rt::Tensor* d = ctx.optional_input(1)) {
      s.n = scalar_int(ctx, *d, "dft_length");
      if (s.n <= 0) ctx.fail(fmt::format("dft_length must be positive, got {}", s.n));
    }
    if (s.n <= 0)
      ctx.fail(fmt::format("the transform length along axis {} is {}; give dft_length", axis, s.n));
    s.out_len = s.irfft ? s.n : (onesided_ ? s.n / 2 + 1 : s.n);
    rt::Shape out_shape = x.shape();
    out_shape[static_cast<size_t>(axis)] = s.out_len;
    out_shape.back() = s.irfft ? 1 : 2;
    for (int d = 0; d < axis; ++d) s.outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < rank - 1; ++d) s.inner *= x.dim(d);
    s.c_in = static_cast<int>(x.dim(-1));
    s.c_out = static_cast<int>(out_shape.back());
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), out_shape);
    launch_dft(*scalar_type(x.dtype()), x.raw(), y.raw(), s, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  int version_;
  int64_t axis_attr_;
  bool inverse_, onesided_;
};

int64_t positive_scalar(const rt::KernelContext& ctx, const rt::Tensor& t, const char* what) {
  const int64_t v = scalar_int(ctx, t, what);
  if (v <= 0) ctx.fail(fmt::format("{} must be positive, got {}", what, v));
  return v;
}

// STFT (17): frames of frame_length samples, frame_step apart, times the window, transformed; output
// [batch, frames, bins, 2]. frame_step and frame_length are read on the host.
class Stft : public rt::OpKernel {
 public:
  explicit Stft(const rt::KernelInfo& info) : onesided_(info.get_int("onesided", 1) != 0) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& sig = ctx.input(0);
    if (sig.rank() != 3 || (sig.dim(2) != 1 && sig.dim(2) != 2))
      ctx.fail(fmt::format("signal {} must be [batch, signal_length, 1 or 2]", rt::shape_str(sig.shape())));
    const int64_t step = positive_scalar(ctx, ctx.input(1), "frame_step");
    const rt::Tensor* window = ctx.optional_input(2);
    const rt::Tensor* length_t = ctx.optional_input(3);
    if (!window && !length_t) ctx.fail("one of window and frame_length must be given");
    const int64_t frame = length_t ? positive_scalar(ctx, *length_t, "frame_length") : window->numel();
    if (window) {
      if (window->rank() != 1 || window->dim(0) != frame)
        ctx.fail(
            fmt::format("window {} must be 1-D of frame_length {}", rt::shape_str(window->shape()), frame));
      if (window->dtype() != sig.dtype()) ctx.fail("window must have the element type of signal");
    }
    const int64_t batch = sig.dim(0), len = sig.dim(1);
    if (onesided_ && sig.dim(2) == 2)
      ctx.fail("onesided is only defined for real signals (last dimension 1)");
    if (frame > len) ctx.fail(fmt::format("frame_length {} is longer than the signal ({})", frame, len));
    DftSpec s;
    s.frames = (len - frame) / step + 1;
    s.step = step;
    s.sig_len = len;
    s.window = window ? window->raw() : nullptr;
    s.outer = batch * s.frames;
    s.len = s.n = frame;
    s.out_len = onesided_ ? frame / 2 + 1 : frame;
    s.c_in = static_cast<int>(sig.dim(2));
    s.c_out = 2;
    rt::Tensor& y = ctx.output_uninitialized(0, sig.dtype(), {batch, s.frames, s.out_len, 2});
    launch_dft(*scalar_type(sig.dtype()), sig.raw(), y.raw(), s, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool onesided_;
};

}  // namespace

void register_dft_kernels(KernelTable& t) {
  t.add(cuda_def(
            "STFT", dft_supported,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Stft>(i); }, 17),
        HostIo{{1, 3}, {}});
  t.add(cuda_def(
            "DFT", dft_supported,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Dft>(i); }, 17),
        HostIo{{1, 2}, {}});
}

}  // namespace tessera::cuda
