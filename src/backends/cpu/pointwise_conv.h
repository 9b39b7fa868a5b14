// Tessera's own 1x1 convolution (stride 1, one group) in the blocked layout with blocks of 16 channels,
// for AVX-512 CPUs. Half of ResNet-50's time and most of MobileNetV2's is in 1x1 convolutions; oneDNN
// 2.6 splits each one statically over the threads it was made for, and at 16 threads and batch 1 ran
// them 10-20% slower than ONNX Runtime's NCHWc kernels (bench/layer_probe.sh, 2026-11-21). This kernel
// cuts the output into many small tiles (14 pixels x 32 channels) handed out dynamically over the
// pool, and adds the bias, a residual Z and a Relu/Clip in the same pass.
//
// Layout (ops/layout/blocked.h): X [N, ICb, P, 16] with P = H * W pixels, Y and Z [N, OCb, P, 16].
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/thread_pool.h"

namespace tessera::cpu {

// Weights [OC, IC] (OIHW with 1x1 windows) packed for the kernel: [OCb][ICb * 16][16], zero for the
// padded input and output channels, so that the padded lanes of X never count and those of Y stay 0
// (plus Z's).
struct PointwiseWeights {
  int64_t in_blocks = 0, out_blocks = 0;
  std::vector<float> packed;
  std::vector<float> bias;  // OCb * 16, zero-padded
};
PointwiseWeights pack_pointwise(const float* w, const float* bias, int64_t cout, int64_t cin);

struct PointwiseEpilogue {
  const float* z = nullptr;  // added before the activation, blocked like Y
  bool clip = false;         // min(max(v, lo), hi) after Z; Relu is lo = 0, hi = +inf
  float lo = 0, hi = 0;
};

// Whether this CPU runs the kernel (AVX-512F).
bool pointwise_supported();

// Y = act(conv1x1(X) + bias + Z) for `batch` images of `pixels` pixels.
void pointwise_conv(rt::ThreadPool& pool, const float* x, int64_t batch, int64_t pixels,
                    const PointwiseWeights& w, const PointwiseEpilogue& ep, float* y);

}  // namespace tessera::cpu
