// Tessera's channels-last ops (domain com.tessera), written by the `to_nhwc_layout` pass
// (src/passes/layout_nhwc.cpp) so that chains of 2-D convolutions and pooling on the GPU stay in the
// layout cuDNN's tensor-core kernels compute in, instead of converting from and to NCHW around every node.
//
// An NHWC tensor of a 2-D NCHW activation [N, C, H, W] is a plain 4-D tensor [N, H, W, C]. The ops:
//   NhwcConv        com.microsoft FusedConv (bias B, tensor Z added, then an activation) with X, Z and Y
//                   channels-last and the weights W as [M, kH, kW, C/group] (cuDNN's KRSC / OHWI filter
//                   layout; the pass reorders the initializer once, so the weight is held once);
//   NhwcMaxPool     MaxPool (no Indices output) over [N, H, W, C];
//   NhwcAveragePool AveragePool over [N, H, W, C] (Global*Pool become these with an H x W window).
// Elementwise ops, Concat on axis 3 and ReduceMean over axes [1, 2] need no op of their own.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::ops::nhwc {

inline constexpr const char* kDomain = "com.tessera";

// Permutations of Transpose between the two layouts.
inline const std::vector<int64_t>& to_nhwc_perm() {
  static const std::vector<int64_t> p{0, 2, 3, 1};
  return p;
}
inline const std::vector<int64_t>& to_nchw_perm() {
  static const std::vector<int64_t> p{0, 3, 1, 2};
  return p;
}

}  // namespace tessera::ops::nhwc
