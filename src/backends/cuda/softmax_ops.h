// Softmax, LogSoftmax and Hardmax on the GPU over the [outer, n, inner] view of a tensor (each
// distribution runs along n with stride inner), for float32, float16 and bfloat16: max-subtracted,
// exponentials summed in float32, rounded once when stored.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

struct RowView {
  int64_t outer = 1, n = 1, inner = 1;
};

void launch_softmax(SoftmaxKind k, ElemType t, const void* x, void* y, const RowView& v, cudaStream_t s);

}  // namespace tessera::cuda
