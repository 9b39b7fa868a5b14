// Device launches of the typed data kernels: Cast, the comparisons and logical operators, IsNaN/IsInf,
// integer arithmetic, CumSum, OneHot and EyeLike's diagonal.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

// Float types convert through float32 as the CPU reference does; float to integer truncates toward
// zero, NaN gives 0, values beyond int64 clamp to it, then narrower integers wrap.
void launch_cast(ScalarType from, ScalarType to, const void* x, void* y, int64_t n, cudaStream_t s);

// The layout of a float8 type (as ops/tensor/float8_kernel_util.h describes it): Cast to float8 rounds
// from float64 to nearest even with the ONNX table for out-of-range values (saturate or Inf/NaN).
struct MiniFloatLayout {
  int exp_bits = 0, mant_bits = 0, bias = 0;
  bool has_inf = false, uz = false, has_nan = true;
  double max = 0;
  uint8_t nan_code = 0;
};
void launch_cast_to_float8(ScalarType from, const void* x, uint8_t* y, int64_t n, MiniFloatLayout f,
                           bool saturate, cudaStream_t s);
void launch_cast_from_float8(const uint8_t* x, ScalarType to, void* y, int64_t n, MiniFloatLayout f,
                             cudaStream_t s);

enum class CompareOp { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual, kAnd, kOr, kXor };
// y (bool) = a op b with broadcasting (b.s[0] and b.s[1] are a's and b's strides).
void launch_compare(CompareOp op, ScalarType t, const void* a, const void* b, bool* y, int64_t n,
                    const Broadcast3& shape, cudaStream_t s);
void launch_not(const bool* x, bool* y, int64_t n, cudaStream_t s);
// IsNaN when `nan`, otherwise IsInf with detect_positive / detect_negative.
void launch_is_special(ScalarType t, bool nan, bool pos, bool neg, const void* x, bool* y, int64_t n,
                       cudaStream_t s);

enum class IntOp { kAdd, kSub, kMul, kDiv, kMod, kFmod, kMax, kMin, kBitAnd, kBitOr, kBitXor, kShl, kShr };
// Integer arithmetic with broadcasting, wrapping on overflow; a division by 0 gives 0.
void launch_int_binary(IntOp op, ScalarType t, const void* a, const void* b, void* y, int64_t n,
                       const Broadcast3& shape, cudaStream_t s);
void launch_bit_not(ScalarType t, const void* x, void* y, int64_t n, cudaStream_t s);

// CumSum (CumProd when `product`) along the middle axis of [outer, len, inner], accumulating in float64
// for the float types (rounding each output once) and wrapping through uint64 for integers.
void launch_cumsum(ScalarType t, const void* x, void* y, int64_t outer, int64_t len, int64_t inner,
                   bool exclusive, bool reverse, bool product, cudaStream_t s);

// OneHot (int32, int64, float32 or float64 indices, floats truncated): out [outer, depth, inner] = values[1]
// where the index (negative counts from depth) equals the position along depth, values[0] elsewhere.
void launch_one_hot(ScalarType idx_type, const void* idx, int elem_bytes, const void* values, void* out,
                    int64_t outer, int64_t depth, int64_t inner, cudaStream_t s);

// Range: y[i] = start + i * delta in the element type's arithmetic (float32 for the 16-bit floats,
// without fused multiply-adds, as the CPU reference computes; integers wrap).
void launch_range(ScalarType t, double start, double delta, int64_t istart, int64_t idelta, void* y,
                  int64_t n, cudaStream_t s);

// Pow with a base and an exponent of other types (opset 12): exact wrapping repeated squaring for two
// integers (0 to a negative power gives 0), otherwise pow in float64 converted to the base's type.
void launch_pow_mixed(ScalarType base, ScalarType exponent, const void* a, const void* b, void* y, int64_t n,
                      const Broadcast3& shape, cudaStream_t s);

// Max, Min (NaN propagates), Mod (fmod: C's remainder, else Python's), Add, Sub, Mul, Div on float64,
// with broadcasting.
enum class DoubleOp { kMax, kMin, kFmod, kMod, kAdd, kSub, kMul, kDiv };
void launch_double_binary(DoubleOp op, const double* a, const double* b, double* y, int64_t n,
                          const Broadcast3& shape, cudaStream_t s);

// Cosine-sum window w[n] = a0 - a1 cos(2 pi n / denom) + a2 cos(4 pi n / denom) in float64 (1 where
// denom <= 0), stored as the element type.
void launch_window(ScalarType t, void* y, int64_t size, double denom, double a0, double a1, double a2,
                   cudaStream_t s);

// Clip on integers: min(max(x, lo), hi) where the bound is given (raw bits of the element type).
void launch_int_clip(ScalarType t, const void* x, void* y, int64_t n, bool has_lo, uint64_t lo, bool has_hi,
                     uint64_t hi, cudaStream_t s);

// Sets y[i][i + k] to `one` (raw bits) in a rows x cols matrix already filled with zeros.
void launch_eye_diagonal(int elem_bytes, void* y, int64_t rows, int64_t cols, int64_t k, uint64_t one,
                         cudaStream_t s);

}  // namespace tessera::cuda
