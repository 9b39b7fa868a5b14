// Patch convolutions (kernel == stride, no pads) as patch copy + cuBLASLt product: conv_patch_kernels.cpp.
#pragma once

#include "backends/cuda/kernel_table.h"

namespace tessera::cuda {

void register_patch_conv_kernels(KernelTable& t);

}  // namespace tessera::cuda
