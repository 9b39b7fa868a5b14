// fuse_consecutive_transposes (basic): Transpose(Transpose(x, p1), p2) is Transpose(x, p) with
// p[i] = p1[p2[i]]; the second node is replaced by the composition (eliminate_nop then removes it when p
// is the identity) and the first goes when nothing else reads it.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool fuse_consecutive_transposes(RuleContext& ctx, size_t i) {
  const ir::Node& t2 = ctx.graph.nodes[i];
  if (!is_op(t2, "Transpose") || t2.inputs.size() != 1) return false;
  auto p = producer(ctx.graph, t2.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Transpose")) return false;
  const ir::Node& t1 = ctx.graph.nodes[*p];
  // Without perm, Transpose reverses the axes, which needs the rank: leave those alone.
  auto p1 = attr_ints(t1, "perm"), p2 = attr_ints(t2, "perm");
  if (!p1 || !p2 || p1->size() != p2->size()) return false;
  std::vector<int64_t> perm;
  for (int64_t axis : *p2) {
    if (axis < 0 || axis >= static_cast<int64_t>(p1->size())) return false;
    perm.push_back((*p1)[static_cast<size_t>(axis)]);
  }

  ir::Node fused = t2;
  fused.inputs = {t1.inputs[0]};
  fused.attr("perm")->ints = perm;
  ir::NodeId t1_id = t1.id, t2_id = t2.id;
  std::string mid = t1.outputs[0];
  std::vector<ir::NodeId> gone = {t2_id};
  if (sole_consumer(ctx.graph, mid) == i) gone.push_back(t1_id);
  replace_with(ctx.graph, i, std::move(fused), gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_consecutive_transposes) {
  reg.add({"fuse_consecutive_transposes", tessera::passes::OptLevel::kBasic, 60,
           tessera::passes::fuse_consecutive_transposes});
}
