// Tessera's own blocked 1x1 convolution against a plain loop in double: padded input and output
// channels, pixel counts around the 14-pixel tile, odd output block counts, batch 2, bias, Z and Clip.
#include "backends/cpu/pointwise_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "epilogue_variant.h"
#include "random_vector.h"

namespace cpu = tessera::cpu;

namespace {

constexpr int64_t kB = 16;

using tessera::test::epilogue_variant;
using tessera::test::random_vector;

}  // namespace

TEST(PointwiseConv, MatchesPlainLoop) {
  if (!cpu::pointwise_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  // The last shape's weights exceed 512 KiB, so its tasks run pixel tiles innermost (the other order).
  std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (int64_t cin : {3, 16, 20, 64})
    for (int64_t cout : {8, 16, 33, 64})
      for (int64_t pixels : {1, 13, 14, 15, 81}) shapes.emplace_back(cin, cout, pixels);
  shapes.emplace_back(512, 288, 15);
  for (auto [cin, cout, pixels] : shapes)
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(::testing::Message()
                   << "cin " << cin << " cout " << cout << " pixels " << pixels << " variant " << variant);
      const int64_t batch = 2, icb = (cin + kB - 1) / kB, ocb = (cout + kB - 1) / kB;
      auto x = random_vector(static_cast<size_t>(batch * icb * pixels * kB), 1);
      // The padded input lanes hold garbage: the packed weights must ignore them.
      auto w = random_vector(static_cast<size_t>(cout * cin), 2);
      auto bias = random_vector(static_cast<size_t>(cout), 3);
      auto z = random_vector(static_cast<size_t>(batch * ocb * pixels * kB), 4);
      cpu::PointwiseWeights pw =
          cpu::pack_pointwise(w.data(), variant == 0 ? nullptr : bias.data(), cout, cin);
      cpu::PointwiseEpilogue ep = epilogue_variant(variant, z.data());
      std::vector<float> y(static_cast<size_t>(batch * ocb * pixels * kB), NAN);
      tessera::rt::ThreadPool pool(2);
      cpu::pointwise_conv(pool, x.data(), batch, pixels, pw, ep, y.data());
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t oc = 0; oc < ocb * kB; ++oc)
          for (int64_t p = 0; p < pixels; ++p) {
            const size_t at = static_cast<size_t>(((n * ocb + oc / kB) * pixels + p) * kB + oc % kB);
            double want = 0;
            if (oc < cout) {
              if (variant > 0) want = bias[static_cast<size_t>(oc)];
              for (int64_t ic = 0; ic < cin; ++ic)
                want += double(w[static_cast<size_t>(oc * cin + ic)]) *
                        x[static_cast<size_t>(((n * icb + ic / kB) * pixels + p) * kB + ic % kB)];
            }
            if (variant >= 1) want += z[at];
            if (variant == 2) want = std::min(std::max(want, 0.0), 0.5);
            ASSERT_NEAR(y[at], want, 1e-4 * (1 + std::abs(want))) << "n " << n << " oc " << oc << " p " << p;
          }
    }
}
