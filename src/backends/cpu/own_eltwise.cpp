// own_eltwise_math.h for any x86-64 CPU (one lane, fused multiply-add through the C library where
// the CPU has none), and the choice of the widest version the CPU runs.
#include "backends/cpu/own_eltwise.h"

#include <cmath>
#include <cstdint>

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

const char* eltwise_isa() {
  switch (best_isa()) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kScalar:
      break;
  }
  return "scalar";
}

}  // namespace tessera::cpu
