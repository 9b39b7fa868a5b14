// Helpers shared by the elementwise math reference kernels beyond elementwise_kernel.h: integer
// arithmetic that wraps instead of overflowing, a checked conversion from double to any element type,
// NaN tests that work on every element type, and the bool-valued binary map of the comparisons.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/math/elementwise_kernel.h"

namespace tessera::ops::kernels {

// The unsigned type signed arithmetic on T wraps through. Types narrower than int would promote to
// (signed) int again, where uint16 * uint16 can still overflow, so they go through unsigned int.
template <class T>
using wrap_unsigned_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
constexpr T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class T>
constexpr T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <class T>
constexpr T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
template <class T>
constexpr T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>)
    return wrap_sub(T(0), a);
  else
    return -a;  // -(+0) is -0, which 0 - (+0) is not
}

// NaN test for any element type (false for integers and bool).
template <class T>
bool is_nan_value(T v) {
  if constexpr (rt::is_float_v<T>)
    return std::isnan(static_cast<rt::compute_t<T>>(v));
  else
    return false;
}

// A double converted to element type T without undefined behaviour: floating types round, integers
// truncate toward zero, NaN gives 0, and values outside int64/uint64 saturate before the final
// (modular) narrowing, which is what ONNX Runtime's static_cast yields on x86 for in-range values.
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (!std::is_integral_v<T>) {
    return static_cast<T>(static_cast<rt::compute_t<T>>(v));
  } else {
    if (std::isnan(v)) return T(0);
    constexpr double kTwo63 = 9223372036854775808.0;
    if constexpr (std::is_unsigned_v<T>) {
      if (v >= 2 * kTwo63) return std::numeric_limits<T>::max();
      if (v >= kTwo63) return static_cast<T>(static_cast<uint64_t>(v));
    }
    if (v >= kTwo63) return static_cast<T>(std::numeric_limits<int64_t>::max());
    if (v < -kTwo63) return static_cast<T>(std::numeric_limits<int64_t>::min());
    return static_cast<T>(static_cast<int64_t>(v));
  }
}

// The shape B is broadcast with: the legacy (opset < 7) alignment when the bound schema is older
// than `modern_since`, B's own shape otherwise.
inline Shape second_operand_shape(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                                  int modern_since = 7) {
  if (ctx.info().since_version() < modern_since) return legacy_broadcast_shape(ctx, a.shape(), b.shape());
  return b.shape();
}

inline void require_same_dtype(const KernelContext& ctx, const Tensor& a, const Tensor& b, const char* an,
                               const char* bn) {
  if (a.dtype() == b.dtype()) return;
  ctx.fail(std::string("inputs ") + an + " (" + std::string(ir::dtype_name(a.dtype())) + ") and " + bn +
           " (" + std::string(ir::dtype_name(b.dtype())) + ") must have the same element type");
}

// C = f(a, b) as bool, for A and B of one element type in List (comparisons, logic). f receives the
// elements in compute_t<T> (float for float16/bfloat16; std::string for strings).
template <class List, class F>
void compare_map(KernelContext& ctx, F&& f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_same_dtype(ctx, a, b, "A", "B");
  Shape bs = second_operand_shape(ctx, a, b);
  rt::dispatch(List{}, a.dtype(), ctx.info().op_type(), [&]<class T>() {
    using C = rt::compute_t<T>;
    binary_loop<T, bool>(ctx, a, a.shape(), b, bs, ir::DataType::kBool, [&](const T& x, const T& y) {
      return static_cast<bool>(f(static_cast<const C&>(x), static_cast<const C&>(y)));
    });
  });
}

}  // namespace tessera::ops::kernels
