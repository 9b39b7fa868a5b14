// Tessera's blocked activation layout (domain com.tessera), written by the `layout` optimisation level
// (src/passes/layout_blocked.cpp) so that chains of convolutions and pooling stay in the layout the
// CPU convolution kernels compute in, instead of converting from and to NCHW around every node.
//
// A blocked tensor of a 2-D NCHW activation [N, C, H, W] with block b is a plain 5-D tensor
// [N, ceil(C / b), H, W, b]: channel c lives at [n, c / b, h, w, c % b]. C is padded up to a multiple
// of b; the padded channels hold finite values nothing reads (the convolutions give them zero weight,
// ReorderFromBlocked drops them). Because the layout is an ordinary shape, elementwise ops between two
// blocked tensors of one activation shape run unchanged on it.
#pragma once

#include <cstdint>

namespace tessera::ops::layout {

inline constexpr const char* kDomain = "com.tessera";

// Blocks of C channels: ceil(C / block).
inline int64_t channel_blocks(int64_t channels, int64_t block) {
  return (channels + block - 1) / block;
}

}  // namespace tessera::ops::layout
