// Reference kernels of the one-input math operators of unary.cpp: Abs, Neg, Ceil, Floor, Round,
// Sign, Reciprocal, Sqrt, Exp, Log, Erf. Signed Abs and Neg wrap (|INT_MIN| is INT_MIN) as ONNX
// Runtime does instead of overflowing.
#include <cmath>
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::FloatTypes;
using tessera::rt::NumericTypes;
using FloatSignedTypes = tessera::rt::TypeList<float, double, tessera::rt::Float16, tessera::rt::BFloat16,
                                               int8_t, int16_t, int32_t, int64_t>;

void abs_kernel(KernelContext& ctx) {
  unary_map<NumericTypes>(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? wrap_neg(x) : x;
    else
      return std::abs(x);
  });
}

void neg_kernel(KernelContext& ctx) {
  unary_map<FloatSignedTypes>(ctx, [](auto x) { return wrap_neg(x); });
}

void ceil_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::ceil(x); });
}
void floor_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::floor(x); });
}
// nearbyint in the default rounding mode rounds halves to even, as the spec asks (2.5 -> 2).
void round_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::nearbyint(x); });
}
void reciprocal_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return decltype(x)(1) / x; });
}
void sqrt_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::sqrt(x); });
}
void exp_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::exp(x); });
}
void log_kernel(KernelContext& ctx) {
  unary_map<FloatTypes>(ctx, [](auto x) { return std::log(x); });
}

// -1, 0 or 1; NaN stays NaN (as numpy.sign).
void sign_kernel(KernelContext& ctx) {
  unary_map<NumericTypes>(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return C(x > 0 ? 1 : 0);
    } else {
      if (x > 0) return C(1);
      if (x < 0) return C(-1);
      return x == 0 ? C(0) : x;
    }
  });
}

// Erf also accepts integers: erf of the value, truncated back (so -1, 0 or 1).
void erf_kernel(KernelContext& ctx) {
  unary_map<NumericTypes>(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>)
      return from_double<C>(std::erf(static_cast<double>(x)));
    else
      return std::erf(x);
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_unary) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Abs", abs_kernel));
  reg.add(KernelDef::fn("Neg", neg_kernel));
  reg.add(KernelDef::fn("Ceil", ceil_kernel));
  reg.add(KernelDef::fn("Floor", floor_kernel));
  reg.add(KernelDef::fn("Round", round_kernel));
  reg.add(KernelDef::fn("Reciprocal", reciprocal_kernel));
  reg.add(KernelDef::fn("Sqrt", sqrt_kernel));
  reg.add(KernelDef::fn("Exp", exp_kernel));
  reg.add(KernelDef::fn("Log", log_kernel));
  reg.add(KernelDef::fn("Sign", sign_kernel));
  reg.add(KernelDef::fn("Erf", erf_kernel));
}
