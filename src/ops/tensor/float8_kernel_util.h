// Conversions between float and the small floating point types of ONNX: the four float8 types
// (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), float4e2m1 and float8e8m0. Shared by Cast and the quantize
// kernels.
//
// Encoding rounds to nearest even, exactly (from double, so a float or float16 input is never rounded
// twice). Out-of-range values follow the ONNX Cast table:
//
//   x                 E4M3FN     E4M3FNUZ   E5M2       E5M2FNUZ     (saturate=1 / saturate=0)
//   NaN               NaN        NaN        NaN        NaN
//   +-Inf             +-max/NaN  +-max/NaN  +-max/Inf  +-max/NaN
//   |x| rounds > max  +-max/NaN  +-max/NaN  +-max/Inf  +-max/NaN
//
// The FNUZ types have no negative zero (-0 and negative values that round to 0 give +0) and a single
// NaN, 0x80. float4e2m1 has neither infinity nor NaN: it always saturates, and NaN becomes 0x8 as in the
// ONNX reference data. float8e8m0 is an exponent alone (2^(e-127), 0xFF NaN, no zero, no sign).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "ir/dtype.h"

namespace tessera::ops::float8 {

// The layout of one small float type.
struct MiniFloat {
  int exp_bits;
  int mant_bits;
  int bias;
  bool has_inf;  // E5M2 only: exponent all ones, mantissa 0
  bool uz;       // FNUZ: no negative zero; the negative-zero code is the only NaN
  bool has_nan;  // false for float4e2m1
  double max;    // largest finite value
  uint8_t nan_code;
};

inline constexpr MiniFloat kE4M3FN{4, 3, 7, false, false, true, 448.0, 0x7F};
inline constexpr MiniFloat kE4M3FNUZ{4, 3, 8, false, true, true, 240.0, 0x80};
inline constexpr MiniFloat kE5M2{5, 2, 15, true, false, true, 57344.0, 0x7E};
inline constexpr MiniFloat kE5M2FNUZ{5, 2, 16, false, true, true, 57344.0, 0x80};
inline constexpr MiniFloat kE2M1{2, 1, 1, false, false, false, 6.0, 0x8};

// The layout of a float8 / float4 dtype; nullptr for other types (float8e8m0 included).
inline const MiniFloat* minifloat_of(ir::DataType dt) {
  switch (dt) {
    case ir::DataType::kFloat8E4M3FN:
      return &kE4M3FN;
    case ir::DataType::kFloat8E4M3FNUZ:
      return &kE4M3FNUZ;
    case ir::DataType::kFloat8E5M2:
      return &kE5M2;
    case ir::DataType::kFloat8E5M2FNUZ:
      return &kE5M2FNUZ;
    case ir::DataType::kFloat4E2M1:
      return &kE2M1;
    default:
      return nullptr;
  }
}

inline float decode(const MiniFloat& f, uint8_t code) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const uint32_t exp_mask = (1u << f.exp_bits) - 1, mant_mask = (1u << f.mant_bits) - 1;
  const bool neg = (code >> sign_shift) & 1u;
  const uint32_t e = (code >> f.mant_bits) & exp_mask;
  const uint32_t m = code & mant_mask;
  if (f.uz && code == (1u << sign_shift)) return std::nanf("");
  if (f.has_nan && !f.uz) {
    if (f.has_inf && e == exp_mask) return m == 0 ? (neg ? -INFINITY : INFINITY) : std::nanf("");
    if (!f.has_inf && e == exp_mask && m == mant_mask) return std::nanf("");
  }
  // Subnormals have exponent 1 - bias and no implicit 1; every value is exact in float.
  double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits)
                    : std::ldexp(static_cast<double>(m | (1u << f.mant_bits)),
                                 static_cast<int>(e) - f.bias - f.mant_bits);
  return static_cast<float>(neg ? -v : v);
}

inline uint8_t encode(const MiniFloat& f, double x, bool saturate) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const uint8_t sign = std::signbit(x) ? static_cast<uint8_t>(1u << sign_shift) : 0;
  const uint8_t max_code = static_cast<uint8_t>(
      f.has_inf || (f.has_nan && !f.uz) ? ((1u << sign_shift) - 1) - (f.has_inf ? (1u << f.mant_bits) : 1)
                                        : (1u << sign_shift) - 1);
  auto overflow = [&]() -> uint8_t {
    if (saturate || !f.has_nan) return sign | max_code;
    if (f.has_inf) return sign | static_cast<uint8_t>(((1u << f.exp_bits) - 1) << f.mant_bits);
    return f.uz ? f.nan_code : static_cast<uint8_t>(sign | f.nan_code);
  };
  if (std::isnan(x)) return f.nan_code;
  double a = std::fabs(x);
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.uz ? 0 : sign;
  // Round a to a multiple of the quantum of its binade (the subnormal one at most), ties to even.
  const int emin = 1 - f.bias;
  int e2 = 0;
  std::frexp(a, &e2);
  const int e = std::max(e2 - 1, emin);
  const int qexp = e - f.mant_bits;
  const double r = std::nearbyint(std::ldexp(a, -qexp));  // exact scaling by a power of two
  const double v = std::ldexp(r, qexp);
  if (v > f.max) return overflow();
  if (r == 0) return f.uz ? 0 : sign;
  std::frexp(v, &e2);
  const int ev = e2 - 1;
  if (ev < emin) return sign | static_cast<uint8_t>(r);  // subnormal: r < 2^mant_bits
  const uint32_t mant = static_cast<uint32_t>(std::ldexp(v, f.mant_bits - ev)) - (1u << f.mant_bits);
  return sign | static_cast<uint8_t>(((ev + f.bias) << f.mant_bits) | mant);
}

// float8e8m0: 2^(code - 127); 0xFF is NaN.
inline float e8m0_to_float(uint8_t code) {
  if (code == 0xFF) return std::nanf("");
  if (code == 0) return std::bit_cast<float>(0x00400000u);  // 2^-127, a float subnormal
  return std::bit_cast<float>(static_cast<uint32_t>(code) << 23);
}

enum class E8M0Round { kUp, kDown, kNearest };

inline E8M0Round e8m0_round_mode(std::string_view s, bool* ok) {
  *ok = true;
  if (s == "up") return E8M0Round::kUp;
  if (s == "down") return E8M0Round::kDown;
  if (s == "nearest") return E8M0Round::kNearest;
  *ok = false;
  return E8M0Round::kUp;
}

// The power of two of |x| by the float's exponent field, rounded by mode ('nearest' rounds up from 1.5
// times the power of two on); the sign is ignored. Beyond 2^127: 0xFE saturating, else NaN.
inline uint8_t float_to_e8m0(float x, bool saturate, E8M0Round mode) {
  if (std::isnan(x)) return 0xFF;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  uint32_t e = (bits >> 23) & 0xFFu;
  const uint32_t m = bits & 0x7FFFFFu;
  if (e == 0xFF) return saturate ? 0xFE : 0xFF;  // infinity
  if (mode == E8M0Round::kUp && m != 0) ++e;
  if (mode == E8M0Round::kNearest && m >= 0x400000u) ++e;
  if (e > 0xFE) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(e);
}

}  // namespace tessera::ops::float8
