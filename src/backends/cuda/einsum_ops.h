// Device launch of Einsum as a direct loop over the index space: each output element sums, over the
// labels missing from the output (last fastest, as the CPU reference), the product of the operands'
// elements. Strides are per operand and label (0 where a label is absent or broadcast; a label repeated
// within an operand has the sum of its strides: the diagonal).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

inline constexpr int kEinsumOperands = 4;
inline constexpr int kEinsumLabels = 12;

struct EinsumSpec {
  int operands = 0;
  int out_rank = 0, sum_rank = 0;
  int64_t out_dims[kEinsumLabels] = {};
  int64_t sum_dims[kEinsumLabels] = {};
  int64_t out_stride[kEinsumOperands][kEinsumLabels] = {};
  int64_t sum_stride[kEinsumOperands][kEinsumLabels] = {};
  const void* in[kEinsumOperands] = {};
};

// float32/16, bfloat16 (float32 arithmetic), float64, int32 and int64 (wrapping int64 arithmetic).
void launch_einsum(ScalarType t, const EinsumSpec& spec, void* y, int64_t n, cudaStream_t s);

}  // namespace tessera::cuda
