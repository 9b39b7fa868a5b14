// Device conversions between float and the minifloat types (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ,
// float4e2m1 codes) and float8e8m0, as ops/tensor/float8_kernel_util.h does them on the host.
#pragma once

#include <cstdint>

#include "backends/cuda/data_typed.h"

namespace tessera::cuda {

__device__ __forceinline__ float decode_f8(const MiniFloatLayout& f, uint8_t code) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const uint32_t exp_mask = (1u << f.exp_bits) - 1, mant_mask = (1u << f.mant_bits) - 1;
  const bool neg = (code >> sign_shift) & 1u;
  const uint32_t e = (code >> f.mant_bits) & exp_mask;
  const uint32_t m = code & mant_mask;
  if (f.uz && code == (1u << sign_shift)) return NAN;
  if (f.has_nan && !f.uz) {
    if (f.has_inf && e == exp_mask) return m == 0 ? (neg ? -INFINITY : INFINITY) : NAN;
    if (!f.has_inf && e == exp_mask && m == mant_mask) return NAN;
  }
  // Subnormals have exponent 1 - bias and no implicit 1; every value is exact in float.
  const double v = e == 0 ? ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits)
                          : ldexp(static_cast<double>(m | (1u << f.mant_bits)),
                                  static_cast<int>(e) - f.bias - f.mant_bits);
  return static_cast<float>(neg ? -v : v);
}

__device__ __forceinline__ uint8_t encode_f8(const MiniFloatLayout& f, double x, bool saturate) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const uint8_t sign = signbit(x) ? static_cast<uint8_t>(1u << sign_shift) : 0;
  const uint8_t max_code = static_cast<uint8_t>(
      f.has_inf || (f.has_nan && !f.uz) ? ((1u << sign_shift) - 1) - (f.has_inf ? (1u << f.mant_bits) : 1)
                                        : (1u << sign_shift) - 1);
  uint8_t overflow;
  if (saturate || !f.has_nan)
    overflow = sign | max_code;
  else if (f.has_inf)
    overflow = sign | static_cast<uint8_t>(((1u << f.exp_bits) - 1) << f.mant_bits);
  else
    overflow = f.uz ? f.nan_code : static_cast<uint8_t>(sign | f.nan_code);
  if (isnan(x)) return f.nan_code;
  const double a = fabs(x);
  if (isinf(a)) return overflow;
  if (a == 0) return f.uz ? 0 : sign;
  // Round a to a multiple of the quantum of its binade (the subnormal one at most), ties to even.
  const int emin = 1 - f.bias;
  int e2 = 0;
  frexp(a, &e2);
  const int e = e2 - 1 > emin ? e2 - 1 : emin;
  const int qexp = e - f.mant_bits;
  const double r = rint(ldexp(a, -qexp));  // exact scaling by a power of two
  const double v = ldexp(r, qexp);
  if (v > f.max) return overflow;
  if (r == 0) return f.uz ? 0 : sign;
  frexp(v, &e2);
  const int ev = e2 - 1;
  if (ev < emin) return sign | static_cast<uint8_t>(r);  // subnormal: r < 2^mant_bits
  const uint32_t mant = static_cast<uint32_t>(ldexp(v, f.mant_bits - ev)) - (1u << f.mant_bits);
  return sign | static_cast<uint8_t>(((ev + f.bias) << f.mant_bits) | mant);
}

// float8e8m0: 2^(code - 127); 0xFF is NaN, 0 is 2^-127 (a float subnormal).
__device__ __forceinline__ float decode_e8m0(uint8_t code) {
  if (code == 0xFF) return NAN;
  if (code == 0) return __uint_as_float(0x00400000u);
  return __uint_as_float(static_cast<uint32_t>(code) << 23);
}

// The power of two of |x| by the float's exponent field, rounded by `mode` (0 up, 1 down, 2 nearest:
// up from 1.5 times the power of two); beyond 2^127 0xFE when saturating, else NaN.
__device__ __forceinline__ uint8_t encode_e8m0(float x, bool saturate, int mode) {
  if (isnan(x)) return 0xFF;
  const uint32_t bits = __float_as_uint(x);
  uint32_t e = (bits >> 23) & 0xFFu;
  const uint32_t m = bits & 0x7FFFFFu;
  if (e == 0xFF) return saturate ? 0xFE : 0xFF;
  if (mode == 0 && m != 0) ++e;
  if (mode == 2 && m >= 0x400000u) ++e;
  if (e > 0xFE) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(e);
}

}  // namespace tessera::cuda
