// Device helpers of the matrix-product kernels: Gemm's C broadcast into the output before cuBLASLt adds
// the product to it in place.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

// y[i * n + j] = scale * c[i * si + j * sj] for an [m, n] output (si or sj 0 on a broadcast axis).
void launch_broadcast_matrix(ElemType t, const void* c, void* y, int64_t m, int64_t n, int64_t si, int64_t sj,
                             float scale, cudaStream_t s);

}  // namespace tessera::cuda
