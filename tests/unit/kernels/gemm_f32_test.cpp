// Tessera's own float32 GEMM against a triple loop in double: row counts around the 8-row tile, column
// counts around the 16-float vector and the 48-column panel, K around the 128 block, bias or none,
// padded leading dimensions of A and C, pools of 1 and 3 threads.
#include "backends/cpu/gemm_f32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "random_vector.h"

namespace cpu = tessera::cpu;

namespace {

using tessera::test::random_vector;

// Runs one product with leading dimensions lda = k + pad_a, ldc = n + pad_c and checks every element
// of C against the double-precision sum, and that C's padding columns were left alone.
void check(tessera::rt::ThreadPool& pool, int64_t m, int64_t n, int64_t k, bool with_bias, int64_t pad_a,
           int64_t pad_c) {
  SCOPED_TRACE(::testing::Message() << "m " << m << " n " << n << " k " << k << " bias " << with_bias
                                    << " lda +" << pad_a << " ldc +" << pad_c << " threads " << pool.size());
  const int64_t lda = k + pad_a, ldc = n + pad_c;
  auto a = random_vector(static_cast<size_t>(m * lda), static_cast<uint32_t>(m * 7 + k));
  auto b = random_vector(static_cast<size_t>(k * n), static_cast<uint32_t>(n * 11 + k));
  auto bias = random_vector(static_cast<size_t>(n), static_cast<uint32_t>(n + 3));
  cpu::PackedB pb = cpu::pack_b(b.data(), k, n);
  std::vector<float> c(static_cast<size_t>(m * ldc), NAN);
  cpu::gemm_f32(pool, a.data(), m, lda, pb, with_bias ? bias.data() : nullptr, c.data(), ldc);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = with_bias ? bias[static_cast<size_t>(j)] : 0.0, magnitude = std::abs(want);
      for (int64_t q = 0; q < k; ++q) {
        const double p = double(a[static_cast<size_t>(i * lda + q)]) * b[static_cast<size_t>(q * n + j)];
        want += p;
        magnitude += std::abs(p);
      }
      const float got = c[static_cast<size_t>(i * ldc + j)];
      if (!(std::abs(got - want) <= 1e-5 * magnitude + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got << ", want " << want;
    }
    for (int64_t j = n; j < ldc; ++j)
      if (!std::isnan(c[static_cast<size_t>(i * ldc + j)]) && bad++ < 5)
        ADD_FAILURE() << "padding C[" << i << ", " << j << "] written";
  }
}

}  // namespace

TEST(GemmF32, MatchesTripleLoop) {
  if (!cpu::gemm_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  tessera::rt::ThreadPool one(1), three(3);
  for (int64_t m : {1, 5, 13, 14, 15, 128})
    for (int64_t n : {1, 16, 17, 33, 768})
      for (int64_t k : {1, 15, 64, 771}) {
        const bool bias = (m + n + k) % 2 == 0;
        check(three, m, n, k, bias, 0, 0);
        check(one, m, n, k, !bias, 0, 0);
      }
}

TEST(GemmF32, LeadingDimensionsAndBias) {
  if (!cpu::gemm_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  tessera::rt::ThreadPool one(1), three(3);
  for (int64_t m : {5, 14, 128})
    for (int64_t n : {17, 100})
      for (int64_t k : {15, 771}) {
        check(three, m, n, k, true, 3, 5);
        check(three, m, n, k, false, 16, 1);
        check(one, m, n, k, true, 1, 16);
      }
}

// Every thread count from 1 to 17 at BERT's M = 128 (the row-group plan changes with it).
TEST(GemmF32, ThreadCounts) {
  if (!cpu::gemm_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (int t = 1; t <= 17; ++t) {
    tessera::rt::ThreadPool pool(t);
    check(pool, 128, 144, 200, true, 0, 0);
    check(pool, 37, 768, 64, false, 0, 0);
  }
}
