// TopK on the GPU: each row (the [outer, n, inner] view along the axis) is sorted in shared memory by a
// block (bitonic sort of value/index pairs, rows of up to kTopKMaxRow elements); the first k go out.
// Larger (smaller with !largest) values first, NaN as the largest, equal values by lower index, as the
// CPU reference does.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/reduce_ops.h"
#include "backends/cuda/softmax_ops.h"

namespace tessera::cuda {

inline constexpr int64_t kTopKMaxRow = 2048;

// values: k per row, the input's element type; indices: int64.
void launch_top_k(NumType t, bool largest, const void* x, void* values, int64_t* indices, const RowView& v,
                  int64_t k, cudaStream_t s);

}  // namespace tessera::cuda
