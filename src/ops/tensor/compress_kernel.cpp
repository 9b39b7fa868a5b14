// Reference kernel of Compress: the slices along 'axis' (or the elements of the flattened input) whose
// condition entry is true. A condition shorter than the axis leaves the rest out; a longer one may only
// have false entries beyond it.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.dtype() != DataType::kBool) ctx.fail("input 'condition' must be bool");
  if (cond.rank() != 1)
    ctx.fail(fmt::format("input 'condition' must be 1-D, got {}", rt::shape_str(cond.shape())));
  const bool has_axis = ctx.info().has_attr("axis");
  const int64_t axis = has_axis ? normalize_axis(ctx.info().get_int("axis"), x.rank()) : 0;
  const Shape in_shape = has_axis ? x.shape() : Shape{x.numel()};
  const int64_t dim = in_shape[axis];
  const bool* c = cond.data<bool>();
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!c[i]) continue;
    if (i >= dim) ctx.fail(fmt::format("input 'condition' selects entry {} of an axis of size {}", i, dim));
    keep.push_back(i);
  }
  std::vector<std::vector<int64_t>> maps(in_shape.size());
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (static_cast<int64_t>(d) == axis) {
      maps[d] = keep;
    } else {
      for (int64_t o = 0; o < in_shape[d]; ++o) maps[d].push_back(o);
    }
  }
  Shape out = in_shape;
  out[axis] = static_cast<int64_t>(keep.size());
  Tensor& y = ctx.output(0, x.dtype(), out);
  dispatch_storage(x.dtype(), "Compress", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_axis_maps<S>(&ctx.threads(), src.data(), in_shape, maps, dst.data(), S{});
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_compress) {
  reg.add(tessera::rt::KernelDef::fn("Compress", compress));
}
