// Reference kernel of Range: start, start+delta, ... stopping before limit; max(ceil((limit-start) /
// delta), 0) elements. Element i is start + i*delta computed in the element type (float for the 16-bit
// floats), integer overflow wrapping.
#include <fmt/format.h>

#include <cmath>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

using RangeTypes = rt::TypeList<float, double, rt::Float16, rt::BFloat16, int16_t, int32_t, int64_t>;

const Tensor& scalar_input(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1)
    ctx.fail(fmt::format("input '{}' must be a scalar, got {}", name, rt::shape_str(t.shape())));
  return t;
}

void range(KernelContext& ctx) {
  const Tensor& ts = scalar_input(ctx, 0, "start");
  const Tensor& tl = scalar_input(ctx, 1, "limit");
  const Tensor& td = scalar_input(ctx, 2, "delta");
  if (tl.dtype() != ts.dtype() || td.dtype() != ts.dtype())
    ctx.fail("inputs start, limit and delta must have one type");
  rt::dispatch(RangeTypes{}, ts.dtype(), "Range", [&]<class T>() {
    using C = rt::compute_t<T>;
    const C start = static_cast<C>(ts.data<T>()[0]), limit = static_cast<C>(tl.data<T>()[0]),
            delta = static_cast<C>(td.data<T>()[0]);
    if (delta == C(0)) ctx.fail("input 'delta' is 0");
    int64_t n;
    if constexpr (std::is_integral_v<C>) {
      // Exact: ceil division of (limit - start) by delta, in 128-bit so that nothing overflows.
      __int128 diff = static_cast<__int128>(limit) - start;
      __int128 q = diff / delta;
      if (q * delta != diff && ((diff > 0) == (delta > 0))) ++q;
      n = q > 0 ? static_cast<int64_t>(q) : 0;
    } else {
      // In the element type, as ONNX Runtime does, so that the count matches its rounding.
      double c = static_cast<double>(std::ceil((limit - start) / delta));
      if (std::isnan(c) || std::isinf(c)) ctx.fail("Range of non-finite length");
      if (c > 9.0e18) ctx.fail("Range has too many elements");
      n = c > 0 ? static_cast<int64_t>(c) : 0;
    }
    Tensor& y = ctx.output(0, ts.dtype(), {n});
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<C>) {
        using U = std::make_unsigned_t<C>;
        out[i] = static_cast<C>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta));
      } else {
        out[i] = static_cast<T>(start + static_cast<C>(i) * delta);
      }
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_range) {
  reg.add(tessera::rt::KernelDef::fn("Range", range));
}
