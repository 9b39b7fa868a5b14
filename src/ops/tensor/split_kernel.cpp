// Reference kernel of Split: pieces of the input along 'axis', of the sizes in 'split' (an attribute
// before 13, an input from 13), or num_outputs (18) pieces of ceil(dim / n) with a smaller last one, or
// as many equal pieces as the node has outputs.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

std::vector<int64_t> piece_sizes(const KernelContext& ctx, int64_t dim) {
  const int v = ctx.info().since_version();
  const int64_t outputs = static_cast<int64_t>(ctx.output_count());
  std::vector<int64_t> sizes;
  if (v < 13 && ctx.info().has_attr("split")) {
    sizes = ctx.info().get_ints("split");
  } else if ((v >= 13 || v < 2) && ctx.has_input(1)) {
    sizes = v < 2 ? ctx.input(1).to_int64_vector() : int_input(ctx, 1, "split");
  } else if (v >= 18 && ctx.info().has_attr("num_outputs")) {
    int64_t n = ctx.info().get_int("num_outputs");
    if (n < 1) throw KernelError(fmt::format("attribute 'num_outputs' is {}; it must be positive", n));
    if (n != outputs)
      throw KernelError(fmt::format("attribute 'num_outputs' is {} but the node has {} outputs", n, outputs));
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * chunk, 0, chunk));
    return sizes;
  } else {
    if (dim % outputs != 0)
      throw KernelError(fmt::format("cannot split a dimension of {} into {} equal pieces", dim, outputs));
    return std::vector<int64_t>(static_cast<size_t>(outputs), dim / outputs);
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    throw KernelError(fmt::format("'split' has {} sizes but the node has {} outputs", sizes.size(), outputs));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw KernelError(fmt::format("'split' has a negative size {}", s));
    total += s;
  }
  if (total != dim)
    throw KernelError(
        fmt::format("'split' sizes {} add up to {}, not the axis size {}", rt::shape_str(sizes), total, dim));
  return sizes;
}

void split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("Split cannot cut a scalar");
  const int64_t axis = normalize_axis(ctx.info().get_int("axis", 0), x.rank());
  std::vector<int64_t> sizes = piece_sizes(ctx, x.dim(static_cast<int>(axis)));
  const std::vector<int64_t> strides = strides_of(x.shape());
  int64_t at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape shape = x.shape();
    shape[axis] = sizes[k];
    if (ctx.wants_output(k)) strided_output(ctx, k, x, at * strides[axis], strides, shape);
    at += sizes[k];
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_split) {
  reg.add(tessera::rt::KernelDef::fn("Split", split));
}
