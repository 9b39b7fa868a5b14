// fold_conv_add (basic): Conv followed by the addition of a constant per-channel tensor (a bias an
// exporter kept separate) becomes a Conv with B' = B + c.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool fold_conv_add(RuleContext& ctx, size_t i) {
  const ir::Node& add = ctx.graph.nodes[i];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  for (size_t side = 0; side < 2; ++side) {
    auto conv = foldable_conv(ctx.graph, add.inputs[side], i);
    if (!conv || elem_type(ctx, add.inputs[1 - side]) != conv->dtype) continue;
    auto c = per_channel(ctx.graph, add.inputs[1 - side], conv->rank(), conv->channels());
    if (!c) continue;
    for (size_t oc = 0; oc < c->size(); ++oc) conv->b[oc] += (*c)[oc];
    replace_folded_conv(ctx.graph, *conv, i);
    return true;
  }
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_conv_add) {
  reg.add({"fold_conv_add", tessera::passes::OptLevel::kBasic, 90, tessera::passes::fold_conv_add});
}
