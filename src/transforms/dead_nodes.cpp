#include "transforms/dead_nodes.h"

#include <fmt/format.h>

#include <unordered_set>

#include "ops/registry.h"

namespace tessera::transforms {

namespace {

// Names read inside a subgraph, shadowed or not (over-approximating only keeps more nodes).
void add_reads(const ir::Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& o : g.outputs) names.insert(o.name);
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) names.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) add_reads(*sub, names);
  }
}

bool has_known_schema(const ir::Model& m, const ir::Node& n) {
  auto v = m.opset_version(n.domain);
  return v && ops::OpRegistry::global().find(n.domain, n.op_type, static_cast<int>(*v)) != nullptr;
}

}  // namespace

int remove_dead_nodes(const ir::Model& m, ir::Graph& g, std::vector<std::string>& details) {
  std::unordered_set<std::string> read;
  for (const auto& o : g.outputs) read.insert(o.name);
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {  // file order is topological: readers come later
    const ir::Node& n = g.nodes[i];
    bool live = n.outputs.empty() || !has_known_schema(m, n);
    for (const auto& out : n.outputs) live |= !out.empty() && read.count(out) > 0;
    if (!live) {
      dead[i] = true;
      ++removed;
      details.push_back(fmt::format("remove_dead_nodes: node '{}' ({})", n.name, n.op_type));
      continue;
    }
    for (const auto& in : n.inputs) read.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) add_reads(*sub, read);
  }
  if (removed == 0) return 0;
  std::unordered_set<std::string> gone_values;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (dead[i])
      for (const auto& out : g.nodes[i].outputs) gone_values.insert(out);
  size_t k = 0;
  std::erase_if(g.nodes, [&](const ir::Node&) { return dead[k++]; });
  std::erase_if(g.value_info, [&](const ir::ValueInfo& v) { return gone_values.count(v.name) > 0; });
  return removed;
}

}  // namespace tessera::transforms
