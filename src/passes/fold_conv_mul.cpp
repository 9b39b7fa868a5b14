// fold_conv_mul (basic): Conv followed by a multiplication by a constant per-channel tensor becomes a
// Conv with W' = W * c (per output channel) and B' = B * c.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool fold_conv_mul(RuleContext& ctx, size_t i) {
  const ir::Node& mul = ctx.graph.nodes[i];
  if (!is_op(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return false;
  for (size_t side = 0; side < 2; ++side) {
    auto conv = foldable_conv(ctx.graph, mul.inputs[side], i);
    if (!conv || elem_type(ctx, mul.inputs[1 - side]) != conv->dtype) continue;
    auto c = per_channel(ctx.graph, mul.inputs[1 - side], conv->rank(), conv->channels());
    if (!c) continue;
    size_t per_channel_w = conv->w.size() / c->size();
    for (size_t oc = 0; oc < c->size(); ++oc) {
      for (size_t k = 0; k < per_channel_w; ++k) conv->w[oc * per_channel_w + k] *= (*c)[oc];
      conv->b[oc] *= (*c)[oc];
    }
    replace_folded_conv(ctx.graph, *conv, i);
    return true;
  }
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_conv_mul) {
  reg.add({"fold_conv_mul", tessera::passes::OptLevel::kBasic, 100, tessera::passes::fold_conv_mul});
}
