// The three epilogues the own convolution kernels' tests cover: 0 none, 1 Z added, 2 Z added then
// clipped to [0, 0.5] (the Relu/Clip path).
#pragma once

#include "backends/cpu/pointwise_conv.h"

namespace tessera::test {

inline cpu::PointwiseEpilogue epilogue_variant(int variant, const float* z) {
  cpu::PointwiseEpilogue ep;
  if (variant >= 1) ep.z = z;
  if (variant == 2) {
    ep.clip = true;
    ep.lo = 0.f;
    ep.hi = 0.5f;
  }
  return ep;
}

}  // namespace tessera::test
