// eliminate_dead_nodes (basic): a node none of whose outputs is read (by a node, a subgraph or the graph
// outputs) is removed, with the initializers only it read. Only operators with a known schema are
// removed: a custom operator may have effects outside the graph.
#include <unordered_set>

#include "ops/registry.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// Every name a graph reads. Built once per pass over a graph (the rule is asked about each node in
// turn); removing dead nodes only removes reads, so a set that is a little stale errs on keeping nodes,
// and the next sweep catches what it missed.
struct ReadSet {
  const ir::Graph* graph = nullptr;
  size_t nodes = 0;
  ir::NodeId next_id = 0;
  std::unordered_set<std::string> names;
};

// Names read inside a subgraph, shadowed or not (over-approximating only keeps more nodes).
void add_reads(const ir::Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& o : g.outputs) names.insert(o.name);
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) names.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) add_reads(*sub, names);
  }
}

thread_local ReadSet cache;

const std::unordered_set<std::string>& reads(const ir::Graph& g, size_t node_index) {
  bool fresh = cache.graph == &g && cache.nodes == g.nodes.size() && cache.next_id == g.next_node_id;
  if (node_index == 0 || !fresh) {
    cache.names.clear();
    add_reads(g, cache.names);
  }
  cache.graph = &g;
  cache.nodes = g.nodes.size();
  cache.next_id = g.next_node_id;
  return cache.names;
}

bool has_known_schema(const ir::Model& m, const ir::Node& n) {
  auto v = m.opset_version(n.domain);
  return v && ops::OpRegistry::global().find(n.domain, n.op_type, static_cast<int>(*v)) != nullptr;
}

bool eliminate_dead_nodes(RuleContext& ctx, size_t i) {
  const auto& read = reads(ctx.graph, i);
  const ir::Node& n = ctx.graph.nodes[i];
  if (n.outputs.empty()) return false;
  for (const auto& out : n.outputs)
    if (!out.empty() && read.count(out)) return false;
  if (!has_known_schema(ctx.model, n)) return false;
  remove_nodes(ctx.graph, {n.id});
  cache.nodes = ctx.graph.nodes.size();  // the set still covers the remaining nodes
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(eliminate_dead_nodes) {
  reg.add({"eliminate_dead_nodes", tessera::passes::OptLevel::kBasic, 1000,
           tessera::passes::eliminate_dead_nodes});
}
