// Tessera's own accurate float32 elementwise kernels (the math in own_eltwise_math.h): the functions
// where oneDNN's eltwise misses the accuracy bounds of docs/accuracy.md (Log about 1e5 ulp off near 1,
// Softplus cancelling to a negative result, Sigmoid and Exp flushing subnormal results to zero).
#pragma once

#include <cstdint>

namespace tessera::cpu {

enum class EltwiseKind { kExp, kLog, kSigmoid, kSoftplus, kTanh, kElu, kQuickGelu, kRelu, kLeakyRelu };

struct EltwiseOp {
  EltwiseKind kind = EltwiseKind::kExp;
  float alpha = 0.f;  // Elu's, QuickGelu's and LeakyRelu's alpha
};

// y[i] = op(x[i]) on the widest vectors this CPU has (AVX-512, AVX2, else one lane); x and y may be
// the same array. The result does not depend on the path: every lane computes the same arithmetic.
void eltwise(const EltwiseOp& op, const float* x, float* y, int64_t n);
// The name of the path eltwise() takes on this CPU: "avx512", "avx2" or "scalar".
const char* eltwise_isa();

// The per-ISA versions (own_eltwise_avx512.cpp, own_eltwise_avx2.cpp, own_eltwise_kernel.cpp).
namespace avx512 {
void eltwise_run(const EltwiseOp& op, const float* x, float* y, int64_t n);
}
namespace avx2 {
void eltwise_run(const EltwiseOp& op, const float* x, float* y, int64_t n);
}
namespace scalar {
void eltwise_run(const EltwiseOp& op, const float* x, float* y, int64_t n);
}

}  // namespace tessera::cpu
