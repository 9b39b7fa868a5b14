// Reference kernel of Slice: the window starts..ends (exclusive) with 'steps' along the given axes.
// Negative positions count from the end; out-of-range ones are clamped as the spec says (to [0, dim] for
// positive steps, to [-1, dim-1] for negative ones). starts/ends/axes are attributes in Slice-1 and
// inputs from 10; the result is a strided view, copied.
#include <fmt/format.h>

#include <algorithm>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

SliceArgs read_args(const KernelContext& ctx) {
  SliceArgs a;
  if (ctx.info().since_version() < 10) {
    a.starts = ctx.info().get_ints("starts");
    a.ends = ctx.info().get_ints("ends");
    if (ctx.info().has_attr("axes")) a.axes = ctx.info().get_ints("axes");
  } else {
    a.starts = int_input(ctx, 1, "starts");
    a.ends = int_input(ctx, 2, "ends");
    if (ctx.has_input(3)) a.axes = int_input(ctx, 3, "axes");
    if (ctx.has_input(4)) a.steps = int_input(ctx, 4, "steps");
  }
  const size_t n = a.starts.size();
  if (a.ends.size() != n)
    throw KernelError(fmt::format("'starts' has {} entries but 'ends' has {}", n, a.ends.size()));
  if (a.axes.empty() && (ctx.info().since_version() < 10 || !ctx.has_input(3)))
    for (size_t k = 0; k < n; ++k) a.axes.push_back(static_cast<int64_t>(k));
  if (a.axes.size() != n)
    throw KernelError(fmt::format("'axes' has {} entries but 'starts' has {}", a.axes.size(), n));
  if (a.steps.empty()) a.steps.assign(n, 1);
  if (a.steps.size() != n)
    throw KernelError(fmt::format("'steps' has {} entries but 'starts' has {}", a.steps.size(), n));
  return a;
}

void slice(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  SliceArgs a = read_args(ctx);
  std::vector<int64_t> axes = normalize_axes(a.axes, rank);
  const std::vector<int64_t> in_strides = strides_of(x.shape());
  Shape shape = x.shape();
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k], dim = x.shape()[axis], step = a.steps[k];
    if (step == 0) ctx.fail(fmt::format("'steps' has a 0 for axis {}", axis));
    int64_t s = a.starts[k], e = a.ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    shape[axis] = len;
    if (len > 0) base += s * in_strides[axis];
    strides[axis] = in_strides[axis] * step;
  }
  strided_output(ctx, 0, x, base, strides, shape);
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_slice) {
  reg.add(tessera::rt::KernelDef::fn("Slice", slice));
}
