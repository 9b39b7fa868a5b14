// The CUDA backend's kernels for convolutions (cuDNN) and pooling (pool_kernels.cpp).
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/pool_kernels.h"

namespace tessera::cuda {

void register_conv_kernels(KernelTable& t) {
  register_pool_kernels(t);
}

}  // namespace tessera::cuda
