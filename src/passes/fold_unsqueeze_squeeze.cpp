// fold_unsqueeze_squeeze (basic): Squeeze of exactly the axes an Unsqueeze just inserted gives back the
// Unsqueeze's input; the Squeeze's readers read that input (and the Unsqueeze goes when unread).
#include <algorithm>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// The node's axes (attribute before opset 13, constant input 1 from 13 on).
std::optional<std::vector<int64_t>> axes_of(const RuleContext& ctx, const ir::Node& n) {
  if (onnx_opset(ctx.model) < 13) return attr_ints(n, "axes");
  if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::nullopt;
  return constant_ints(ctx.graph, n.inputs[1]);
}

// Axes made non-negative and sorted, for a tensor of `rank` (only needed when some axis is negative).
std::optional<std::vector<int64_t>> normalized(std::vector<int64_t> axes, std::optional<int64_t> rank) {
  for (int64_t& a : axes) {
    if (a >= 0) continue;
    if (!rank) return std::nullopt;
    a += *rank;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::optional<int64_t> rank_of(const RuleContext& ctx, const std::string& value) {
  auto t = value_type(ctx, value);
  if (!t || !t->is_tensor() || !t->shape) return std::nullopt;
  return static_cast<int64_t>(t->shape->size());
}

bool fold_unsqueeze_squeeze(RuleContext& ctx, size_t i) {
  const ir::Node& sq = ctx.graph.nodes[i];
  if (!is_op(sq, "Squeeze") || sq.inputs.empty() || sq.outputs.size() != 1) return false;
  auto p = producer(ctx.graph, sq.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Unsqueeze")) return false;
  const ir::Node& unsq = ctx.graph.nodes[*p];
  auto a_sq = axes_of(ctx, sq), a_unsq = axes_of(ctx, unsq);
  if (!a_sq || !a_unsq || a_sq->empty()) return false;
  std::optional<int64_t> rank;
  if (auto r = rank_of(ctx, unsq.inputs[0])) rank = *r + static_cast<int64_t>(a_unsq->size());
  auto s1 = normalized(*a_sq, rank), s2 = normalized(*a_unsq, rank);
  if (!s1 || !s2 || *s1 != *s2) return false;

  std::string x = unsq.inputs[0];
  ir::NodeId unsq_id = unsq.id;
  std::string u = unsq.outputs[0];
  std::vector<std::string> inputs = sq.inputs;
  if (!bypass_node(ctx.graph, i, x)) return false;
  if (!is_used(ctx.graph, u)) remove_nodes(ctx.graph, {unsq_id});
  drop_unused_initializers(ctx.graph, inputs);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_unsqueeze_squeeze) {
  reg.add({"fold_unsqueeze_squeeze", tessera::passes::OptLevel::kBasic, 50,
           tessera::passes::fold_unsqueeze_squeeze});
}
