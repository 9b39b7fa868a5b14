// Device side of the convolution epilogue (conv_epilogue.h): the activation, shared by the epilogue
// kernel and the kernels that apply it themselves (the depthwise convolution).
#pragma once

#include <cmath>

#include "backends/cuda/conv_epilogue.h"

namespace tessera::cuda {

__device__ __forceinline__ float conv_activate(float v, const Epilogue& e) {
  switch (e.act) {
    case ConvAct::kNone:
      return v;
    case ConvAct::kRelu:
      return v < 0.f ? 0.f : v;  // NaN passes through, as the reference's x < 0 ? 0 : x does
    case ConvAct::kTanh:
      return tanhf(v);
    case ConvAct::kSigmoid:
      return 1.f / (1.f + expf(-v));
    case ConvAct::kLeakyRelu:
      return v < 0.f ? e.p0 * v : v;
    case ConvAct::kClip:
      return fminf(fmaxf(v, e.p0), e.p1);
    case ConvAct::kHardSigmoid:
      return fmaxf(0.f, fminf(1.f, e.p0 * v + e.p1));
  }
  return v;
}

}  // namespace tessera::cuda
