// Reference kernel of Expand: the input broadcast (numpy style, both ways) with the given shape.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"
#include "runtime/broadcast.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void expand(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& s = ctx.input(1);
  if (s.rank() != 1) ctx.fail(fmt::format("input 'shape' must be 1-D, got {}", rt::shape_str(s.shape())));
  Shape target = int_input(ctx, 1, "shape");
  for (int64_t d : target)
    if (d < 0) ctx.fail(fmt::format("input 'shape' {} has a negative dimension", rt::shape_str(target)));
  Shape out = rt::broadcast_shapes(x.shape(), target);
  strided_output(ctx, 0, x, 0, rt::broadcast_strides(x.shape(), out), out);
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_expand) {
  reg.add(tessera::rt::KernelDef::fn("Expand", expand));
}
