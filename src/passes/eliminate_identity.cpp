// eliminate_identity (basic): Identity, and Dropout as inference runs it (training_mode absent or a
// constant false, ratio irrelevant then), pass their input through; their readers read the input.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// Dropout is the identity unless training_mode (input 2, opset 12+) may be true; its mask output
// must have no reader, since removing the node would leave it undefined.
bool is_inference_dropout(const ir::Graph& g, const ir::Node& n) {
  if (!is_op(n, "Dropout")) return false;
  if (n.outputs.size() > 1 && !n.outputs[1].empty() && is_used(g, n.outputs[1])) return false;
  if (n.inputs.size() < 3 || n.inputs[2].empty()) return true;
  auto mode = constant_doubles(g, n.inputs[2]);
  return mode && mode->size() == 1 && (*mode)[0] == 0;
}

bool eliminate_identity(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  if (!is_op(n, "Identity") && !is_inference_dropout(ctx.graph, n)) return false;
  if (n.inputs.empty() || n.outputs.empty()) return false;
  std::string input = n.inputs[0];
  std::vector<std::string> outputs = n.outputs;
  ctx.graph.nodes[i].outputs.resize(1);  // drops Dropout's unread mask
  if (bypass_node(ctx.graph, i, input)) {
    keep_type_cache(ctx);  // every remaining value keeps its type
    return true;
  }
  ctx.graph.nodes[i].outputs = std::move(outputs);
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(eliminate_identity) {
  reg.add({"eliminate_identity", tessera::passes::OptLevel::kBasic, 30, tessera::passes::eliminate_identity});
}
