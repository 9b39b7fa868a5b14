// fuse_conv_activation (extended): Conv followed by an elementwise activation (Relu, Clip, LeakyRelu,
// Sigmoid, HardSigmoid, Tanh) becomes ONNX Runtime's com.microsoft FusedConv, which applies the
// activation to each output as it is produced instead of in a second pass over memory. The activation's
// parameters go into activation_params as ONNX Runtime orders them: LeakyRelu [alpha], Clip [min, max],
// HardSigmoid [alpha, beta].
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool fuse_conv_activation(RuleContext& ctx, size_t i) {
  const ir::Node& act = ctx.graph.nodes[i];
  if (act.inputs.empty() || act.outputs.size() != 1) return false;
  auto params = fusable_activation(ctx, act);
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
  if (!kernel_available(ctx, fused)) return false;
  ensure_opset_import(ctx.model, "com.microsoft", 1);
  replace_with(ctx.graph, i, std::move(fused), {conv.id, act.id});
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_conv_activation) {
  reg.add({"fuse_conv_activation", tessera::passes::OptLevel::kExtended, 70,
           tessera::passes::fuse_conv_activation});
}
