// Registration of com.tessera NhwcConv (conv_nhwc_kernels.cpp), called by register_conv_kernels.
#pragma once

#include "backends/cuda/kernel_table.h"

namespace tessera::cuda {

void register_nhwc_conv_kernels(KernelTable& t);

}  // namespace tessera::cuda
