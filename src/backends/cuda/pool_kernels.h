// Registration of the pooling kernels (pool_kernels.cpp), called by register_conv_kernels.
#pragma once

#include "backends/cuda/kernel_table.h"

namespace tessera::cuda {

void register_pool_kernels(KernelTable& t);

}  // namespace tessera::cuda
