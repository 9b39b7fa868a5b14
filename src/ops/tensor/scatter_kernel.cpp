// Reference kernels of Scatter (opset 9, the old name) and ScatterElements: a copy of data with each
// update written at its own position, the 'axis' coordinate replaced by its index; 'reduction' (16+)
// combines instead of overwriting. Updates are applied in order, so duplicates resolve to the last one.
#include <fmt/format.h>

#include "ops/tensor/scatter_util_kernel.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

class ScatterElements : public rt::OpKernel {
 public:
  explicit ScatterElements(const rt::KernelInfo& info) : reduction_(reduction_of(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const int64_t rank = data.rank();
    if (rank == 0) ctx.fail("input 'data' is a scalar; it needs rank >= 1");
    if (indices.shape() != updates.shape())
      ctx.fail(fmt::format("updates {} must have the shape of indices {}", rt::shape_str(updates.shape()),
                           rt::shape_str(indices.shape())));
    if (indices.rank() != rank)
      ctx.fail(fmt::format("indices {} must have the rank of data {}", rt::shape_str(indices.shape()),
                           rt::shape_str(data.shape())));
    const int64_t axis = normalize_axis(ctx.info().get_int("axis", 0), rank);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && indices.shape()[d] > data.shape()[d])
        ctx.fail(fmt::format("indices {} exceed data {} on axis {}", rt::shape_str(indices.shape()),
                             rt::shape_str(data.shape()), d));
    std::vector<int64_t> idx = int_input(ctx, 1, "indices");
    for (int64_t& v : idx) v = normalize_index(v, data.shape()[axis], "index");
    const std::vector<int64_t> ds = strides_of(data.shape());
    const Shape& is = indices.shape();
    scatter_into_output(ctx, data, updates, reduction_, [&](auto&& put) {
      std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < indices.numel(); ++i) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) off += (d == axis ? idx[i] : pos[d]) * ds[d];
        put(off, i);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++pos[d] < is[d]) break;
          pos[d] = 0;
        }
      }
    });
  }

 private:
  Reduction reduction_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_scatter) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<ScatterElements>("Scatter"));
  reg.add(KernelDef::of<ScatterElements>("ScatterElements"));
}
