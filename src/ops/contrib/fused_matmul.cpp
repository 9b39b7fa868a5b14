// FusedMatMul (com.microsoft 1): alpha * op(A) @ op(B), the fusion of MatMul with a scale and transposes.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

// Swaps the last two axes when `trans` is set; a 1-D operand has nothing to transpose.
Shape maybe_transpose(Shape s, bool trans) {
  if (trans && s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

void infer_fused_matmul(InferenceContext& ctx) {
  ir::DataType t = input_elem(ctx, 0);
  const Shape* a0 = input_shape(ctx, 0);
  const Shape* b0 = input_shape(ctx, 1);
  // transBatch moves the batch axes next to the matrix axes; the runtime resolves that layout, so the
  // output shape is only inferred in the plain case.
  if (!a0 || !b0 || ctx.attr_int("transBatchA", 0) || ctx.attr_int("transBatchB", 0)) {
    set_output(ctx, 0, t, std::nullopt);
    return;
  }
  if (a0->empty() || b0->empty()) ctx.fail("FusedMatMul inputs must have rank 1 or more");
  Shape a = maybe_transpose(*a0, ctx.attr_int("transA", 0) != 0);
  Shape b = maybe_transpose(*b0, ctx.attr_int("transB", 0) != 0);
  bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), Dim::of(1));
  if (b_vec) b.push_back(Dim::of(1));
  const Dim& k_a = a.back();
  const Dim& k_b = b[b.size() - 2];
  if (k_a.is_static() && k_b.is_static() && k_a.value != k_b.value) {
    ctx.fail(fmt::format("inner dimensions differ: op(A) {} has K = {} but op(B) {} has K = {}",
                         ir::shape_to_string(a), k_a.value, ir::shape_to_string(b), k_b.value));
  }
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  auto batch = broadcast_shapes(ctx, batch_a, batch_b);
  Shape y = *batch;
  if (!a_vec) y.push_back(a[a.size() - 2]);
  if (!b_vec) y.push_back(b.back());
  set_output(ctx, 0, t, std::move(y));
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_fused_matmul) {
  reg.add(OpSchema("FusedMatMul", 1, "com.microsoft")
              .category(Category::kLinearAlgebra)
              .doc("Matrix product alpha * op(A) @ op(B) with numpy-style batching, where op optionally "
                   "transposes "
                   "the last two axes (transA, transB).")
              .input("A", "T")
              .input("B", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float", "float16", "double", "bfloat16"}))
              .attr("alpha", 1.0f)
              .attr("transA", int64_t{0})
              .attr("transB", int64_t{0})
              .attr("transBatchA", int64_t{0})
              .attr("transBatchB", int64_t{0})
              .infer(infer_fused_matmul));
}
