// A direct depthwise 2-D convolution over channels-last tensors (one filter per channel, group == C ==
// M), with bias, Z and the activation applied before the one store: memory-bound work that cuDNN's
// implicit GEMMs do poorly (MobileNetV2's depthwise layers). NhwcConv times it against cuDNN at session
// build and keeps the faster (conv_nhwc_kernels.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/conv_epilogue.h"

namespace tessera::cuda {

struct Depthwise {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, pad_top = 0, pad_left = 0;
  bool tiled = true;  // false: the one-thread-per-output kernel even where the tiled one applies
};

// x [N, H, W, C], w [C, kH, kW, 1] (NhwcConv's weights), b [C] or null, z [N, oH, oW, C] or null,
// y [N, oH, oW, C]; computed in float32 and rounded once. 3x3 windows at stride 1 or 2 run the tiled
// kernel (conv_depthwise_tiled.h), others one thread per output and channel vector.
void launch_depthwise_nhwc(ElemType t, const void* x, const void* w, const void* b, const void* z, void* y,
                           const Depthwise& g, const Epilogue& e, cudaStream_t s);

}  // namespace tessera::cuda
