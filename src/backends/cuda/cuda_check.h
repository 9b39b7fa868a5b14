// CUDA runtime calls checked: a failure becomes a KernelError naming the call and CUDA's message, which
// the executor reports with the node that ran (a sticky error such as an illegal address included).
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "runtime/kernel.h"

namespace tessera::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw rt::KernelError(
      fmt::format("CUDA error in {}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e)));
}

inline cudaStream_t native(rt::Stream& s) {
  return static_cast<cudaStream_t>(s.native());
}

}  // namespace tessera::cuda
