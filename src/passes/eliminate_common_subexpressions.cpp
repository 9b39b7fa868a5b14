// eliminate_common_subexpressions (basic): a node computing exactly what an earlier node computes (same
// operator, domain, attributes and inputs) is removed and its readers read the earlier node's outputs.
// Random operators are excluded (two draws are two different values), and so are nodes with subgraphs
// (comparing bodies is not worth it) and nodes whose outputs are graph outputs (the interface keeps its
// names).
#include <algorithm>
#include <array>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool is_random(const ir::Node& n) {
  static constexpr std::array<std::string_view, 6> kOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"};
  return std::find(kOps.begin(), kOps.end(), n.op_type) != kOps.end();
}

bool candidate(const ir::Graph& g, const ir::Node& n) {
  if (is_random(n) || has_subgraph(n) || n.outputs.empty()) return false;
  for (const auto& out : n.outputs)
    if (out.empty() || is_graph_output(g, out)) return false;
  return true;
}

bool same_computation(const ir::Node& a, const ir::Node& b) {
  return a.op_type == b.op_type && a.inputs == b.inputs &&
         ir::canonical_domain(a.domain) == ir::canonical_domain(b.domain) && a.overload == b.overload &&
         a.outputs.size() == b.outputs.size() && a.attributes == b.attributes;
}

bool eliminate_common_subexpressions(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  if (!candidate(ctx.graph, n)) return false;
  for (size_t j = 0; j < i; ++j) {
    const ir::Node& earlier = ctx.graph.nodes[j];
    if (!same_computation(earlier, n) || has_subgraph(earlier)) continue;
    // An output the earlier node leaves out cannot stand in for one this node reads.
    bool covers = true;
    for (size_t k = 0; k < n.outputs.size(); ++k) covers &= !earlier.outputs[k].empty();
    if (!covers) continue;
    std::vector<std::string> from = n.outputs, to = earlier.outputs;
    ctx.graph.nodes.erase(ctx.graph.nodes.begin() + static_cast<ptrdiff_t>(i));
    for (size_t k = 0; k < from.size(); ++k) replace_uses(ctx.graph, from[k], to[k]);
    return true;
  }
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(eliminate_common_subexpressions) {
  reg.add({"eliminate_common_subexpressions", tessera::passes::OptLevel::kBasic, 110,
           tessera::passes::eliminate_common_subexpressions});
}
