// Device helpers of the convolution kernels: a shifted copy that pads an input with zeros (asymmetric
// pads, which cuDNN's convolutions do not take) or crops an output (ConvTranspose's pads).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

inline constexpr int kMaxConvRank = 5;

// y[o] = x[o + shift] where that lies inside x, else 0, over y's dims (row-major, rank up to 5).
struct ShiftedCopy {
  int rank = 0;
  int64_t y_dims[kMaxConvRank] = {}, x_dims[kMaxConvRank] = {}, shift[kMaxConvRank] = {};
};
void launch_shifted_copy(ElemType t, const void* x, void* y, const ShiftedCopy& c, cudaStream_t s);

}  // namespace tessera::cuda
