// The float32 erf GELU of the 16-bit GELU kernels (src/backends/cuda/gelu_math.h), on the host: over every
// finite float16 and bfloat16 input of magnitude >= 2^-10 (smaller ones take gelu.cu's series branch), the
// result rounded to the type is within 1 ulp of the exact GELU, 0.5 x erfc(-x / sqrt 2) in double, and
// differs from the exact value's rounding only next to a rounding tie (at most 0.501 ulp away) and at few
// inputs. Needs no GPU.
#include "backends/cuda/gelu_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "runtime/half.h"

namespace {

using tessera::rt::BFloat16;
using tessera::rt::Float16;

double exact_gelu(double x) {
  return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
}

struct Sweep {
  long differs = 0;
  double worst_ulps = 0;
  double worst_x = 0;
};

// One unit in the last place of the type at |v| (subnormals: the smallest step).
double ulp_of(double v, bool bf16) {
  const int mant = bf16 ? 7 : 10, min_exp = bf16 ? -126 : -14;
  const int e = v == 0 ? min_exp : std::max(std::ilogb(v), min_exp);
  return std::ldexp(1.0, e - mant);
}

template <class T>
Sweep sweep(bool bf16) {
  Sweep s;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    T h{0.0f};
    h.bits = static_cast<uint16_t>(bits);
    const float x = static_cast<float>(h);
    if (!std::isfinite(x) || std::fabs(x) < 0x1p-10f) continue;
    const double want = exact_gelu(x);
    const double got = static_cast<float>(T(tessera::cuda::erf_gelu(x)));
    const double rounded = static_cast<float>(T(static_cast<float>(want)));
    if (got == rounded) continue;
    ++s.differs;
    const double ulps = std::fabs(got - want) / ulp_of(std::fabs(want), bf16);
    if (ulps > s.worst_ulps) {
      s.worst_ulps = ulps;
      s.worst_x = x;
    }
  }
  return s;
}

TEST(CudaGeluMath, ErfGeluWithinOneUlpOfEveryFloat16) {
  auto s = sweep<Float16>(false);
  EXPECT_LE(s.worst_ulps, 0.51) << "at x = " << s.worst_x;
  EXPECT_LE(s.differs, 16) << "inputs whose float16 result is not the exact value's rounding";
}

// GELU(inf) = inf (x (1 - h) with h = 0; x - x h was inf - inf = NaN, which the GPU run of 07:02 caught).
TEST(CudaGeluMath, ErfGeluOfInfinityIsInfinity) {
  EXPECT_EQ(tessera::cuda::erf_gelu(INFINITY), INFINITY);
  EXPECT_EQ(tessera::cuda::erf_gelu(1e30f), 1e30f);
  EXPECT_EQ(tessera::cuda::erf_gelu(-1e30f), 0.0f);
}

TEST(CudaGeluMath, ErfGeluWithinOneUlpOfEveryBFloat16) {
  auto s = sweep<BFloat16>(true);
  EXPECT_LE(s.worst_ulps, 0.51) << "at x = " << s.worst_x;
  EXPECT_LE(s.differs, 4) << "inputs whose bfloat16 result is not the exact value's rounding";
}

}  // namespace
