// own_eltwise_math.h for any x86-64 CPU (one lane, fused multiply-add through the C library where
// the CPU has none), and the choice of the widest version the CPU runs.
#include "backends/cpu/own_eltwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "runtime/thread_pool.h"

#define OWN_ELTWISE_NS scalar
#define OWN_ELTWISE_W 1
#define OWN_ELTWISE_FMA(a, b, c) (F{std::fma((a)[0], (b)[0], (c)[0])})
#include "backends/cpu/own_eltwise_math.h"

namespace tessera::cpu {
namespace {

enum class Isa { kAvx512, kAvx2, kScalar };

Isa best_isa() {
  static const Isa isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
                             ? Isa::kAvx512
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::kAvx2
                                                                                           : Isa::kScalar;
  return isa;
}

}  // namespace

void eltwise(const EltwiseOp& op, const float* x, float* y, int64_t n) {
  switch (best_isa()) {
    case Isa::kAvx512:
      return avx512::eltwise_run(op, x, y, n);
    case Isa::kAvx2:
      return avx2::eltwise_run(op, x, y, n);
    case Isa::kScalar:
      return scalar::eltwise_run(op, x, y, n);
  }
}

void eltwise_rows(const EltwiseOp& op, const float* x, const float* bias, int64_t bias_len, float* y,
                  int64_t n, rt::ThreadPool& pool) {
  if (!bias || bias_len <= 0) {
    // Chunks of a multiple of 16 elements, so that only the last one has a partial vector.
    pool.parallel_for((n + 15) / 16, 512, [&](int64_t b, int64_t e) {
      int64_t end = std::min(e * 16, n);
      eltwise(op, x + b * 16, y + b * 16, end - b * 16);
    });
    return;
  }
  const int64_t rows = n / bias_len;
  pool.parallel_for(rows, std::max<int64_t>(1, 8192 / bias_len), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* xr = x + r * bias_len;
      float* yr = y + r * bias_len;
      for (int64_t j = 0; j < bias_len; ++j) yr[j] = xr[j] + bias[j];
      eltwise(op, yr, yr, bias_len);
    }
  });
}

const char* eltwise_path() {
  switch (best_isa()) {
    case Isa::kAvx512:
      return "own avx512";
    case Isa::kAvx2:
      return "own avx2";
    case Isa::kScalar:
      break;
  }
  return "own scalar";
}

}  // namespace tessera::cpu
