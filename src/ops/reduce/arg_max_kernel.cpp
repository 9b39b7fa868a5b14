// Reference kernels of ArgMax and ArgMin: the int64 index of the largest (smallest) element along
// `axis`; ties give the first index, or the last with select_last_index. NaN counts as the extreme
// (as numpy's argmax does), so a slice holding NaN points at its first (last) NaN.
#include <fmt/format.h>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

template <bool kMax>
void arg_extreme(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  if (rank == 0) ctx.fail("input 'data' must have rank 1 or more, got a scalar");
  const int64_t axis = checked_axis(ctx.info().get_int("axis", 0), rank);
  const bool keepdims = ctx.info().get_int("keepdims", 1) != 0;
  const bool last = ctx.info().since_version() >= 12 && ctx.info().get_int("select_last_index", 0) != 0;
  const Shape& s = x.shape();
  const int64_t n = s[static_cast<size_t>(axis)];
  Shape out_shape;
  for (int64_t k = 0; k < rank; ++k) {
    if (k != axis)
      out_shape.push_back(s[static_cast<size_t>(k)]);
    else if (keepdims)
      out_shape.push_back(1);
  }
  if (n == 0 && rt::shape_numel(out_shape) > 0)
    ctx.fail(fmt::format("axis {} of input 'data' {} is empty: there is no extreme to index", axis,
                         rt::shape_str(s)));
  Tensor& y = ctx.output(0, rt::DataType::kInt64, out_shape);
  const int64_t outer = dims_product(s, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(s, static_cast<size_t>(axis) + 1, s.size());
  int64_t* out = y.data<int64_t>();
  rt::dispatch(rt::NumericBoolTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    using C = rt::compute_t<T>;
    const T* in = x.data<T>();
    // `better(v, best)`: v replaces the current pick (strictly better, or equal when picking the last).
    auto better = [&](C v, C best) {
      if constexpr (std::is_floating_point_v<C>) {
        if (best != best) return last && v != v;
        if (v != v) return true;
      }
      if (last) return kMax ? v >= best : v <= best;
      return kMax ? v > best : v < best;
    };
    ctx.threads().parallel_for(outer * inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t g = b; g < e; ++g) {
                                   const int64_t o = g / inner, i = g % inner;
                                   const T* p = in + o * n * inner + i;
                                   int64_t pick = 0;
                                   C best = static_cast<C>(p[0]);
                                   for (int64_t r = 1; r < n; ++r) {
                                     C v = static_cast<C>(p[r * inner]);
                                     if (better(v, best)) {
                                       best = v;
                                       pick = r;
                                     }
                                   }
                                   out[g] = pick;
                                 }
                               });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(reduce_arg_max) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("ArgMax", arg_extreme<true>));
  reg.add(KernelDef::fn("ArgMin", arg_extreme<false>));
}
