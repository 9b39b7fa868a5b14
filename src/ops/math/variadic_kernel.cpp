// Reference kernels of Max, Min, Sum and Mean over one or more inputs. Before opset 8 every input must
// have the output's shape; from opset 8 they broadcast together. The fold runs in compute_t<T> (float
// for float16/bfloat16), so Sum and Mean round once at the end; Mean in double, so that the sum of
// large values does not overflow where their mean does not (Mean(FLT_MAX, FLT_MAX) is FLT_MAX, and the
// mean of two floats is then correctly rounded: docs/accuracy.md). Max and Min propagate NaN as numpy
// does.
#include <string>
#include <type_traits>
#include <vector>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

// Output shape of the fold, after checking the inputs agree in type (and, before opset 8, in shape).
Shape check_inputs(const KernelContext& ctx) {
  const size_t n = ctx.input_count();
  if (n == 0) ctx.fail("needs at least one input");
  const Tensor& first = ctx.input(0);
  std::vector<const Shape*> shapes;
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = ctx.input(k);
    if (t.dtype() != first.dtype())
      ctx.fail("input " + std::to_string(k) + " has element type " + std::string(ir::dtype_name(t.dtype())) +
               ", input 0 " + std::string(ir::dtype_name(first.dtype())) + "; they must match");
    if (ctx.info().since_version() < 8 && t.shape() != first.shape())
      ctx.fail("before opset 8 the inputs must have one shape: input " + std::to_string(k) + " is " +
               rt::shape_str(t.shape()) + ", input 0 " + rt::shape_str(first.shape()));
    shapes.push_back(&t.shape());
  }
  return rt::broadcast_shapes(shapes);
}

// out = finish(fold(combine, inputs...)) elementwise with broadcasting, in double when `kWide`.
template <class List, bool kWide = false, class Combine, class Finish>
void fold(KernelContext& ctx, Combine&& combine, Finish&& finish) {
  Shape out_shape = check_inputs(ctx);
  const Tensor& first = ctx.input(0);
  rt::dispatch(List{}, first.dtype(), ctx.info().op_type(), [&]<class T>() {
    using Narrow = rt::compute_t<T>;
    using C = std::conditional_t<kWide, double, Narrow>;
    const int64_t total = rt::shape_numel(out_shape);
    std::vector<C> acc(static_cast<size_t>(total));
    for (size_t k = 0; k < ctx.input_count(); ++k) {
      const Tensor& t = ctx.input(k);
      const T* in = t.data<T>();
      rt::for_each_broadcast<1>(&ctx.threads(), out_shape, {&t.shape()},
                                [&](int64_t i, const std::array<int64_t, 1>& o) {
                                  C v = static_cast<C>(static_cast<Narrow>(in[o[0]]));
                                  acc[i] = k == 0 ? v : combine(acc[i], v);
                                });
    }
    Tensor& y = ctx.output(0, first.dtype(), out_shape);
    T* out = y.data<T>();
    const auto n = static_cast<int64_t>(ctx.input_count());
    for (int64_t i = 0; i < total; ++i) out[i] = static_cast<T>(static_cast<Narrow>(finish(acc[i], n)));
  });
}

auto keep = [](auto v, int64_t) { return v; };

void max_kernel(KernelContext& ctx) {
  fold<rt::NumericTypes>(
      ctx,
      [](auto a, auto b) {
        if (is_nan_value(a)) return a;
        if (is_nan_value(b)) return b;
        return a < b ? b : a;
      },
      keep);
}
void min_kernel(KernelContext& ctx) {
  fold<rt::NumericTypes>(
      ctx,
      [](auto a, auto b) {
        if (is_nan_value(a)) return a;
        if (is_nan_value(b)) return b;
        return b < a ? b : a;
      },
      keep);
}
void sum_kernel(KernelContext& ctx) {
  fold<rt::FloatTypes>(
      ctx, [](auto a, auto b) { return a + b; }, keep);
}
void mean_kernel(KernelContext& ctx) {
  fold<rt::FloatTypes, true>(
      ctx, [](auto a, auto b) { return a + b; },
      [](auto v, int64_t n) { return v / static_cast<decltype(v)>(n); });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_variadic) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Max", max_kernel));
  reg.add(KernelDef::fn("Min", min_kernel));
  reg.add(KernelDef::fn("Sum", sum_kernel));
  reg.add(KernelDef::fn("Mean", mean_kernel));
}
