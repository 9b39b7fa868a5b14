// Device launch of Det: the determinant of each n x n matrix by LU decomposition with partial pivoting
// in float64 (one thread per matrix, working in `work`: count * n * n doubles), as the CPU reference.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

void launch_det(ScalarType t, const void* x, void* y, double* work, int64_t count, int64_t n, cudaStream_t s);

}  // namespace tessera::cuda
