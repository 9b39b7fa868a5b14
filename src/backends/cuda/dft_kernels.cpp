// The CUDA backend's DFT (ai.onnx 17: axis attribute; 20: axis input, default -2): real or complex
// input, dft_length, onesided, inverse and the onesided inverse (irfft), with the CPU reference's
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

}  // namespace

void register_dft_kernels(KernelTable& t) {
  t.add(cuda_def(
            "DFT", dft_supported,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Dft>(i); }, 17),
        HostIo{{1, 2}, {}});
}

}  // namespace tessera::cuda
