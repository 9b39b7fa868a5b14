// com.tessera MatMulBias: Y = MatMul(A, B) + bias for a 2-D B [K, N] and a 1-D bias [N], A of rank 2 or
// more. The `layout` level fuses a linear layer's MatMul and bias Add into it (fuse_matmul_bias.cpp) when
// A has more than two axes, where Gemm (2-D only) cannot take them: the CPU kernel adds the bias in the
// product's epilogue instead of a second pass over the output.
#include "ops/fused/matmul_bias.h"

#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/layout/blocked.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace tessera::ops::fused {

void infer_matmul_bias(InferenceContext& ctx) {
  const Shape* a = input_shape(ctx, 0);
  const Shape* b = input_shape(ctx, 1);
  const Shape* bias = input_shape(ctx, 2);
  if (a && a->size() < 2) ctx.fail_input(0, fmt::format("A must have rank 2 or more, got {}", a->size()));
  if (b && b->size() != 2) ctx.fail_input(1, fmt::format("B must be [K, N], got rank {}", b->size()));
  if (bias && bias->size() != 1)
    ctx.fail_input(2, fmt::format("bias must be [N], got rank {}", bias->size()));
  if (!a || !b) return propagate_elem(ctx, 0, 0, std::nullopt);
  const Dim &k = a->back(), &kb = (*b)[0], &n = (*b)[1];
  if (k.is_static() && kb.is_static() && k.value != kb.value)
    ctx.fail(fmt::format("A {} has {} columns but B {} has {} rows", ir::shape_to_string(*a), k.value,
                         ir::shape_to_string(*b), kb.value));
  if (bias && (*bias)[0].is_static() && n.is_static() && (*bias)[0].value != n.value)
    ctx.fail_input(2, fmt::format("bias has {} values but B has {} columns", (*bias)[0].value, n.value));
  Shape out(a->begin(), a->end() - 1);
  out.push_back(n);
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace tessera::ops::fused

TESSERA_REGISTER_OPS(fused_matmul_bias) {
  reg.add(
      OpSchema("MatMulBias", 1, tessera::ops::layout::kDomain)
          .category(Category::kLinearAlgebra)
          .doc("A linear layer: Y = MatMul(A, B) + bias, with B [K, N] and bias [N] added to every row; A "
               "[..., M, K] of rank 2 or more.")
          .input("A", "T")
          .input("B", "T")
          .input("bias", "T")
          .output("Y", "T")
          .types("T", types::tensors({"float16", "float", "double"}))
          .infer(tessera::ops::fused::infer_matmul_bias));
}
