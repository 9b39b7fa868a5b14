// com.tessera MatMulBiasGelu: Y = GELU_tanh(MatMul(A, B) + bias), the tanh approximation of GELU,
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), for a 2-D B [K, N] and a 1-D bias [N], A of rank 2 or
// more. The fuse_matmul_bias_gelu rule (CUDA targets) makes it from a MatMulBias followed by the tanh GELU
// (GPT-2's MLP) so that the GPU applies bias and activation in the GEMM's epilogue (cuBLASLt's GELU_BIAS,
// which computes the tanh form). Never the erf GELU: the two differ by up to 4.7e-4 (5% at x = -2.7).
#include "ops/fused/matmul_bias.h"
#include "ops/layout/blocked.h"
#include "ops/registry.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(fused_matmul_bias_gelu) {
  reg.add(OpSchema("MatMulBiasGelu", 1, tessera::ops::layout::kDomain)
              .category(Category::kLinearAlgebra)
              .doc("A linear layer and the tanh approximation of GELU: Y = 0.5 x (1 + tanh(sqrt(2/pi) (x + "
                   "0.044715 x^3))), x = MatMul(A, B) + bias, with B [K, N] and bias [N] added to every "
                   "row; A [..., M, K] of rank 2 or more.")
              .input("A", "T")
              .input("B", "T")
              .input("bias", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float16", "bfloat16", "float", "double"}))
              .infer(tessera::ops::fused::infer_matmul_bias));
}
