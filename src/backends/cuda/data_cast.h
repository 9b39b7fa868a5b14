// Device launch of Cast between a number type and one of the small types without a C++ element: the
// float8 and float4e2m1 minifloats, float8e8m0 and the packed 4- and 2-bit integers (two or four codes
// per byte, the first element in the low bits). Slow-path conversions the exported models never run in
// a loop, so one kernel with the types as run-time values serves every pair.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_typed.h"

namespace tessera::cuda {

// One side of the cast: a ScalarType number, or one of the small types.
struct CastSide {
  enum class Kind { kScalar, kMiniFloat, kE8M0, kInt, kUint };
  Kind kind = Kind::kScalar;
  ScalarType scalar = ScalarType::kFloat;  // kScalar
  MiniFloatLayout mini;                    // kMiniFloat (float8 types, float4e2m1)
  int bits = 8;                            // storage bits per element: 8, 4 or 2
};

enum class E8M0Rounding { kUp, kDown, kNearest };

// y = Cast(x) with the CPU reference's rules (ops/tensor/cast_kernel.cpp): each element passes through
// a double and an exact int64; float to integer truncates (NaN 0, int64 clamps) and wraps to the width;
// minifloats round to nearest even (float4e2m1 always saturates); float8e8m0 rounds by `round`.
void launch_cast_small(const CastSide& from, const CastSide& to, const void* x, void* y, int64_t n,
                       bool saturate, E8M0Rounding round, cudaStream_t s);

}  // namespace tessera::cuda
