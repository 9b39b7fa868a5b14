// cuDNN for the CUDA backend's convolutions: one handle per stream (a cuDNN handle carries the stream it
// launches on and must not be used by two threads at once, hence the lock that comes with it), and
// status checks that name the call.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <mutex>

namespace tessera::cuda {

struct CudnnHandle {
  cudnnHandle_t handle;
  std::unique_lock<std::mutex> lock;  // held while the caller queues its work
};

// The handle for `stream` on the current device, created on first use and kept for the process
// (destroying it at exit could run after the CUDA driver has been torn down).
CudnnHandle cudnn_handle(cudaStream_t stream);

// A failed cuDNN call becomes a KernelError naming the call and cuDNN's message.
void check_cudnn(cudnnStatus_t s, const char* what);

}  // namespace tessera::cuda
