// Small helpers shared by the reference kernels of the attention, rnn, signal and image folders: they
// compute in double (exact for every float input type, float16 and bfloat16 included) and convert on
// the way in and out, which keeps one code path per kernel instead of one per element type.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace tessera::ops::refk {

// All elements of a numeric tensor as double (bool as 0/1).
inline std::vector<double> to_doubles(const rt::Tensor& t, std::string_view what) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  rt::dispatch(rt::NumericBoolTypes{}, t.dtype(), what, [&]<class T>() {
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(static_cast<rt::compute_t<T>>(p[i]));
  });
  return out;
}

// Writes doubles into a float-type tensor (rounding once to its element type).
inline void store_doubles(rt::Tensor& t, const double* v, std::string_view what) {
  rt::dispatch(rt::FloatTypes{}, t.dtype(), what, [&]<class T>() {
    T* p = t.data<T>();
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, double>) {
        p[i] = v[i];
      } else {
        p[i] = static_cast<T>(static_cast<float>(v[i]));
      }
    }
  });
}

inline void store_doubles(rt::Tensor& t, const std::vector<double>& v, std::string_view what) {
  if (static_cast<int64_t>(v.size()) != t.numel())
    throw rt::KernelError(fmt::format("{}: internal size mismatch", what));
  store_doubles(t, v.data(), what);
}

// Writes doubles into a numeric tensor: float types round once, integers truncate toward zero (as a
// C cast or NumPy's astype does) and saturate; NaN becomes 0.
inline void store_numeric(rt::Tensor& t, const std::vector<double>& v, std::string_view what) {
  if (static_cast<int64_t>(v.size()) != t.numel())
    throw rt::KernelError(fmt::format("{}: internal size mismatch", what));
  rt::dispatch(rt::NumericTypes{}, t.dtype(), what, [&]<class T>() {
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        const double x = std::trunc(v[i]);
        if (std::isnan(x)) {
          p[i] = T(0);
        } else if (x <= static_cast<double>(std::numeric_limits<T>::lowest())) {
          p[i] = std::numeric_limits<T>::lowest();
        } else if (x >= static_cast<double>(std::numeric_limits<T>::max())) {
          p[i] = std::numeric_limits<T>::max();
        } else {
          p[i] = static_cast<T>(x);
        }
      } else if constexpr (std::is_same_v<T, double>) {
        p[i] = v[i];
      } else {
        p[i] = static_cast<T>(static_cast<float>(v[i]));
      }
    }
  });
}

inline bool is_float_type(rt::DataType dt) {
  return dt == rt::DataType::kFloat || dt == rt::DataType::kDouble || dt == rt::DataType::kFloat16 ||
         dt == rt::DataType::kBFloat16;
}

// KernelError unless the tensor has a float element type.
inline void require_float(const rt::Tensor& t, std::string_view what) {
  if (!is_float_type(t.dtype()))
    throw rt::KernelError(
        fmt::format("{} must have a float element type, got {}", what, ir::dtype_name(t.dtype())));
}

}  // namespace tessera::ops::refk
