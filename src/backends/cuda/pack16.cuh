// Stores of N float32 values, rounded once, into a 16-byte vector of the element type: float16 and
// bfloat16 pairs through one packed conversion each (cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32, sm_80 and
// later) rather than a conversion and a byte permute per value; the same rounding (to nearest even).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

template <class T, int N>
__device__ __forceinline__ void store_rounded(T (&out)[N], const float (&v)[N]) {
  if constexpr (std::is_same_v<T, __half> && N % 2 == 0) {
#pragma unroll
    for (int e = 0; e < N; e += 2) reinterpret_cast<__half2*>(out)[e / 2] = __floats2half2_rn(v[e], v[e + 1]);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16> && N % 2 == 0) {
#pragma unroll
    for (int e = 0; e < N; e += 2)
      reinterpret_cast<__nv_bfloat162*>(out)[e / 2] = __floats2bfloat162_rn(v[e], v[e + 1]);
  } else {
#pragma unroll
    for (int e = 0; e < N; ++e) store(out, e, v[e]);
  }
}

}  // namespace tessera::cuda
