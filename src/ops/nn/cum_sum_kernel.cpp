// Reference kernels of CumSum and CumProd: running sum (product) of x along the axis given by the
// second input; `exclusive` leaves the current element out (the first output is 0, or 1), `reverse`
// runs from the end. Floating point accumulates in double and rounds each output once; integers wrap.
#include <fmt/format.h>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

template <bool kProd>
void cumulative(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& a = ctx.input(1);
  if (a.numel() != 1 || a.rank() > 1)
    ctx.fail(fmt::format("input 1 ('axis') must be a scalar, got shape {}", rt::shape_str(a.shape())));
  if (a.dtype() != rt::DataType::kInt32 && a.dtype() != rt::DataType::kInt64)
    ctx.fail(
        fmt::format("input 1 ('axis') must be int32 or int64, got {}", tessera::ir::dtype_name(a.dtype())));
  if (x.rank() == 0) ctx.fail("input 0 ('x') must have rank 1 or more, got a scalar");
  const int64_t axis = checked_axis(a.to_int64(0), x.rank(), "axis (input 1)");
  const bool exclusive = ctx.info().get_int("exclusive", 0) != 0;
  const bool reverse = ctx.info().get_int("reverse", 0) != 0;
  const int64_t n = x.dim(static_cast<int>(axis));
  const int64_t outer = dims_product(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  rt::dispatch(rt::NumericTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    constexpr bool kFloat = rt::is_float_v<T>;
    using Acc = std::conditional_t<kFloat, double, uint64_t>;  // integers wrap through uint64
    const T* in = x.data<T>();
    T* out = y.data<T>();
    auto load = [](T v) -> Acc {
      if constexpr (kFloat)
        return static_cast<double>(static_cast<rt::compute_t<T>>(v));
      else
        return static_cast<Acc>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
    };
    ctx.threads().parallel_for(outer * inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t g = b; g < e; ++g) {
                                   const int64_t base = (g / inner) * n * inner + g % inner;
                                   Acc acc = kProd ? Acc(1) : Acc(0);
                                   for (int64_t s = 0; s < n; ++s) {
                                     const int64_t r = reverse ? n - 1 - s : s;
                                     const int64_t off = base + r * inner;
                                     const Acc v = load(in[off]);
                                     if (!exclusive) acc = kProd ? acc * v : acc + v;
                                     if constexpr (kFloat)
                                       store_d(out, off, acc);
                                     else
                                       out[off] = static_cast<T>(acc);
                                     if (exclusive) acc = kProd ? acc * v : acc + v;
                                   }
                                 }
                               });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_cum_sum) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("CumSum", cumulative<false>));
  reg.add(KernelDef::fn("CumProd", cumulative<true>));
}
