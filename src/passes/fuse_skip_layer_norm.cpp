// fuse_skip_layer_norm (extended): the residual add feeding a layer normalisation over the last axis,
//   LayerNormalization(a + b, gamma, beta)
// with a and b of one 2-D or 3-D shape, becomes ONNX Runtime's com.microsoft SkipLayerNormalization. When
// the sum itself is read elsewhere (the next residual), the fused node returns it as its fourth output.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool is_layer_norm(const ir::Node& n) {
  bool standard = is_op(n, "LayerNormalization");
  bool contrib = n.op_type == "LayerNormalization" && n.domain == "com.microsoft";
  return (standard || contrib) && n.inputs.size() >= 2 && attr_int(n, "stash_type", 1) == 1;
}

// The statistics outputs are float in both forms but are only kept when nobody reads them.
bool stats_unread(const ir::Graph& g, const ir::Node& n) {
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty() && is_used(g, n.outputs[k])) return false;
  return true;
}

// a and b share a 2-D or 3-D shape whose last dimension is static and normalised (axis -1 or rank-1).
std::optional<int64_t> hidden_size(const RuleContext& ctx, const ir::Node& add, const ir::Node& ln) {
  auto a = value_type(ctx, add.inputs[0]);
  auto b = value_type(ctx, add.inputs[1]);
  if (!a || !b || !a->shape || !b->shape || *a->shape != *b->shape) return std::nullopt;
  // Unknown dimensions compare equal without being equal: [?,S,H] + [?,S,H] may broadcast.
  for (const auto& d : *a->shape)
    if (d.is_unknown()) return std::nullopt;
  auto rank = static_cast<int64_t>(a->shape->size());
  int64_t axis = attr_int(ln, "axis", -1);
  if ((rank != 2 && rank != 3) || (axis != -1 && axis != rank - 1)) return std::nullopt;
  if (!a->shape->back().is_static()) return std::nullopt;
  return a->shape->back().value;
}

// gamma (and beta) constant and 1-D of the hidden size: the fused node is placed where the Add was.
bool params_fit(const ir::Graph& g, const ir::Node& ln, int64_t hidden) {
  for (size_t k = 1; k < ln.inputs.size() && k < 3; ++k) {
    if (ln.inputs[k].empty()) continue;
    const ir::Tensor* t = constant_value(g, ln.inputs[k]);
    if (!t || t->dims != std::vector<int64_t>{hidden}) return false;
  }
  return true;
}

bool fuse_skip_layer_norm(RuleContext& ctx, size_t i) {
  const ir::Node& ln = ctx.graph.nodes[i];
  if (!is_layer_norm(ln) || !stats_unread(ctx.graph, ln)) return false;
  auto p = producer(ctx.graph, ln.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Add") || ctx.graph.nodes[*p].inputs.size() != 2) return false;
  const ir::Node& add = ctx.graph.nodes[*p];
  ir::DataType t = elem_type(ctx, add.inputs[0]);
  if (t != ir::DataType::kFloat && t != ir::DataType::kFloat16 && t != ir::DataType::kBFloat16) return false;
  auto hidden = hidden_size(ctx, add, ln);
  if (!hidden || !params_fit(ctx.graph, ln, *hidden)) return false;

  ir::Node sln;
  sln.op_type = "SkipLayerNormalization";
  sln.domain = "com.microsoft";
  sln.name = ln.name;
  sln.inputs = {add.inputs[0], add.inputs[1], ln.inputs[1]};
  if (ln.inputs.size() > 2 && !ln.inputs[2].empty()) sln.inputs.push_back(ln.inputs[2]);
  sln.outputs = {ln.outputs[0]};
  const std::string& sum = add.outputs[0];
  if (sole_consumer(ctx.graph, sum) != i) sln.outputs = {ln.outputs[0], "", "", sum};
  sln.attributes = {ir::Attribute::of_float("epsilon", attr_float(ln, "epsilon", 1e-5f))};
  if (!kernel_available(ctx, sln)) return false;
  ensure_opset_import(ctx.model, "com.microsoft", 1);
  replace_with(ctx.graph, *p, std::move(sln), {add.id, ln.id});
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_skip_layer_norm) {
  reg.add({"fuse_skip_layer_norm", tessera::passes::OptLevel::kExtended, 50,
           tessera::passes::fuse_skip_layer_norm});
}
