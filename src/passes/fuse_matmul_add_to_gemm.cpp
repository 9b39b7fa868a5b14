// fuse_matmul_add_to_gemm (extended): a 2-D MatMul whose only reader adds a bias that broadcasts to the
// product without enlarging it (a [N] or [1,N] row, an [M,1] column, [M,N]) is one Gemm, which the
// backends run as a single matrix product with the bias in the accumulator.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

std::optional<ir::Shape> rank2_shape(const RuleContext& ctx, const std::string& value) {
  auto t = value_type(ctx, value);
  if (!t || !t->is_tensor() || !t->shape || t->shape->size() != 2) return std::nullopt;
  return t->shape;
}

// Whether C broadcasts unidirectionally to the [M, N] product (Gemm's rule for its C input).
bool bias_fits(const RuleContext& ctx, const std::string& c, const ir::Dim& m, const ir::Dim& n) {
  auto dims = static_shape(ctx, c);
  if (!dims || dims->size() > 2) return false;
  const ir::Dim* y[2] = {&m, &n};
  size_t lead = 2 - dims->size();
  for (size_t k = 0; k < dims->size(); ++k) {
    int64_t d = (*dims)[k];
    const ir::Dim& want = *y[lead + k];
    if (d != 1 && !(want.is_static() && want.value == d)) return false;
  }
  return true;
}

bool fuse_matmul_add_to_gemm(RuleContext& ctx, size_t i) {
  const ir::Node& add = ctx.graph.nodes[i];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || onnx_opset(ctx.model) < 7) return false;
  for (size_t side = 0; side < 2; ++side) {
    auto p = producer(ctx.graph, add.inputs[side]);
    if (!p || !is_op(ctx.graph.nodes[*p], "MatMul") || sole_consumer(ctx.graph, add.inputs[side]) != i)
      continue;
    const ir::Node& mm = ctx.graph.nodes[*p];
    auto a = rank2_shape(ctx, mm.inputs[0]);
    auto b = rank2_shape(ctx, mm.inputs[1]);
    const std::string& c = add.inputs[1 - side];
    if (!a || !b || !is_compute_float(elem_type(ctx, mm.inputs[0])) ||
        elem_type(ctx, c) != elem_type(ctx, mm.inputs[0]))
      continue;
    if (!bias_fits(ctx, c, (*a)[0], (*b)[1])) continue;

    ir::Node gemm;
    gemm.op_type = "Gemm";
    gemm.name = mm.name.empty() ? add.name : mm.name;
    gemm.inputs = {mm.inputs[0], mm.inputs[1], c};
    gemm.outputs = add.outputs;
    if (!kernel_available(ctx, gemm)) return false;
    replace_with(ctx.graph, i, std::move(gemm), {mm.id, add.id});
    return true;
  }
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_matmul_add_to_gemm) {
  reg.add({"fuse_matmul_add_to_gemm", tessera::passes::OptLevel::kExtended, 30,
           tessera::passes::fuse_matmul_add_to_gemm});
}
