#include <cstdint>

#include "backends/cuda/fault_injection.h"

namespace tessera::cuda {

namespace {

__global__ void write_to_invalid_address(int* p) {
  *p = 1;  // p is an address no allocation can have: an illegal memory access
}

}  // namespace

void launch_illegal_address_kernel(cudaStream_t s) {
  write_to_invalid_address<<<1, 1, 0, s>>>(reinterpret_cast<int*>(std::uintptr_t{8}));
}

}  // namespace tessera::cuda
