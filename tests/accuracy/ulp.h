// Ulp arithmetic for the accuracy sweep (tessera_accuracy) and the unit tests: the distance in units
// in the last place between a computed value and a float64 oracle rounded to the element type
// (float32, float16, bfloat16), the classification of a result (normal, subnormal, zero, infinite,
// NaN), and the inputs that cover a type's whole domain.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "runtime/half.h"

namespace tessera::accuracy {

// Bits of a value of one of the three types as a signed integer ordered like the values: adjacent
// floats differ by one, +0 and -0 are both 0, negative values below zero.
inline int64_t ordered(float v) {
  int32_t i = std::bit_cast<int32_t>(v);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}
inline int64_t ordered_half_bits(uint16_t b) {
  return (b & 0x8000) ? -static_cast<int64_t>(b & 0x7fff) : b;
}

// A float64 rounded to the element type (to nearest even; through float32 for the 16-bit types, whose
// double rounding is off by one only at exact ties between two 16-bit values).
template <class T>
T round_to(double v) {
  return static_cast<T>(static_cast<float>(v));
}

template <class T>
int64_t ordered_of(T v) {
  if constexpr (std::is_same_v<T, float>)
    return ordered(v);
  else
    return ordered_half_bits(v.bits);
}

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// Smallest normal magnitude of the type.
template <class T>
double min_normal() {
  if constexpr (std::is_same_v<T, rt::Float16>)
    return 6.103515625e-05;  // 2^-14
  else
    return std::numeric_limits<float>::min();  // float32 and bfloat16 share the exponent range
}

enum class Kind { kNaN, kInf, kZero, kSubnormal, kNormal };

template <class T>
Kind kind_of(T v) {
  double d = as_double(v);
  if (std::isnan(d)) return Kind::kNaN;
  if (std::isinf(d)) return Kind::kInf;
  if (d == 0) return Kind::kZero;
  return std::fabs(d) < min_normal<T>() ? Kind::kSubnormal : Kind::kNormal;
}

// How one computed value compares with the oracle.
struct Comparison {
  int64_t ulps = 0;              // distance to the rounded oracle (0 when both are the same special value)
  bool special_wrong = false;    // NaN, an infinity or the sign of a zero where the oracle has another
  bool flushed = false;          // the oracle is subnormal (after rounding) and the result is zero
  bool zero_sign_wrong = false;  // +0 for -0 or the reverse (reported apart: ONNX rarely says which)
  Kind expected = Kind::kNormal;
};

template <class T>
Comparison compare(T got, double oracle) {
  T want = round_to<T>(oracle);
  Comparison c;
  c.expected = kind_of(want);
  Kind g = kind_of(got);
  if (c.expected == Kind::kNaN || g == Kind::kNaN || c.expected == Kind::kInf || g == Kind::kInf) {
    bool same = c.expected == g && (g == Kind::kNaN || as_double(got) == as_double(want));
    c.special_wrong = !same;
    return c;
  }
  if (c.expected == Kind::kSubnormal && g == Kind::kZero) c.flushed = true;
  int64_t d = ordered_of(got) - ordered_of(want);
  c.ulps = d < 0 ? -d : d;
  if (c.expected == Kind::kZero && g == Kind::kZero && std::signbit(as_double(got)) != std::signbit(oracle))
    c.zero_sign_wrong = true;
  return c;
}

// Every value of a 16-bit type, NaNs included.
template <class T>
std::vector<T> all_values() {
  std::vector<T> v(65536);
  for (uint32_t b = 0; b < 65536; ++b) v[b] = T::from_bits(static_cast<uint16_t>(b));
  return v;
}

// float32 inputs over the whole line: `per_binade` values in every binade of both signs (subnormals
// included, evenly spaced plus a seeded jitter), zeros, infinities, NaN, and for every centre c given
// (the function's zeros and poles: 1 for Log, 0 for Softplus...) the 64 floats on either side of c and
// c (1 +- 2^-k) for k in 1..24.
inline std::vector<float> float_sweep(int per_binade, const std::vector<double>& centres = {}) {
  std::vector<float> v;
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  for (int sign : {1, -1}) {
    for (int e = -149; e <= 127; ++e) {
      int k_max = e < -126 ? 1 : per_binade;  // each subnormal "binade" below 2^-126 is a single step
      for (int k = 0; k < k_max; ++k) {
        double m = 1.0 + (k + (k ? jitter(rng) : 0.0)) / k_max;
        if (e < -126) {
          v.push_back(static_cast<float>(sign * std::ldexp(1.0, e)));
          // a few subnormals with full mantissas too
          v.push_back(static_cast<float>(sign * std::ldexp(1.0 + jitter(rng), e)));
          continue;
        }
        v.push_back(static_cast<float>(sign * std::ldexp(std::min(m, 1.9999998807907104), e)));
      }
    }
  }
  for (double c : centres) {
    float f = static_cast<float>(c);
    float up = f, down = f;
    v.push_back(f);
    for (int k = 0; k < 64; ++k) {
      up = std::nextafter(up, std::numeric_limits<float>::infinity());
      down = std::nextafter(down, -std::numeric_limits<float>::infinity());
      v.push_back(up);
      v.push_back(down);
    }
    for (int k = 1; k <= 24; ++k) {
      v.push_back(static_cast<float>(c * (1 + std::ldexp(1.0, -k))));
      v.push_back(static_cast<float>(c * (1 - std::ldexp(1.0, -k))));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()})
    v.push_back(s);
  return v;
}

}  // namespace tessera::accuracy
