// The fast path of the row normalisations (LayerNormalization, RMSNormalization and the com.microsoft
// skip forms) for rows whose length is a multiple of 16 bytes: 16-byte loads and stores, the row held
// in registers by a team of 1 to 8 warps, two passes over the registers in float32.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/norm_ops.h"

namespace tessera::cuda {

// Runs the normalisation of launch_row_norm when the vector path takes it (per-element parameters, a
// skip that repeats whole rows, every pointer 16-byte aligned, n a multiple of 16 bytes and at most 8
// warps of 32 values a lane); returns false, launching nothing, otherwise.
bool launch_row_norm_vec(ElemType t, const void* x, const void* scale, const void* bias, void* y, float* mean,
                         float* inv_std, const NormParams& p, cudaStream_t s);

}  // namespace tessera::cuda
