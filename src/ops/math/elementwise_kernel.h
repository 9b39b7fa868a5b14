// Shared loops of the elementwise reference kernels: unary maps and broadcasting binary maps, split
// over the thread pool. Arithmetic happens in compute_t<T> (float for float16/bfloat16).
#pragma once

#include <array>

#include "runtime/broadcast.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::kernels {

using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

// Shape of B for the legacy (opset < 7) broadcast: B's dimensions aligned with A's at `axis` (default:
// trailing), as if B were reshaped with ones on both sides.
Shape legacy_broadcast_shape(const KernelContext& ctx, const Shape& a, const Shape& b);

// y[i] = f(x[i]) for the element types in List; Out is the output element type (default: same as in).
template <class List, class F>
void unary_map(KernelContext& ctx, F&& f) {
  const Tensor& x = ctx.input(0);
  rt::dispatch(List{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(x.numel(), 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(f(static_cast<rt::compute_t<T>>(in[i])));
    });
  });
}

// out = f(a, b) with broadcasting; OutT chooses the output element type from the input's (e.g. bool
// for comparisons).
template <class T, class OutT, class F>
void binary_loop(KernelContext& ctx, const Tensor& a, const Shape& a_shape, const Tensor& b,
                 const Shape& b_shape, rt::DataType out_dtype, F&& f) {
  Shape out_shape = rt::broadcast_shapes(a_shape, b_shape);
  Tensor& y = ctx.output(0, out_dtype, out_shape);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  OutT* py = y.data<OutT>();
  rt::for_each_broadcast<2>(
      &ctx.threads(), out_shape, {&a_shape, &b_shape},
      [&](int64_t i, const std::array<int64_t, 2>& o) { py[i] = f(pa[o[0]], pb[o[1]]); });
}

// Same element type in and out (Add, Pow's float case...). Legacy broadcast handled for opset < 7.
template <class List, class F>
void binary_map(KernelContext& ctx, F&& f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    ctx.fail("inputs have different element types: " + std::string(ir::dtype_name(a.dtype())) + " and " +
             std::string(ir::dtype_name(b.dtype())));
  Shape bs = ctx.info().since_version() < 7 ? legacy_broadcast_shape(ctx, a.shape(), b.shape()) : b.shape();
  rt::dispatch(List{}, a.dtype(), ctx.info().op_type(), [&]<class T>() {
    using C = rt::compute_t<T>;
    binary_loop<T, T>(ctx, a, a.shape(), b, bs, a.dtype(),
                      [&](T x, T y) { return static_cast<T>(f(static_cast<C>(x), static_cast<C>(y))); });
  });
}

}  // namespace tessera::ops::kernels
