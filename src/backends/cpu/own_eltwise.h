// Tessera's own accurate float32 elementwise kernels (the math in own_eltwise_math.h): the functions
// where oneDNN's eltwise misses the accuracy bounds of docs/accuracy.md (Log about 1e5 ulp off near 1,
// Softplus cancelling to a negative result, Sigmoid and Exp flushing subnormal results to zero).
#pragma once

#include <cstdint>

namespace tessera::rt {
class ThreadPool;
}

namespace tessera::cpu {

enum class EltwiseKind {
  kExp,
  kLog,
  kSigmoid,
  kSoftplus,
  kTanh,
  kElu,
  kQuickGelu,
  kRelu,
  kLeakyRelu,
  kHardSigmoid,
  kGeluErf,
  kGeluTanh
};

struct EltwiseOp {
  EltwiseKind kind = EltwiseKind::kExp;
  float alpha = 0.f;  // Elu's, QuickGelu's, LeakyRelu's and HardSigmoid's alpha
  float beta = 0.f;   // HardSigmoid's beta
};

// y[i] = op(x[i]) on the widest vectors this CPU has (AVX-512, AVX2, else one lane); x and y may be
// the same array. The result does not depend on the path: every lane computes the same arithmetic.
void eltwise(const EltwiseOp& op, const float* x, float* y, int64_t n);
// The profiler's name of the path eltwise() takes on this CPU: "own avx512", "own avx2" or "own scalar"
// (a string that lives forever, as KernelContext::set_path needs).
const char* eltwise_path();

// y = op(x + bias[i % bias_len]) (the add rounded to float first, as the ops define it), split over the
// pool by rows of bias_len; without bias (null) y = op(x) in chunks. For FastGelu's and BiasGelu's bias.
void eltwise_rows(const EltwiseOp& op, const float* x, const float* bias, int64_t bias_len, float* y,
                  int64_t n, rt::ThreadPool& pool);

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
