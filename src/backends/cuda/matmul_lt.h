// Row-major matrix products on cuBLASLt: D = alpha * op(A) * op(B) + beta * D, batched with constant
// strides, with an optional bias (one value per column of D) and ReLU or GELU applied in the epilogue.
//
// cuBLASLt is column-major; a row-major [r, c] matrix is the column-major [c, r] one, so the kernel asks
// for D^T = op(B)^T * op(A)^T with the operands swapped. Float32 computes in float32 (no TF32: the
// conformance suite compares at float32 accuracy); float16 and bfloat16 accumulate in float32 and round
// once when storing; TF32 only when the session asks for it. The algorithm is chosen by cuBLASLt's heuristic
// once per problem and kept.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/kernel.h"

namespace tessera::cuda {

// kBiasGelu: cuBLASLt's GELU_BIAS, the tanh approximation of GELU (what PyTorch's _addmm_activation
// relies on for gelu(approximate="tanh")); never for the erf GELU.
enum class Epilogue { kNone, kBias, kBiasRelu, kRelu, kBiasGelu };

// One product in row-major terms. A is [m, k] ([k, m] stored when ta), B [k, n] ([n, k] when tb), D
// [m, n]; `batch` products `stride_*` elements apart (0: the operand is shared by all of them).
struct LtProblem {
  rt::DataType dtype = rt::DataType::kFloat;
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_d = 0;
  Epilogue epilogue = Epilogue::kNone;
  int align = 256;    // the operands' common address alignment in bytes (cuBLASLt's kernels rely on it)
  bool tf32 = false;  // float32 on TF32 tensor cores (the session's precision is kTf32)
  auto operator<=>(const LtProblem&) const = default;
};

// The largest power of two up to 256 that divides every address given (nullptr ignored).
int common_alignment(std::initializer_list<const void*> ptrs);

class LtMatmul {
 public:
  LtMatmul();
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  // Queues the product on the context's stream. `bias` is read for the bias epilogues ([n] values of
  // D's type); with beta 0, D's contents are not read.
  void run(rt::KernelContext& ctx, const LtProblem& p, const void* a, const void* b, void* d,
           const void* bias, float alpha, float beta) const;

 private:
  struct Plan;
  Plan& plan(const LtProblem& p, const void* bias) const;
  mutable std::mutex mu_;
  mutable std::map<LtProblem, std::unique_ptr<Plan>> plans_;
};

}  // namespace tessera::cuda
