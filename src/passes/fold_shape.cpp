// fold_shape (basic): Shape and Size of a value whose shape the checker knows statically become
// initializers. Exporters compute reshape targets through Shape -> Gather -> Concat chains; once Shape is
// a constant, fold_constants folds the rest of the chain.
#include <algorithm>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// The dims Shape returns: [start, end) of the input's dims, clamped as Shape-15 clamps them.
std::vector<int64_t> shape_slice(const ir::Node& n, const std::vector<int64_t>& dims) {
  auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t start = clamp(attr_int(n, "start", 0));
  int64_t end = clamp(attr_int(n, "end", rank));
  if (end <= start) return {};
  return {dims.begin() + start, dims.begin() + end};
}

bool replace_by_constant(RuleContext& ctx, size_t i, ir::Tensor t) {
  t.name = ctx.graph.nodes[i].outputs[0];
  ctx.graph.initializers.push_back(std::move(t));
  ctx.graph.nodes.erase(ctx.graph.nodes.begin() + static_cast<ptrdiff_t>(i));
  keep_type_cache(ctx);
  return true;
}

bool fold_shape(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  bool is_shape = is_op(n, "Shape"), is_size = is_op(n, "Size");
  if (!is_shape && !is_size) return false;
  if (n.inputs.empty() || n.outputs.size() != 1 || is_graph_output(ctx.graph, n.outputs[0])) return false;
  auto dims = static_shape(ctx, n.inputs[0]);
  if (!dims) return false;
  if (is_size) {
    int64_t count = 1;
    for (int64_t d : *dims) count *= d;
    return replace_by_constant(ctx, i, ir::make_tensor<int64_t>("", ir::DataType::kInt64, {}, {count}));
  }
  auto values = shape_slice(n, *dims);
  auto len = static_cast<int64_t>(values.size());
  return replace_by_constant(ctx, i, ir::make_tensor<int64_t>("", ir::DataType::kInt64, {len}, values));
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_shape) {
  reg.add({"fold_shape", tessera::passes::OptLevel::kBasic, 20, tessera::passes::fold_shape});
}
