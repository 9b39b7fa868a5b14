// Reference kernel of ScatterND: a copy of data with each update slice written at the position its
// index row (the last index axis, length k) addresses; 'reduction' (16+) combines instead. Updates have
// the shape indices.shape[:-1] + data.shape[k:].
#include <fmt/format.h>

#include "ops/tensor/scatter_util_kernel.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

class ScatterND : public rt::OpKernel {
 public:
  explicit ScatterND(const rt::KernelInfo& info) : reduction_(reduction_of(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const int64_t r = data.rank(), q = indices.rank();
    if (r < 1 || q < 1) ctx.fail("data and indices must have rank >= 1");
    const int64_t k = indices.shape()[q - 1];
    if (k > r) ctx.fail(fmt::format("index rows of length {} address more than the {} axes of data", k, r));
    Shape want(indices.shape().begin(), indices.shape().end() - 1);
    want.insert(want.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != want)
      ctx.fail(
          fmt::format("updates {} must have shape {}", rt::shape_str(updates.shape()), rt::shape_str(want)));
    const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
    const std::vector<int64_t> ds = strides_of(data.shape());
    const int64_t rows = prod(indices.shape(), 0, q - 1);
    const int64_t slice = prod(data.shape(), k, data.shape().size());
    std::vector<int64_t> offsets(static_cast<size_t>(rows), 0);
    for (int64_t g = 0; g < rows; ++g)
      for (int64_t j = 0; j < k; ++j)
        offsets[g] += normalize_index(idx[g * k + j], data.shape()[j], "index") * ds[j];
    scatter_into_output(ctx, data, updates, reduction_, [&](auto&& put) {
      for (int64_t g = 0; g < rows; ++g)
        for (int64_t e = 0; e < slice; ++e) put(offsets[g] + e, g * slice + e);
    });
  }

 private:
  Reduction reduction_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_scatter_nd) {
  reg.add(tessera::rt::KernelDef::of<ScatterND>("ScatterND"));
}
