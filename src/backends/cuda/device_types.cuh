// Device-side loads and stores of the float element types: each kernel computes in float32 and rounds
// once to the element type when it stores (round to nearest even).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace tessera::cuda {

template <class T>
__device__ __forceinline__ float load(const T* p, int64_t i);
template <>
__device__ __forceinline__ float load<float>(const float* p, int64_t i) {
  return p[i];
}
template <>
__device__ __forceinline__ float load<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}
template <>
__device__ __forceinline__ float load<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}

template <class T>
__device__ __forceinline__ void store(T* p, int64_t i, float v);
template <>
__device__ __forceinline__ void store<float>(float* p, int64_t i, float v) {
  p[i] = v;
}
template <>
__device__ __forceinline__ void store<__half>(__half* p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}
template <>
__device__ __forceinline__ void store<__nv_bfloat16>(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

// Grid size for a grid-stride loop over n elements with `threads` per block.
inline unsigned grid_for(int64_t n, int threads = 256) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) return 1;
  return static_cast<unsigned>(b < 65535 * 32 ? b : 65535 * 32);
}

}  // namespace tessera::cuda
