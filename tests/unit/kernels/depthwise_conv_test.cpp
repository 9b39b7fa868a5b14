// Tessera's own blocked depthwise convolution against a plain loop in double: 3x3 windows at strides
// 1 and 2 (the register-tiled interior, its 4-pixel groups and their remainders, the edges), 5x5 and
// 3x5 windows (per-pixel taps), no, symmetric and asymmetric padding, images narrower than a window,
// padded channels, batch 2, bias, Z and Clip.
#include "backends/cpu/depthwise_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "epilogue_variant.h"
#include "random_vector.h"

namespace cpu = tessera::cpu;

namespace {

constexpr int64_t kB = 16;

using tessera::test::epilogue_variant;
using tessera::test::random_vector;

struct Case {
  int64_t channels, h, w, kh, kw, stride, pad_top, pad_left, pad_bottom, pad_right;
};

void check(const Case& c, int variant) {
  SCOPED_TRACE(::testing::Message() << "channels " << c.channels << " " << c.h << "x" << c.w << " kernel "
                                    << c.kh << "x" << c.kw << " stride " << c.stride << " pads " << c.pad_top
                                    << "," << c.pad_left << "," << c.pad_bottom << "," << c.pad_right
                                    << " variant " << variant);
  const int64_t batch = 2, cb = (c.channels + kB - 1) / kB;
  cpu::DepthwiseGeometry g;
  g.h = c.h;
  g.w = c.w;
  g.oh = (c.h + c.pad_top + c.pad_bottom - c.kh) / c.stride + 1;
  g.ow = (c.w + c.pad_left + c.pad_right - c.kw) / c.stride + 1;
  g.stride_h = g.stride_w = c.stride;
  g.pad_top = c.pad_top;
  g.pad_left = c.pad_left;
  auto x = random_vector(static_cast<size_t>(batch * cb * c.h * c.w * kB), 1);
  auto w = random_vector(static_cast<size_t>(c.channels * c.kh * c.kw), 2);
  auto bias = random_vector(static_cast<size_t>(c.channels), 3);
  const int64_t y_size = batch * cb * g.oh * g.ow * kB;
  auto z = random_vector(static_cast<size_t>(y_size), 4);
  cpu::DepthwiseWeights dw =
      cpu::pack_depthwise(w.data(), variant == 0 ? nullptr : bias.data(), c.channels, c.kh, c.kw);
  cpu::PointwiseEpilogue ep = epilogue_variant(variant, z.data());
  std::vector<float> y(static_cast<size_t>(y_size), NAN);
  tessera::rt::ThreadPool pool(variant == 1 ? 3 : 2);
  cpu::depthwise_conv(pool, x.data(), batch, g, dw, ep, y.data());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ch = 0; ch < cb * kB; ++ch)
      for (int64_t oh = 0; oh < g.oh; ++oh)
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const size_t at =
              static_cast<size_t>((((n * cb + ch / kB) * g.oh + oh) * g.ow + ow) * kB + ch % kB);
          double want = 0;
          if (ch < c.channels) {
            if (variant > 0) want = bias[static_cast<size_t>(ch)];
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t ih = oh * c.stride + i - c.pad_top, iw = ow * c.stride + j - c.pad_left;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                want += double(w[static_cast<size_t>((ch * c.kh + i) * c.kw + j)]) *
                        x[static_cast<size_t>((((n * cb + ch / kB) * c.h + ih) * c.w + iw) * kB + ch % kB)];
              }
          }
          if (variant >= 1) want += z[at];
          if (variant == 2) want = std::min(std::max(want, 0.0), 0.5);
          ASSERT_NEAR(y[at], want, 1e-5 * (1 + std::abs(want)))
              << "n " << n << " ch " << ch << " oh " << oh << " ow " << ow;
        }
}

}  // namespace

TEST(DepthwiseConv, MatchesPlainLoop) {
  if (!cpu::pointwise_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const std::vector<Case> cases = {
      {32, 14, 14, 3, 3, 1, 1, 1, 1, 1},  // interior 1..12: three 4-pixel groups
      {20, 9, 11, 3, 3, 1, 1, 1, 1, 1},   // padded channels, a remainder of 1
      {32, 28, 28, 3, 3, 2, 1, 1, 1, 1},  // stride 2: interior 1..13
      {16, 17, 23, 3, 3, 2, 1, 1, 1, 1},  // stride 2, odd sizes
      {16, 10, 12, 3, 3, 2, 0, 0, 1, 1},  // asymmetric padding (bottom and right only)
      {16, 8, 9, 3, 3, 1, 0, 0, 0, 0},    // no padding: every pixel interior
      {16, 2, 2, 3, 3, 1, 1, 1, 1, 1},    // narrower than the window: no interior
      {16, 1, 1, 3, 3, 1, 1, 1, 1, 1},   {48, 12, 15, 5, 5, 2, 2, 2, 2, 2},  // 5x5: per-pixel taps
      {16, 7, 10, 3, 5, 1, 1, 2, 1, 2},                                      // 3x5
  };
  for (const Case& c : cases)
    for (int variant = 0; variant < 3; ++variant) check(c, variant);
}
