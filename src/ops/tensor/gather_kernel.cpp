// Reference kernel of Gather: entries of 'data' along 'axis' at the given indices (negative ones count
// from the end; out-of-range ones are an error). Output shape: data's with that axis replaced by the
// indices' shape.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

// The indices of input `i` normalised against a dimension of size n.
std::vector<int64_t> read_indices(const KernelContext& ctx, size_t i, int64_t n) {
  std::vector<int64_t> idx = int_input(ctx, i, "indices");
  for (int64_t& v : idx) v = normalize_index(v, n, "index");
  return idx;
}

void gather(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.rank() == 0) ctx.fail("input 'data' is a scalar; Gather needs rank >= 1");
  const int64_t axis = normalize_axis(ctx.info().get_int("axis", 0), data.rank());
  const int64_t n = data.dim(static_cast<int>(axis));
  const std::vector<int64_t> idx = read_indices(ctx, 1, n);
  Shape out(data.shape().begin(), data.shape().begin() + axis);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), data.shape().begin() + axis + 1, data.shape().end());
  Tensor& y = ctx.output(0, data.dtype(), out);
  const int64_t outer = prod(data.shape(), 0, axis);
  const int64_t inner = prod(data.shape(), axis + 1, data.shape().size());
  const int64_t m = static_cast<int64_t>(idx.size());
  dispatch_storage(data.dtype(), "Gather", [&]<class S>() {
    ElemSrc<S> src(data);
    ElemDst<S> dst(y);
    ctx.threads().parallel_for(outer * m, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t r = b; r < e; ++r) {
                                   const int64_t o = r / m, j = r % m;
                                   const S* from = src.data() + (o * n + idx[j]) * inner;
                                   std::copy(from, from + inner, dst.data() + r * inner);
                                 }
                               });
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_gather) {
  reg.add(tessera::rt::KernelDef::fn("Gather", gather));
}
