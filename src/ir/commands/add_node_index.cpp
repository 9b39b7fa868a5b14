#include "ir/commands/add_node_index.h"

#include "ir/commands/scope.h"

namespace tessera::ir {

namespace {
// The values g itself defines (defines_value's list): inputs, initializers, sparse initializers and
// node outputs.
void own_values(const Graph& g, std::unordered_set<std::string>& out) {
  for (const ValueInfo& v : g.inputs) out.insert(v.name);
  for (const Tensor& t : g.initializers) out.insert(t.name);
  for (const SparseTensor& t : g.sparse_initializers) out.insert(t.values.name);
  for (const Node& n : g.nodes) {
    for (const std::string& o : n.outputs) out.insert(o);
  }
  out.erase(std::string());
}

void node_subgraph_values(const Node& n, std::unordered_set<std::string>& out) {
  for (const Attribute& a : n.attributes) {
    for (const auto& sub : a.graphs) collect_defined_values(*sub, out);
  }
}
}  // namespace

void collect_defined_values(const Graph& g, std::unordered_set<std::string>& out) {
  own_values(g, out);
  for (const Node& n : g.nodes) node_subgraph_values(n, out);
}

AddNodeIndex::AddNodeIndex(GraphPath p, const std::vector<Graph*>& scopes)
    : path(std::move(p)), graph(scopes.back()) {
  for (const Node& n : graph->nodes) {
    if (!n.name.empty()) node_names.insert(n.name);
    ids.insert(n.id);
  }
  collect_defined_values(*graph, taken_values);
  for (size_t i = 0; i + 1 < scopes.size(); ++i) own_values(*scopes[i], taken_values);
}

void AddNodeIndex::added(const Node& n) {
  if (!n.name.empty()) node_names.insert(n.name);
  ids.insert(n.id);
  for (const std::string& o : n.outputs) {
    if (!o.empty()) taken_values.insert(o);
  }
  node_subgraph_values(n, taken_values);
}

}  // namespace tessera::ir
