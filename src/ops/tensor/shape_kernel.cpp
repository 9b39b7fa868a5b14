// Reference kernels of Shape and Size: a tensor's dimensions (a range of them from Shape-15) and its
// element count, as int64.
#include <algorithm>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

// Shape-15's start/end: negative values count from the back, then both clamp to [0, rank].
int64_t clamp_axis(int64_t i, int64_t rank) {
  if (i < 0) i += rank;
  return std::clamp<int64_t>(i, 0, rank);
}

void shape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t start = 0, end = rank;
  if (ctx.info().since_version() >= 15) {
    start = clamp_axis(ctx.info().get_int("start", 0), rank);
    if (ctx.info().has_attr("end")) end = clamp_axis(ctx.info().get_int("end"), rank);
  }
  end = std::max(start, end);
  Tensor& y = ctx.output(0, DataType::kInt64, {end - start});
  std::copy(x.shape().begin() + start, x.shape().begin() + end, y.data<int64_t>());
}

void size(KernelContext& ctx) {
  Tensor& y = ctx.output(0, DataType::kInt64, {});
  y.data<int64_t>()[0] = ctx.input(0).numel();
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_shape) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Shape", shape));
  reg.add(KernelDef::fn("Size", size));
}
