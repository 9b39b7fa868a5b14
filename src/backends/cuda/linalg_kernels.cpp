// The CUDA backend's Det: float32/16, bfloat16 and float64 matrices in the last two axes.
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/linalg_ops.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

void det(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  if (x.rank() < 2 || x.dim(-1) != x.dim(-2))
    ctx.fail(fmt::format("input X has shape {}; Det needs square matrices in the last two axes",
                         rt::shape_str(x.shape())));
  const int64_t n = x.dim(-1);
  const rt::Shape ys(x.shape().begin(), x.shape().end() - 2);
  const int64_t count = rt::shape_numel(ys);
  rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), ys);
  if (count == 0) return;
  rt::Tensor work = ctx.scratch_uninitialized(DataType::kDouble, {count, n, n});
  launch_det(*scalar_type(x.dtype()), x.raw(), y.raw(), static_cast<double*>(work.raw()), count, n,
             native(ctx.stream()));
  check_launch(ctx);
}

bool det_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0)) return false;
  const DataType t = info.input_dtype(0);
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kDouble;
}

}  // namespace

void register_linalg_kernels(KernelTable& t) {
  t.add(cuda_def(
      "Det", det_supported,
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(det); }, 11));
}

}  // namespace tessera::cuda
