// Reference kernel of Flatten: a 2-D view of the input, the dimensions before 'axis' as rows.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;

void flatten(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.info().get_int("axis", 1);
  if (axis < -rank || axis > rank) ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  const Shape& s = x.shape();
  ctx.set_output(
      0, x.reshaped({prod(s, 0, static_cast<size_t>(axis)), prod(s, static_cast<size_t>(axis), s.size())}));
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_flatten) {
  reg.add(tessera::rt::KernelDef::fn("Flatten", flatten));
}
