// Fault injection for testing how a sticky device error is reported: TESSERA_CUDA_FAULT_NODE=NAME makes
// the CUDA backend launch, before the node of that name, a kernel that writes to an invalid address
// (cudaErrorIllegalAddress poisons the context, as a faulty kernel would). Used by scripts/gpu-check.sh;
// unset, nothing happens.
#pragma once

#include <cuda_runtime.h>

namespace tessera::cuda {

void launch_illegal_address_kernel(cudaStream_t s);

}  // namespace tessera::cuda
