// Reference kernel of OneHot: each index becomes a vector of 'depth' entries along 'axis', all
// values[0] (off) but the indexed one values[1] (on). Negative indices count from depth; indices outside
// [-depth, depth) give an all-off vector, as the spec says. Float indices and depth are truncated.
#include <fmt/format.h>

#include <cmath>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void one_hot(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& tdepth = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (tdepth.numel() != 1)
    ctx.fail(fmt::format("input 'depth' must have one element, got shape {}", rt::shape_str(tdepth.shape())));
  if (values.numel() != 2 || values.rank() > 1)
    ctx.fail(fmt::format("input 'values' must be [off, on], got shape {}", rt::shape_str(values.shape())));
  const double dd = tdepth.to_double(0);
  if (!(dd >= 1) || dd > 9.0e18) ctx.fail(fmt::format("input 'depth' is {}; it must be at least 1", dd));
  const int64_t depth = static_cast<int64_t>(dd);
  const int64_t rank = indices.rank();
  const int64_t axis = normalize_axis(ctx.info().get_int("axis", -1), rank + 1);
  Shape out = indices.shape();
  out.insert(out.begin() + axis, depth);
  const int64_t outer = prod(indices.shape(), 0, axis);
  const int64_t inner = prod(indices.shape(), axis, indices.shape().size());
  std::vector<int64_t> idx(static_cast<size_t>(indices.numel()));
  for (int64_t i = 0; i < indices.numel(); ++i) {
    double v = indices.to_double(i);
    int64_t k = std::isnan(v) || v >= 9.0e18 || v <= -9.0e18 ? depth : indices.to_int64(i);
    if (k < 0) k += depth;
    idx[i] = k >= 0 && k < depth ? k : -1;
  }
  Tensor& y = ctx.output(0, values.dtype(), out);
  dispatch_storage(values.dtype(), "OneHot", [&]<class S>() {
    ElemSrc<S> v(values);
    ElemDst<S> dst(y);
    std::fill(dst.data(), dst.data() + y.numel(), v[0]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = idx[o * inner + j];
        if (k >= 0) dst[(o * depth + k) * inner + j] = v[1];
      }
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_one_hot) {
  reg.add(tessera::rt::KernelDef::fn("OneHot", one_hot));
}
