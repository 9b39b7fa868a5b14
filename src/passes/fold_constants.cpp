// fold_constants (basic): a node whose inputs are all constants is computed once, here, by the target's
// evaluator (the runtime runs the node's CPU kernel directly, without a session), and replaced by
// initializers holding its outputs. Constant nodes become
// initializers outright, which is what lets every other rule treat "constant" as "initializer".
#include <algorithm>
#include <array>
#include <string_view>

#include "check/check_util.h"
#include "check/checker.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// Outputs above this size stay computed at run time: folding would bloat the model for little gain.
constexpr int64_t kMaxFoldBytes = int64_t{64} << 20;

// Operators whose result is not a function of their inputs, or that are better left in place:
// DequantizeLinear of an int8 weight would quadruple it and hide the quantized pattern from fusions.
bool never_fold(const ir::Node& n) {
  static constexpr std::array<std::string_view, 7> kOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Bernoulli",    "Multinomial",   "DequantizeLinear"};
  if (!ir::canonical_domain(n.domain).empty()) return false;
  return std::find(kOps.begin(), kOps.end(), n.op_type) != kOps.end();
}

bool constant_node_to_initializer(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  if (n.outputs.size() != 1 || is_graph_output(ctx.graph, n.outputs[0])) return false;
  auto t = check::constant_value(n);
  if (!t) return false;
  t->name = n.outputs[0];
  ctx.graph.initializers.push_back(std::move(*t));
  ctx.graph.nodes.erase(ctx.graph.nodes.begin() + static_cast<ptrdiff_t>(i));
  keep_type_cache(ctx);
  return true;
}

// The one-node model that computes `n` from the constants it reads.
ir::Model single_node_model(const RuleContext& ctx, const ir::Node& n) {
  ir::Model m;
  m.ir_version = ctx.model.ir_version;
  m.opset_imports = ctx.model.opset_imports;
  ir::Node copy = n;
  copy.id = 0;
  m.graph.add_node(std::move(copy));
  for (const auto& in : n.inputs)
    if (!in.empty() && !m.graph.find_initializer(in))
      m.graph.initializers.push_back(*constant_value(ctx.graph, in));
  for (const auto& out : n.outputs)
    if (!out.empty()) m.graph.outputs.push_back({out, {}, {}, {}});
  return m;
}

// Whether every output's size is known from the constants and small enough to keep in the model.
bool outputs_small(const ir::Model& m) {
  auto checked = check::check_model(m);
  if (checked.diagnostics.has_errors()) return false;
  for (const auto& out : m.graph.outputs) {
    auto it = checked.value_types.find(out.name);
    if (it == checked.value_types.end() || !it->second.is_tensor() || !it->second.shape) return false;
    auto count = ir::shape_numel(*it->second.shape);
    int64_t bits = std::max(ir::dtype_bits(it->second.elem), 8);  // strings: at least a byte each
    if (!count || *count > kMaxFoldBytes / (bits / 8)) return false;
  }
  return true;
}

// Runs the node; nullopt when it cannot be run here (no evaluator, no kernel, a kernel error).
std::optional<std::vector<ir::Tensor>> evaluate(const RuleContext& ctx, const ir::Model& m) {
  if (!ctx.target.evaluator) return std::nullopt;
  const ir::Node& n = m.graph.nodes[0];
  std::vector<const ir::Tensor*> inputs;
  for (const auto& in : n.inputs) inputs.push_back(in.empty() ? nullptr : m.graph.find_initializer(in));
  return ctx.target.evaluator->evaluate(m, n, inputs);
}

bool all_inputs_constant(const ir::Graph& g, const ir::Node& n) {
  for (const auto& in : n.inputs)
    if (!in.empty() && !constant_value(g, in)) return false;
  return true;
}

bool fold_constants(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  if (is_op(n, "Constant")) return constant_node_to_initializer(ctx, i);
  if (n.inputs.empty() || never_fold(n) || has_subgraph(n) || !all_inputs_constant(ctx.graph, n))
    return false;
  // A graph output produced by a node stays produced by a node: the interface keeps its shape.
  for (const auto& out : n.outputs)
    if (is_graph_output(ctx.graph, out)) return false;
  ir::Model m = single_node_model(ctx, n);
  if (!outputs_small(m)) return false;
  auto values = evaluate(ctx, m);
  if (!values) return false;

  std::vector<std::string> inputs = n.inputs;
  size_t k = 0;
  for (const auto& out : n.outputs) {
    if (out.empty()) continue;
    ir::Tensor t = std::move((*values)[k++]);
    t.name = out;
    ctx.graph.initializers.push_back(std::move(t));
  }
  ctx.graph.nodes.erase(ctx.graph.nodes.begin() + static_cast<ptrdiff_t>(i));
  drop_unused_initializers(ctx.graph, inputs);
  keep_type_cache(ctx);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_constants) {
  reg.add({"fold_constants", tessera::passes::OptLevel::kBasic, 10, tessera::passes::fold_constants});
}
