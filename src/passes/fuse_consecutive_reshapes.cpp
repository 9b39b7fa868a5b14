// fuse_consecutive_reshapes (basic): Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 is a constant
// without zeros (a 0 copies a dimension of the intermediate shape, which x may not have); -1 is fine,
// since the element count does not change.
#include <algorithm>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool fuse_consecutive_reshapes(RuleContext& ctx, size_t i) {
  const ir::Node& r2 = ctx.graph.nodes[i];
  if (!is_op(r2, "Reshape") || r2.inputs.size() < 2) return false;
  auto p = producer(ctx.graph, r2.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Reshape")) return false;
  auto target = constant_ints(ctx.graph, r2.inputs[1]);
  if (!target || std::find(target->begin(), target->end(), 0) != target->end()) return false;
  const ir::Node& r1 = ctx.graph.nodes[*p];

  ir::Node fused = r2;
  fused.inputs[0] = r1.inputs[0];
  std::vector<ir::NodeId> gone = {r2.id};
  if (sole_consumer(ctx.graph, r1.outputs[0]) == i) gone.push_back(r1.id);
  replace_with(ctx.graph, i, std::move(fused), gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_consecutive_reshapes) {
  reg.add({"fuse_consecutive_reshapes", tessera::passes::OptLevel::kBasic, 70,
           tessera::passes::fuse_consecutive_reshapes});
}
