// fold_conv_batchnorm (basic): BatchNormalization (inference) of a Conv's output, with constant
// statistics, is a per-channel scale s = scale / sqrt(var + eps) and shift; it folds into the Conv as
// W' = W * s (per output channel) and B' = (B - mean) * s + bias.
#include <cmath>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// Inference BatchNormalization: one output, no training mode, spatial (per-channel) statistics.
bool is_inference_batchnorm(const ir::Node& n) {
  if (!is_op(n, "BatchNormalization") || n.inputs.size() != 5) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty()) return false;
  return attr_int(n, "training_mode", 0) == 0 && attr_int(n, "spatial", 1) == 1;
}

bool fold_conv_batchnorm(RuleContext& ctx, size_t i) {
  const ir::Node& bn = ctx.graph.nodes[i];
  if (!is_inference_batchnorm(bn)) return false;
  auto conv = foldable_conv(ctx.graph, bn.inputs[0], i);
  if (!conv) return false;
  const auto c = static_cast<size_t>(conv->channels());
  std::vector<std::vector<double>> p;  // scale, bias, mean, var
  for (size_t k = 1; k < 5; ++k) {
    auto v = constant_doubles(ctx.graph, bn.inputs[k]);
    if (!v || v->size() != c) return false;
    p.push_back(std::move(*v));
  }
  double eps = attr_float(bn, "epsilon", 1e-5f);
  size_t per_channel = conv->w.size() / c;
  for (size_t oc = 0; oc < c; ++oc) {
    double s = p[0][oc] / std::sqrt(p[3][oc] + eps);
    for (size_t k = 0; k < per_channel; ++k) conv->w[oc * per_channel + k] *= s;
    conv->b[oc] = (conv->b[oc] - p[2][oc]) * s + p[1][oc];
  }
  replace_folded_conv(ctx.graph, *conv, i);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_conv_batchnorm) {
  reg.add(
      {"fold_conv_batchnorm", tessera::passes::OptLevel::kBasic, 80, tessera::passes::fold_conv_batchnorm});
}
