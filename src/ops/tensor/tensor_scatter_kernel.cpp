// Reference kernel of TensorScatter (a KV-cache update): past_cache with 'update' written along the
// sequence axis, batch entry b from position write_indices[b] (0 by default). In linear mode the window
// must fit in the cache; in circular mode positions wrap around modulo the cache length.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

class TensorScatter : public rt::OpKernel {
 public:
  explicit TensorScatter(const rt::KernelInfo& info) {
    std::string mode = info.get_string("mode", "linear");
    if (mode != "linear" && mode != "circular")
      throw KernelError(fmt::format("attribute 'mode' is '{}'; expected 'linear' or 'circular'", mode));
    circular_ = mode == "circular";
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const int64_t rank = cache.rank();
    if (rank < 2) ctx.fail(fmt::format("past_cache {} needs rank >= 2", rt::shape_str(cache.shape())));
    if (update.dtype() != cache.dtype()) ctx.fail("input 'update' must have the type of 'past_cache'");
    const int64_t axis = normalize_axis(ctx.info().get_int("axis", -2), rank);
    if (axis == 0) ctx.fail("attribute 'axis' cannot be the batch axis 0");
    bool fits = update.rank() == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = d == axis ? update.shape()[d] <= cache.shape()[d] : update.shape()[d] == cache.shape()[d];
    if (!fits)
      ctx.fail(fmt::format("update {} does not fit past_cache {} along axis {}",
                           rt::shape_str(update.shape()), rt::shape_str(cache.shape()), axis));
    const int64_t batch = cache.shape()[0], len = cache.shape()[axis], steps = update.shape()[axis];
    std::vector<int64_t> start(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) {
      start = int_input(ctx, 2, "write_indices");
      if (static_cast<int64_t>(start.size()) != batch)
        ctx.fail(fmt::format("input 'write_indices' has {} entries for a batch of {}", start.size(), batch));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t s = start[b];
      if (s < 0 || (circular_ ? (len == 0 && steps > 0) : s + steps > len))
        ctx.fail(fmt::format("write index {} of batch entry {} does not fit {} steps in a cache of {}", s, b,
                             steps, len));
    }
    const std::vector<int64_t> cs = strides_of(cache.shape());
    const Shape& us = update.shape();
    Tensor& y = ctx.output(0, cache.dtype(), cache.shape());
    dispatch_storage(cache.dtype(), "TensorScatter", [&]<class S>() {
      ElemSrc<S> src(cache);
      ElemSrc<S> upd(update);
      ElemDst<S> dst(y);
      std::copy(src.data(), src.data() + cache.numel(), dst.data());
      std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < update.numel(); ++i) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t p = pos[d];
          if (d == axis) p = circular_ ? (start[pos[0]] + p) % len : start[pos[0]] + p;
          off += p * cs[d];
        }
        dst[off] = upd[i];
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++pos[d] < us[d]) break;
          pos[d] = 0;
        }
      }
      dst.commit();
    });
  }

 private:
  bool circular_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_tensor_scatter) {
  reg.add(tessera::rt::KernelDef::of<TensorScatter>("TensorScatter"));
}
