#include "backends/cuda/cublas_handle.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "backends/cuda/cuda_check.h"

namespace tessera::cuda {

cublasLtHandle_t cublaslt_handle() {
  static std::mutex mu;
  static std::map<int, cublasLtHandle_t> handles;  // by device; never destroyed (see the header)
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard lock(mu);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  check_cublas(cublasLtCreate(&h), "cublasLtCreate");
  handles.emplace(device, h);
  return h;
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw rt::KernelError(fmt::format("cuBLASLt error in {}: {} ({})", what, cublasLtGetStatusString(s),
                                    cublasLtGetStatusName(s)));
}

}  // namespace tessera::cuda
