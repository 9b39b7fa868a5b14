// Gemm: Y = alpha * A' * B' + beta * C, where A' and B' are optionally transposed 2-D matrices.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_gemm(InferenceContext& ctx) {
  require_rank(ctx, 0, 2, "input 0 ('A')");
  require_rank(ctx, 1, 2, "input 1 ('B')");
  const Shape* a = input_shape(ctx, 0);
  const Shape* b = input_shape(ctx, 1);
  bool ta = ctx.attr_int("transA", 0) != 0;
  bool tb = ctx.attr_int("transB", 0) != 0;
  Dim m = a ? (*a)[ta ? 1 : 0] : Dim::unknown();
  Dim n = b ? (*b)[tb ? 0 : 1] : Dim::unknown();
  if (a && b) {
    const Dim& ka = (*a)[ta ? 0 : 1];
    const Dim& kb = (*b)[tb ? 1 : 0];
    if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
      ctx.fail(fmt::format("A{} {} gives K = {} but B{} {} gives K = {}; they must match",
                           ta ? " (transposed)" : "", ir::shape_to_string(*a), ka.value,
                           tb ? " (transposed)" : "", ir::shape_to_string(*b), kb.value));
    }
  }
  // C must broadcast (one way) onto [M, N].
  if (const Shape* c = ctx.has_input(2) ? input_shape(ctx, 2) : nullptr) {
    if (c->size() > 2)
      ctx.fail_input(2, "input 2 ('C') must have rank 2 or less, got " + ir::shape_to_string(*c));
    Shape mn{m, n};
    for (size_t k = 0; k < c->size(); ++k) {
      const Dim& dc = (*c)[c->size() - 1 - k];
      const Dim& dy = mn[1 - k];
      if (dc.is_static() && dy.is_static() && dc.value != 1 && dc.value != dy.value) {
        ctx.fail_input(2, fmt::format("input 2 ('C') {} does not broadcast to the result [{},{}]",
                                      ir::shape_to_string(*c), m.to_string(), n.to_string()));
      }
    }
  }
  propagate_elem(ctx, 0, 0, Shape{m, n});
}

}  // namespace

TESSERA_REGISTER_OPS(nn_gemm) {
  const auto high = types::tensors({"float16", "float", "double", "uint32", "uint64", "int32", "int64"});
  for (int v : {1, 6, 7, 9, 11, 13}) {
    OpSchema s("Gemm", v);
    s.category(Category::kLinearAlgebra)
        .doc(
            "General matrix multiply: alpha * A * B + beta * C, with A and B optionally transposed and C "
            "broadcast to the [M, N] result.")
        .input("A", "T")
        .input("B", "T");
    if (v >= 11) {
      s.optional_input("C", "T");
    } else {
      s.input("C", "T");
    }
    s.output("Y", "T")
        .types("T", v < 9    ? types::kFloat
                    : v < 13 ? high
                             : types::concat({high, types::tensors({"bfloat16"})}))
        .attr("alpha", 1.0f)
        .attr("beta", 1.0f);
    if (v < 7) s.attr("broadcast", int64_t{0});
    s.attr("transA", int64_t{0}).attr("transB", int64_t{0}).infer(infer_gemm);
    reg.add(std::move(s));
  }
}
