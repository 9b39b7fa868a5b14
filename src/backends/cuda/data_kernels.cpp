// The CUDA backend's kernels for shape and data movement (Reshape, Transpose, Concat, Slice, Gather, Pad,
// Cast, Where...).
#include "backends/cuda/kernel_table.h"

namespace tessera::cuda {

void register_data_kernels(KernelTable& t) {
  (void)t;
}

}  // namespace tessera::cuda
