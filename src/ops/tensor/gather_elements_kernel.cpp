// Reference kernel of GatherElements: out[i] = data[i with its 'axis' coordinate replaced by
// indices[i]]; the output has the indices' shape, which may not exceed data's on the other axes.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void gather_elements(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t rank = data.rank();
  if (rank == 0) ctx.fail("input 'data' is a scalar; GatherElements needs rank >= 1");
  if (indices.rank() != rank)
    ctx.fail(fmt::format("indices {} must have the rank of data {}", rt::shape_str(indices.shape()),
                         rt::shape_str(data.shape())));
  const int64_t axis = normalize_axis(ctx.info().get_int("axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape()[d] > data.shape()[d])
      ctx.fail(fmt::format("indices {} exceed data {} on axis {}", rt::shape_str(indices.shape()),
                           rt::shape_str(data.shape()), d));
  std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const int64_t n = data.shape()[axis];
  for (int64_t& v : idx) v = normalize_index(v, n, "index");
  const std::vector<int64_t> ds = strides_of(data.shape());
  const Shape& is = indices.shape();
  Tensor& y = ctx.output(0, data.dtype(), is);
  dispatch_storage(data.dtype(), "GatherElements", [&]<class S>() {
    ElemSrc<S> src(data);
    ElemDst<S> dst(y);
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < y.numel(); ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) off += (d == axis ? idx[i] : pos[d]) * ds[d];
      dst[i] = src[off];
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++pos[d] < is[d]) break;
        pos[d] = 0;
      }
    }
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_gather_elements) {
  reg.add(tessera::rt::KernelDef::fn("GatherElements", gather_elements));
}
