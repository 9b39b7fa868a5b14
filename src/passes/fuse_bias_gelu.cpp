// fuse_bias_gelu (extended): Gelu (erf form) of x + b, with b a 1-D constant along x's last axis, becomes
// ONNX Runtime's com.microsoft BiasGelu, which adds the bias inside the activation loop.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool is_erf_gelu(const ir::Node& n) {
  if (n.op_type != "Gelu" || n.inputs.size() != 1) return false;
  if (n.domain == "com.microsoft") return true;
  const ir::Attribute* a = n.attr("approximate");
  return ir::canonical_domain(n.domain).empty() && (!a || a->s == "none");
}

// The bias side of the Add: a 1-D constant as long as the other side's static last dimension.
std::optional<size_t> bias_side(const RuleContext& ctx, const ir::Node& add) {
  for (size_t side = 0; side < 2; ++side) {
    const ir::Tensor* b = constant_value(ctx.graph, add.inputs[side]);
    auto x = value_type(ctx, add.inputs[1 - side]);
    if (!b || b->dims.size() != 1 || !x || !x->shape || x->shape->empty()) continue;
    if (x->shape->back().is_static() && x->shape->back().value == b->dims[0] && x->elem == b->dtype)
      return side;
  }
  return std::nullopt;
}

bool fuse_bias_gelu(RuleContext& ctx, size_t i) {
  const ir::Node& gelu = ctx.graph.nodes[i];
  if (!is_erf_gelu(gelu)) return false;
  auto p = producer(ctx.graph, gelu.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Add") || sole_consumer(ctx.graph, gelu.inputs[0]) != i) return false;
  const ir::Node& add = ctx.graph.nodes[*p];
  if (add.inputs.size() != 2) return false;
  auto side = bias_side(ctx, add);
  if (!side) return false;

  ir::Node fused;
  fused.op_type = "BiasGelu";
  fused.domain = "com.microsoft";
  fused.name = gelu.name;
  fused.inputs = {add.inputs[1 - *side], add.inputs[*side]};
  fused.outputs = gelu.outputs;
  if (!kernel_available(ctx, fused)) return false;
  ensure_opset_import(ctx.model, "com.microsoft", 1);
  replace_with(ctx.graph, i, std::move(fused), {add.id, gelu.id});
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_bias_gelu) {
  reg.add({"fuse_bias_gelu", tessera::passes::OptLevel::kExtended, 60, tessera::passes::fuse_bias_gelu});
}
