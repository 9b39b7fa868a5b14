// Element-type dispatch shared by the CUDA data kernels (.cu files): calling a generic lambda with the
// device type of a ScalarType or with the unsigned storage type of an element size, and the grid-stride
// loop their kernels run.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

// One element per thread, grid-stride, 64-bit indices.
#define TESSERA_GRID_LOOP(i, n)                                             \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{gridDim.x} * blockDim.x)

// Calls f(Tag<T>{}) with the device type of `t`: float, __half, __nv_bfloat16, double, the integers, and
// for kBool the type `BoolAs` (bool itself, uint8_t where bools are handled as bytes, or a type of a
// kernel that never sees bools).
template <class BoolAs, class F>
void by_scalar_type(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::kFloat:
      return f(Tag<float>{});
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
    case ScalarType::kBool:
      return f(Tag<BoolAs>{});
  }
}

// Calls f(Tag<S>{}) with the unsigned storage type of `bytes` (1, 2, 4, else 8).
template <class F>
void by_size(int bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(Tag<uint8_t>{});
    case 2:
      return f(Tag<uint16_t>{});
    case 4:
      return f(Tag<uint32_t>{});
    default:
      return f(Tag<uint64_t>{});
  }
}

}  // namespace tessera::cuda
