// Reference kernel of Transpose: output axis i is input axis perm[i] (reversed axes by default).
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void transpose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> perm;
  if (ctx.info().has_attr("perm")) {
    perm = ctx.info().get_ints("perm");
    if (static_cast<int64_t>(perm.size()) != rank)
      ctx.fail(fmt::format("attribute 'perm' {} has {} entries for an input of rank {}", rt::shape_str(perm),
                           perm.size(), rank));
    // Negative entries are not allowed by the spec; normalize_axes rejects repeats and out-of-range ones.
    for (int64_t p : perm)
      if (p < 0) ctx.fail(fmt::format("attribute 'perm' {} is not a permutation", rt::shape_str(perm)));
    perm = normalize_axes(perm, rank, "perm");
  } else {
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
  }
  const std::vector<int64_t> in_strides = strides_of(x.shape());
  Shape shape(static_cast<size_t>(rank));
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    shape[k] = x.shape()[perm[k]];
    strides[k] = in_strides[perm[k]];
  }
  strided_output(ctx, 0, x, 0, strides, shape);
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_transpose) {
  reg.add(tessera::rt::KernelDef::fn("Transpose", transpose));
}
