// Tessera's own depthwise convolution (one group per channel, no dilation) in the blocked layout with
// blocks of 16 channels, for AVX-512 CPUs: MobileNetV2's 17 depthwise 3x3 layers, which oneDNN 2.6 splits
// statically over the threads. Here each task is one output row of one block of 16 channels, handed
// out dynamically over the pool; bias, Z and Relu/Clip are applied in the same pass (pointwise_conv.h's
// epilogue).
//
// Layout (ops/layout/blocked.h): X [N, Cb, H, W, 16], Y and Z [N, Cb, OH, OW, 16].
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/pointwise_conv.h"

namespace tessera::cpu {

// Weights [C, 1, KH, KW] packed as [Cb][KH][KW][16] and the bias as [Cb * 16], zero-padded.
struct DepthwiseWeights {
  int64_t blocks = 0, kh = 0, kw = 0;
  std::vector<float> packed, bias;
};
DepthwiseWeights pack_depthwise(const float* w, const float* bias, int64_t channels, int64_t kh, int64_t kw);

struct DepthwiseGeometry {
  int64_t h = 0, w = 0, oh = 0, ow = 0;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

void depthwise_conv(rt::ThreadPool& pool, const float* x, int64_t batch, const DepthwiseGeometry& g,
                    const DepthwiseWeights& w, const PointwiseEpilogue& ep, float* y);

}  // namespace tessera::cpu
