// com.tessera FusedElementwise on the GPU: the launch parameters shared by the kernel generated for a
// program (fused_elementwise_codegen.h, compiled by NVRTC) and the interpreter kernel that runs any
// program when NVRTC cannot compile one (fused_elementwise_interp.cu). Plain C layout: the generated
// source declares the same struct, so both sides must keep it in step (the codegen writes it from here).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

inline constexpr int kFusedMaxInputs = 16;
inline constexpr int kFusedMaxOutputs = 8;
inline constexpr int kFusedMaxRank = 8;
inline constexpr int kFusedMaxStatements = 64;

// How input k is indexed by the flat output index i (the broadcast pattern):
//   kSame    i                     the output's shape
//   kScalar  0                     one element
//   kRow     i % mod[k]            the output's trailing dimensions ([768] against [32,197,768])
//   kCol     (i / div[k]) % mod[k] a contiguous block of the output's dimensions ([32,197,1])
//   kStrided strides[k] . index    anything else (rank <= kFusedMaxRank)
enum class FusedMode : int32_t { kSame, kScalar, kRow, kCol, kStrided };
// The element types the kernel loads and stores (bool: Where's condition only).
enum class FusedType : int32_t { kFloat, kHalf, kBFloat16, kBool };

struct FusedParams {
  const void* in[kFusedMaxInputs];
  void* out[kFusedMaxOutputs];
  int64_t n;  // elements of each output
  int64_t div[kFusedMaxInputs];
  int64_t mod[kFusedMaxInputs];
  int32_t rank;   // kStrided only: the output's dimensions and each input's element strides
  int32_t small;  // n <= 2^30: strided offsets in int32 (64-bit division costs several times more)
  int64_t dims[kFusedMaxRank];
  int64_t strides[kFusedMaxInputs][kFusedMaxRank];
};

// The interpreter's form of a program: statement k writes register n_inputs + k; an argument is a
// register (>= 0) or the literal lit[] beside it (-1). Ops are ops::fused::EwOp's values.
struct FusedInstr {
  int32_t op;
  int32_t to;  // Cast: a FusedType
  int32_t arg[3];
  float lit[3];
};

struct FusedInterpProgram {
  int32_t n_inputs, n_code, n_outputs;
  int32_t in_type[kFusedMaxInputs];
  int32_t in_mode[kFusedMaxInputs];
  int32_t out_type[kFusedMaxOutputs];
  int32_t out_reg[kFusedMaxOutputs];
  FusedInstr code[kFusedMaxStatements];
};

// Runs `prog` over p.n elements on stream `s` (any broadcast pattern, element by element).
void launch_fused_interp(const FusedInterpProgram& prog, const FusedParams& p, cudaStream_t s);

}  // namespace tessera::cuda
