// Host-side helpers shared by the CUDA kernels: element types, node checks for `supports`, launch
// checks and the kernel definition shorthand.
#pragma once

#include <functional>
#include <optional>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/elementwise.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

// The float element types the kernels are instantiated for; nullopt for the others.
std::optional<ElemType> elem_type(rt::DataType t);

// All `count` inputs present, typed, of one float element type the kernels have.
bool same_float_inputs(const rt::KernelInfo& info, size_t count);

// Every input and output the node has is a tensor (not a sequence, optional or map) of known type.
bool all_tensors(const rt::KernelInfo& info);

// After a launch: a launch error becomes a KernelError naming the operator.
void check_launch(rt::KernelContext& ctx);

// A CUDA kernel definition for versions [since_min, since_max] of an ai.onnx operator.
rt::KernelDef cuda_def(const char* op, std::function<bool(const rt::KernelInfo&)> supports,
                       rt::KernelFactory create, int since_min = 1, int since_max = INT_MAX);

}  // namespace tessera::cuda
