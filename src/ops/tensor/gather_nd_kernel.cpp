// Reference kernel of GatherND: each row of the last index axis (length k) addresses a slice of data
// after the first batch_dims axes, which data and indices share; the slices are stacked in the shape of
// the other index axes. Output shape: indices.shape[:-1] + data.shape[batch_dims + k:].
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void gather_nd(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t r = data.rank(), q = indices.rank();
  const int64_t b = ctx.info().since_version() >= 12 ? ctx.info().get_int("batch_dims", 0) : 0;
  if (r < 1 || q < 1) ctx.fail("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    ctx.fail(fmt::format("batch_dims {} must be below the ranks of data ({}) and indices ({})", b, r, q));
  for (int64_t d = 0; d < b; ++d)
    if (data.shape()[d] != indices.shape()[d])
      ctx.fail(fmt::format("data {} and indices {} differ on batch axis {}", rt::shape_str(data.shape()),
                           rt::shape_str(indices.shape()), d));
  const int64_t k = indices.shape()[q - 1];
  if (k > r - b)
    ctx.fail(fmt::format("index rows of length {} address more than the {} axes of data", k, r - b));
  Shape out(indices.shape().begin(), indices.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + k, data.shape().end());
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const std::vector<int64_t> ds = strides_of(data.shape());
  const int64_t batches = prod(data.shape(), 0, b);
  const int64_t slice = prod(data.shape(), b + k, data.shape().size());
  const int64_t rows = prod(indices.shape(), b, q - 1);  // index rows per batch entry
  const int64_t batch_stride = b == 0 ? 0 : ds[b - 1];
  // Offset of each index row into its batch entry, checked.
  std::vector<int64_t> offsets(static_cast<size_t>(batches * rows), 0);
  for (int64_t g = 0; g < batches * rows; ++g) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data.shape()[b + j];
      off += normalize_index(idx[g * k + j], dim, "index") * ds[b + j];
    }
    offsets[g] = (g / std::max<int64_t>(rows, 1)) * batch_stride + off;
  }
  Tensor& y = ctx.output(0, data.dtype(), out);
  dispatch_storage(data.dtype(), "GatherND", [&]<class S>() {
    ElemSrc<S> src(data);
    ElemDst<S> dst(y);
    for (int64_t g = 0; g < batches * rows; ++g)
      std::copy(src.data() + offsets[g], src.data() + offsets[g] + slice, dst.data() + g * slice);
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_gather_nd) {
  reg.add(tessera::rt::KernelDef::fn("GatherND", gather_nd));
}
