// The CUDA source of one FusedElementwise program for one signature (element types and broadcast
// pattern of its inputs, element types of its outputs): every value in a register, float32 math, one
// rounding per stored output. Kernels (extern "C", 256 threads a block, grid-stride loops):
//   tessera_fused_scalar  one element per iteration, any pattern;
//   tessera_fused_vec     `width` elements per iteration with 16-byte (or narrower) loads and stores,
//                         emitted when no input is kStrided; the caller launches it only when p.n, each
//                         kRow input's length and each kCol input's block are multiples of the width and
//                         every pointer is aligned to width elements.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/fused_elementwise.h"
#include "ops/fused/elementwise_program.h"

namespace tessera::cuda {

struct FusedSignature {
  std::vector<FusedType> inputs;
  std::vector<FusedMode> modes;
  std::vector<FusedType> outputs;
  bool operator<(const FusedSignature& o) const {
    return std::tie(inputs, modes, outputs) < std::tie(o.inputs, o.modes, o.outputs);
  }
};

inline constexpr const char* kFusedScalarKernel = "tessera_fused_scalar";
inline constexpr const char* kFusedVectorKernel = "tessera_fused_vec";

// Elements per vector iteration: 16 bytes of the widest type read or written, at most 8.
int fused_vector_width(const FusedSignature& sig);
// Whether the signature gets a vector kernel (no strided input).
bool fused_has_vector_kernel(const FusedSignature& sig);

std::string generate_fused_source(const ops::fused::Program& p, const FusedSignature& sig);

}  // namespace tessera::cuda
