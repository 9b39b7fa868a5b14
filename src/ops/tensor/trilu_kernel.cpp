// Reference kernel of Trilu: keeps the upper (upper=1: column - row >= k) or lower (column - row <= k)
// triangle of the last two axes and zeroes the rest.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void trilu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail(fmt::format("input must have rank >= 2, got {}", rt::shape_str(x.shape())));
  int64_t k = 0;
  if (const Tensor* tk = ctx.optional_input(1)) {
    if (tk->numel() != 1)
      ctx.fail(fmt::format("input 'k' must be a scalar, got {}", rt::shape_str(tk->shape())));
    k = int_input(ctx, 1, "k")[0];
  }
  const bool upper = ctx.info().get_int("upper", 1) != 0;
  const int64_t rows = x.dim(-2), cols = x.dim(-1);
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_storage(x.dtype(), "Trilu", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t at = (m * rows + i) * cols + j;
          const bool keep = upper ? j - i >= k : j - i <= k;
          dst[at] = keep ? src[at] : S{};
        }
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_trilu) {
  reg.add(tessera::rt::KernelDef::fn("Trilu", trilu));
}
