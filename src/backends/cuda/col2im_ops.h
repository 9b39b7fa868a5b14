// Device launch of Col2Im: columns [N, C * prod(block), L] folded into images [N, C, image...], each
// image element summing the column values whose block window lands on it (the adjoint of im2col).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

inline constexpr int kCol2ImRank = 6;

struct Col2ImSpec {
  int rank = 0;  // spatial axes
  int64_t batch = 0, channels = 0;
  int64_t image[kCol2ImRank] = {}, block[kCol2ImRank] = {}, blocks[kCol2ImRank] = {};
  int64_t stride[kCol2ImRank] = {}, dilation[kCol2ImRank] = {}, pad[kCol2ImRank] = {};  // pad: the begin side
};

// x and y of one number type t (float types summed in float32, float64 in float64, integers wrapping).
void launch_col2im(ScalarType t, const void* x, void* y, const Col2ImSpec& s, cudaStream_t st);

}  // namespace tessera::cuda
