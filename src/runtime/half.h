// 16-bit floating point storage types for host kernels. Reference kernels compute in float and store
// in these, the way the spec describes float16/bfloat16 arithmetic; conversions round to nearest even.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tessera::rt {

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: infinity
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): add as float so the FPU does the round-to-nearest-even for us.
    float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: shifts the mantissa to the half's ulp
    float v = std::bit_cast<float>(abs) + magic;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // rebias exponent (127 -> 15) and round to nearest even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // keep NaN quiet
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
inline float bf16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Both types convert implicitly to and from float so that templated kernels written for float work on
// them unchanged: `T y = a + b` computes in float and rounds once on the store.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  Float16(float f) : bits(float_to_half_bits(f)) {}  // NOLINT(google-explicit-constructor)
  explicit Float16(double d) : Float16(static_cast<float>(d)) {}
  template <class I>
  requires std::is_integral_v<I>
  explicit Float16(I v) : Float16(static_cast<float>(v)) {}
  operator float() const { return half_bits_to_float(bits); }  // NOLINT(google-explicit-constructor)
  static Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(float_to_bf16_bits(f)) {}  // NOLINT(google-explicit-constructor)
  explicit BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  template <class I>
  requires std::is_integral_v<I>
  explicit BFloat16(I v) : BFloat16(static_cast<float>(v)) {}
  operator float() const { return bf16_bits_to_float(bits); }  // NOLINT(google-explicit-constructor)
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

// The type arithmetic on T is done in: float for the 16-bit types, T itself otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<Float16> {
  using type = float;
};
template <>
struct compute_type<BFloat16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
inline constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

}  // namespace tessera::rt
