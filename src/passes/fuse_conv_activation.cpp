// fuse_conv_activation (extended): Conv followed by an elementwise activation (Relu, Clip, LeakyRelu,
// Sigmoid, HardSigmoid, Tanh) becomes ONNX Runtime's com.microsoft FusedConv, which applies the
// activation to each output as it is produced instead of in a second pass over memory. The activation's
// parameters go into activation_params as ONNX Runtime orders them: LeakyRelu [alpha], Clip [min, max],
// HardSigmoid [alpha, beta].
#include <array>
#include <limits>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// Clip's bounds: attributes before opset 11, optional constant inputs from 11 on.
std::optional<std::vector<float>> clip_params(const RuleContext& ctx, const ir::Node& n) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (onnx_opset(ctx.model) < 11)
    return std::vector<float>{attr_float(n, "min", lo), attr_float(n, "max", hi)};
  std::array<float*, 2> bounds = {&lo, &hi};
  for (size_t k = 1; k < 3; ++k) {
    if (k >= n.inputs.size() || n.inputs[k].empty()) continue;
    auto v = constant_scalar(ctx.graph, n.inputs[k]);
    if (!v) return std::nullopt;
    *bounds[k - 1] = static_cast<float>(*v);
  }
  return std::vector<float>{lo, hi};
}

// The activation's parameters, or nullopt when `n` is not a supported activation.
std::optional<std::vector<float>> activation_params(const RuleContext& ctx, const ir::Node& n) {
  if (!ir::canonical_domain(n.domain).empty()) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return std::vector<float>{};
  if (op == "LeakyRelu") return std::vector<float>{attr_float(n, "alpha", 0.01f)};
  if (op == "HardSigmoid")
    return std::vector<float>{attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)};
  if (op == "Clip") return clip_params(ctx, n);
  return std::nullopt;
}

bool fuse_conv_activation(RuleContext& ctx, size_t i) {
  const ir::Node& act = ctx.graph.nodes[i];
  if (act.inputs.empty() || act.outputs.size() != 1) return false;
  auto params = activation_params(ctx, act);
  if (!params) return false;
  auto p = producer(ctx.graph, act.inputs[0]);
  if (!p || !is_op(ctx.graph.nodes[*p], "Conv") || sole_consumer(ctx.graph, act.inputs[0]) != i) return false;
  const ir::Node& conv = ctx.graph.nodes[*p];
  if (elem_type(ctx, conv.inputs[0]) != ir::DataType::kFloat) return false;

  ir::Node fused = conv;
  fused.op_type = "FusedConv";
  fused.domain = "com.microsoft";
  fused.outputs = act.outputs;
  fused.attributes.push_back(ir::Attribute::of_string("activation", act.op_type));
  if (!params->empty()) fused.attributes.push_back(ir::Attribute::of_floats("activation_params", *params));
  if (!kernel_available(ctx.model, fused)) return false;
  ensure_opset_import(ctx.model, "com.microsoft", 1);
  replace_with(ctx.graph, i, std::move(fused), {conv.id, act.id});
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_conv_activation) {
  reg.add(
      {"fuse_conv_activation", tessera::rt::OptLevel::kExtended, 70, tessera::passes::fuse_conv_activation});
}
