// The GELU family of ONNX Runtime's contrib domain on the GPU (what the fuse_gelu and fuse_bias_gelu
// rules emit): Gelu (erf form), BiasGelu (Gelu of A + B, B along the last axis), FastGelu (the tanh
// approximation, optional bias along the last axis) and QuickGelu (x * sigmoid(alpha * x)). Float32,
// float16 and bfloat16, computed in float32 and rounded once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class GeluForm { kErf, kTanh, kQuick };

// y[i] = gelu(x[i] + bias[i % bias_len]); bias may be null (bias_len ignored).
void launch_gelu(GeluForm form, ElemType t, const void* x, const void* bias, int64_t bias_len, void* y,
                 int64_t n, float alpha, cudaStream_t s);

}  // namespace tessera::cuda
