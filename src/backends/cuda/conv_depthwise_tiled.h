// The tiled depthwise 3x3 convolution over channels-last tensors, stride 1 or 2 (MobileNetV2's depthwise
// layers): input tiles with their halo in shared memory, 16-byte channel vectors, bias, Z and the
// activation fused into the one store. NhwcConv runs it where depthwise_tiled_takes() says so, else the
// general direct kernel (conv_depthwise.h), timed against cuDNN at session build either way.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/conv_depthwise.h"

namespace tessera::cuda {

// 3x3, no dilation, equal strides of 1 or 2, sizes whose indices fit the kernel's 32-bit arithmetic.
bool depthwise_tiled_takes(const Depthwise& g);

// As launch_depthwise_nhwc; only for a configuration depthwise_tiled_takes() accepts.
void launch_depthwise_tiled(ElemType t, const void* x, const void* w, const void* b, const void* z, void* y,
                            const Depthwise& g, const Epilogue& e, cudaStream_t s);

}  // namespace tessera::cuda
