// Reference kernel of Concat: the inputs joined along 'axis' (1 when not set in Concat-1). Each input
// contributes one contiguous block per index of the axes before 'axis'.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void concat(KernelContext& ctx) {
  const size_t n = ctx.input_count();
  if (n == 0) ctx.fail("Concat needs at least one input");
  std::vector<const Tensor*> xs;
  for (size_t i = 0; i < n; ++i) xs.push_back(&ctx.input(i));
  const Tensor& first = *xs[0];
  const int64_t rank = first.rank();
  if (rank == 0) ctx.fail("Concat cannot join scalars (input 0 has rank 0)");
  const int64_t axis = normalize_axis(ctx.info().get_int("axis", 1), rank);
  Shape out = first.shape();
  out[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& x = *xs[i];
    if (x.dtype() != first.dtype())
      ctx.fail(fmt::format("input {} is {}, input 0 is {}", i, tessera::ir::dtype_name(x.dtype()),
                           tessera::ir::dtype_name(first.dtype())));
    bool ok = x.rank() == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || x.dim(d) == first.dim(d);
    if (!ok)
      ctx.fail(fmt::format("input {} has shape {}, which does not join input 0 {} along axis {}", i,
                           rt::shape_str(x.shape()), rt::shape_str(first.shape()), axis));
    out[axis] += x.dim(axis);
  }
  Tensor& y = ctx.output(0, first.dtype(), out);
  const int64_t outer = prod(out, 0, axis);
  const int64_t inner = prod(out, axis + 1, out.size());
  const int64_t out_row = out[axis] * inner;
  dispatch_storage(first.dtype(), "Concat", [&]<class S>() {
    ElemDst<S> dst(y);
    int64_t at = 0;  // offset of the current input's block within an output row
    for (const Tensor* x : xs) {
      ElemSrc<S> src(*x);
      const int64_t block = x->dim(axis) * inner;
      ctx.threads().parallel_for(
          outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(block, 1)), [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o)
              std::copy(src.data() + o * block, src.data() + (o + 1) * block, dst.data() + o * out_row + at);
          });
      at += block;
    }
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_concat) {
  reg.add(tessera::rt::KernelDef::fn("Concat", concat));
}
