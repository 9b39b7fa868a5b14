// Elementwise kernels on the GPU: unary functions and NumPy-broadcasting binary operators, for
// float32, float16 and bfloat16 (computed in float32, rounded once to the element type).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

enum class ElemType { kFloat, kHalf, kBFloat16 };
enum class UnaryOp { kRelu, kSigmoid, kTanh, kExp, kLog, kNeg, kAbs, kSqrt, kErf, kReciprocal };
// kPRelu: a where a >= 0, b * a below; kFmod: C's remainder (sign of a); kMod: Python's (sign of b).
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu, kFmod, kMod };

inline constexpr int kMaxRank = 8;

// Element strides of each input aligned to the output's dimensions (0 where it broadcasts).
struct BroadcastShape {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

void launch_unary(UnaryOp op, ElemType t, const void* x, void* y, int64_t n, cudaStream_t s);
// `same`: both inputs have the output's shape (the flat fast path); otherwise `shape` maps indices.
void launch_binary(BinaryOp op, ElemType t, const void* a, const void* b, void* y, int64_t n, bool same,
                   const BroadcastShape& shape, cudaStream_t s);

}  // namespace tessera::cuda
