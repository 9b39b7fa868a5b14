#include "runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rt = tessera::rt;

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(rt::float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(rt::float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(rt::float_to_half_bits(65504.0f), 0x7BFF);                      // largest finite
  EXPECT_EQ(rt::float_to_half_bits(65520.0f), 0x7C00);                      // rounds up to infinity
  EXPECT_EQ(rt::float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(rt::float_to_half_bits(std::ldexp(1.0f, -26)), 0x0000);         // below half of it: zero
  EXPECT_EQ(rt::float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie: to even
  EXPECT_EQ(rt::float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(rt::float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(rt::half_bits_to_float(rt::float_to_half_bits(NAN))));
}

TEST(Half, RoundTripsEveryHalf) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    auto h = static_cast<uint16_t>(b);
    float f = rt::half_bits_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(rt::float_to_half_bits(f), h) << std::hex << b;
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(rt::float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(rt::bf16_bits_to_float(0x3F80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(rt::float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(rt::float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(rt::bf16_bits_to_float(rt::float_to_bf16_bits(NAN))));
}

TEST(Half, ArithmeticThroughFloat) {
  rt::Float16 a(1.5f), b(2.25f);
  rt::Float16 c = a + b;
  EXPECT_EQ(static_cast<float>(c), 3.75f);
}
