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

template <class F>
void by_scalar(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::kHalf:
      return f(Tag<__half>{});
    case ScalarType::kBFloat16:
      return f(Tag<__nv_bfloat16>{});
    case ScalarType::kDouble:
      return f(Tag<double>{});
    case ScalarType::kInt8:
      return f(Tag<int8_t>{});
    case ScalarType::kUint8:
      return f(Tag<uint8_t>{});
    case ScalarType::kInt16:
      return f(Tag<int16_t>{});
    case ScalarType::kUint16:
      return f(Tag<uint16_t>{});
    case ScalarType::kInt32:
      return f(Tag<int32_t>{});
    case ScalarType::kUint32:
      return f(Tag<uint32_t>{});
    case ScalarType::kInt64:
      return f(Tag<int64_t>{});
    case ScalarType::kUint64:
      return f(Tag<uint64_t>{});
    default:
      return f(Tag<float>{});
  }
}

}  // namespace tessera::cuda
