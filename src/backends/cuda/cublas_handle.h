// cuBLASLt for the CUDA backend's matrix products: one handle per device, shared by every kernel (a
// cuBLASLt handle is not bound to a stream, and creating one costs milliseconds), and status checks that
// name the call.
#pragma once

#include <cublasLt.h>

namespace tessera::cuda {

// The handle of the current device, created on first use and kept for the process: destroying it at
// exit could run after the CUDA driver has been torn down.
cublasLtHandle_t cublaslt_handle();

// A failed cuBLASLt call becomes a KernelError naming the call and cuBLAS's status.
void check_cublas(cublasStatus_t s, const char* what);

}  // namespace tessera::cuda
