// Reference kernel of com.microsoft BiasAdd: Y = X + bias + skip, X and skip (N, S, C), bias (C).
#include <fmt/format.h>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;

void bias_add(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const rt::Tensor& bias = ctx.input(1);
  const rt::Tensor& skip = ctx.input(2);
  if (x.rank() != 3 || skip.shape() != x.shape() || bias.rank() != 1 || bias.dim(0) != x.dim(2))
    ctx.fail(fmt::format("X {} and skip {} must be one (N, S, C) shape and bias {} must be (C)",
                         rt::shape_str(x.shape()), rt::shape_str(skip.shape()), rt::shape_str(bias.shape())));
  if (bias.dtype() != x.dtype() || skip.dtype() != x.dtype())
    ctx.fail("X, bias and skip must share one element type");
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "BiasAdd", [&]<class T>() {
    using C = rt::compute_t<T>;
    rt::Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const T* px = x.data<T>();
    const T* pb = bias.data<T>();
    const T* ps = skip.data<T>();
    T* py = y.data<T>();
    const int64_t c = x.dim(2);
    ctx.threads().parallel_for(x.numel() / c, std::max<int64_t>(1, 16384 / c), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row)
        for (int64_t j = 0; j < c; ++j) {
          int64_t i = row * c + j;
          py[i] = static_cast<T>(static_cast<C>(px[i]) + static_cast<C>(pb[j]) + static_cast<C>(ps[i]));
        }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_bias_add) {
  reg.add(tessera::rt::KernelDef::fn("BiasAdd", bias_add).in_domain("com.microsoft"));
}
