// The convolutions' epilogue as one kernel: y = act(y + b[channel] + z), in place on the convolution's
// output, computed in float32 from the stored values and rounded once. It replaces cuDNN's separate
// cudnnAddTensor / cudnnActivationForward calls (three passes over the output, each with cuDNN's
// per-call host work) and covers every FusedConv activation, which cudnnConvolutionBiasActivationForward
// does not (it fuses ReLU and identity only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class ConvAct { kNone, kRelu, kTanh, kSigmoid, kLeakyRelu, kClip, kHardSigmoid };

struct Epilogue {
  ConvAct act = ConvAct::kNone;
  float p0 = 0.f, p1 = 0.f;  // LeakyRelu [alpha], Clip [min, max], HardSigmoid [alpha, beta]
  int64_t channels = 1;      // C
  int64_t inner = 1;         // elements per channel step: 1 channels-last, H*W for NCHW
};

// `b` (C values) and `z` (y's shape) may be null.
void launch_epilogue(ElemType t, void* y, const void* b, const void* z, int64_t n, const Epilogue& e,
                     cudaStream_t s);

}  // namespace tessera::cuda
