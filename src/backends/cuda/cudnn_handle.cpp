#include "backends/cuda/cudnn_handle.h"

#include <fmt/format.h>

#include <map>
#include <memory>

#include "backends/cuda/cuda_check.h"

namespace tessera::cuda {

namespace {

struct Entry {
  cudnnHandle_t handle = nullptr;
  std::mutex mu;
};

}  // namespace

CudnnHandle cudnn_handle(cudaStream_t stream) {
  static std::mutex mu;
  static std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Entry>> handles;  // never destroyed
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  Entry* e = nullptr;
  {
    std::lock_guard lock(mu);
    auto& slot = handles[{device, stream}];
    if (!slot) {
      auto fresh = std::make_unique<Entry>();
      check_cudnn(cudnnCreate(&fresh->handle), "cudnnCreate");
      check_cudnn(cudnnSetStream(fresh->handle, stream), "cudnnSetStream");
      slot = std::move(fresh);
    }
    e = slot.get();
  }
  return {e->handle, std::unique_lock(e->mu)};
}

void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  throw rt::KernelError(fmt::format("cuDNN error in {}: {}", what, cudnnGetErrorString(s)));
}

}  // namespace tessera::cuda
