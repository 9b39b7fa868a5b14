// More elementwise kernels on the GPU: the activations with attributes (LeakyRelu, Elu, Gelu, Clip...),
// the trigonometric and rounding functions, and the variadic Sum/Mean/Max/Min, for float32, float16 and
// bfloat16. The one-input functions compute in float64 (cheap next to the memory traffic; it keeps the
// composite formulas such as Gelu and Mish within one rounding of the exact value) and round once to
// float32 and then to the element type, the path the CPU reference takes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class MathOp {
  kLeakyRelu,    // alpha
  kElu,          // alpha
  kSelu,         // alpha, gamma (beta)
  kCelu,         // alpha
  kHardSigmoid,  // alpha, beta
  kHardSwish,
  kSoftplus,
  kSoftsign,
  kGelu,
  kGeluTanh,
  kMish,
  kSwish,            // alpha
  kThresholdedRelu,  // alpha
  kShrink,           // alpha = bias, beta = lambd
  kClip,             // alpha = min, beta = max
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kFloor,
  kCeil,
  kRound,
  kSign,
};

struct MathParams {
  float alpha = 0, beta = 0;
};

void launch_math(MathOp op, ElemType t, const void* x, void* y, int64_t n, MathParams p, cudaStream_t s);

enum class VariadicOp { kSum, kMean, kMax, kMin };
inline constexpr int kMaxVariadic = 8;
struct VariadicArgs {
  int count = 0;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  const void* in[kMaxVariadic] = {};
  int64_t strides[kMaxVariadic][kMaxRank] = {};
  bool flat[kMaxVariadic] = {};  // input k has the output's shape
};
// Folds the inputs in order in float32 (as the reference does), rounding once at the end.
void launch_variadic(VariadicOp op, ElemType t, const VariadicArgs& a, void* y, int64_t n, cudaStream_t s);

}  // namespace tessera::cuda
