// Device helpers shared by the interpolating kernels (Resize, GridSample): numbers of every element
// type read as float64 and written back as the CPU reference's from_double does (ops/image/resize_ref.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cuda/data_ops.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/type_dispatch.cuh"

namespace tessera::cuda {

template <class T>
__device__ __forceinline__ double as_double(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return static_cast<double>(load(p, i));
  else
    return static_cast<double>(p[i]);
}

// The integer range as compile-time constants (usable in device code).
template <class T>
constexpr T kLowest = std::numeric_limits<T>::lowest();
template <class T>
constexpr T kHighest = std::numeric_limits<T>::max();

// The reference's from_double: floats through float32 (double for float64), integers rounded half to
// even and clamped, NaN 0.
template <class T>
__device__ __forceinline__ void store_double(T* p, int64_t i, double v) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    store(p, i, static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    p[i] = static_cast<T>(v);
  } else {
    if (v != v) {
      p[i] = T(0);
      return;
    }
    const double r = rint(v);
    const double lo = static_cast<double>(kLowest<T>);
    const double hi = static_cast<double>(kHighest<T>);
    p[i] = r <= lo ? kLowest<T> : (r >= hi ? kHighest<T> : static_cast<T>(r));
  }
}

}  // namespace tessera::cuda
