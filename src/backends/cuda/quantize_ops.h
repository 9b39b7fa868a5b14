// Device launches of QuantizeLinear and DequantizeLinear for every quantized type the CPU reference
// takes (8/16-bit integers, int32 for DequantizeLinear, the packed int4/uint4/int2/uint2, the float8
// types, float4e2m1 and float8e8m0), per tensor, per axis or per block, with the reference's arithmetic
// (ops/quant/quantize_linear_kernel.cpp, dequantize_linear_kernel.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_typed.h"

namespace tessera::cuda {

// A quantized element type: integers of `bits` bits in [lo, hi] (4 and 2 are packed, the first element
// in the low bits), or a small float.
struct QuantSide {
  enum class Kind { kInt, kMiniFloat, kE8M0 };
  Kind kind = Kind::kInt;
  int bits = 8;
  int64_t lo = 0, hi = 0;
  MiniFloatLayout mini;
};

// Which scale / zero point element serves element i of x (QuantLayout of ops/quant/quant_kernel_util.h).
struct QuantParams {
  int mode = 0;  // 0 per tensor, 1 per axis, 2 per block
  int64_t inner = 1, dim = 1, blocks = 1, block = 1;
};

// y = saturate(round_half_even(x / scale) + zero_point), or the small float of x / scale + zero point.
// x is float32/16, bfloat16, float64 or int32 (`x_type`), scale a float type; zp may be null.
void launch_quantize(ScalarType x_type, const void* x, ScalarType scale_type, const void* scale,
                     const void* zp, const QuantSide& q, void* y, int64_t n, const QuantParams& p,
                     bool saturate, cudaStream_t s);

// y = (x - zero_point) * scale in float32, stored as `y_type` (a float type).
void launch_dequantize(const QuantSide& q, const void* x, const void* zp, ScalarType scale_type,
                       const void* scale, ScalarType y_type, void* y, int64_t n, const QuantParams& p,
                       cudaStream_t s);

// DynamicQuantizeLinear: scale = (max - min) / 255 over x's range widened to 0, zero point =
// saturate(round(-min / scale)), y = saturate(round(x / scale) + zero point), in float32 as the CPU
// reference. The range is found on the device (no synchronisation), so a NaN in x cannot be reported:
// it is left out of the range and quantizes to 0. x is float32/16 or bfloat16.
void launch_dynamic_quantize(ScalarType x_type, const void* x, int64_t n, uint8_t* y, float* scale,
                             uint8_t* zero_point, cudaStream_t s);

}  // namespace tessera::cuda
