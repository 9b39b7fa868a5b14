#include "ir/commands/scope.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/commands/command_error.h"

namespace tessera::ir {

namespace {
bool has_value_info(const std::vector<ValueInfo>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const ValueInfo& v) { return v.name == name; });
}
bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}
}  // namespace

bool node_produces(const Graph& g, std::string_view name) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [&](const Node& n) { return contains(n.outputs, name); });
}

bool defines_value(const Graph& g, std::string_view name) {
  if (name.empty()) return false;
  if (has_value_info(g.inputs, name) || g.find_initializer(name) || node_produces(g, name)) return true;
  return std::any_of(g.sparse_initializers.begin(), g.sparse_initializers.end(),
                     [&](const SparseTensor& t) { return t.values.name == name; });
}

bool mentions_value(const Graph& g, std::string_view name) {
  if (defines_value(g, name)) return true;
  if (has_value_info(g.outputs, name) || has_value_info(g.value_info, name)) return true;
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return contains(n.inputs, name); });
}

bool subtree_mentions(const Graph& g, std::string_view name) {
  if (mentions_value(g, name)) return true;
  bool found = false;
  for_each_direct_subgraph(g, [&](const Graph& sub) { found = found || subtree_mentions(sub, name); });
  return found;
}

const Graph* nested_definition(const Graph& g, std::string_view name) {
  const Graph* found = nullptr;
  for_each_direct_subgraph(g, [&](const Graph& sub) {
    if (found) return;
    found = defines_value(sub, name) ? &sub : nested_definition(sub, name);
  });
  return found;
}

const Graph* outer_definition(const std::vector<Graph*>& scopes, std::string_view name) {
  for (size_t i = 0; i + 1 < scopes.size(); ++i) {
    if (defines_value(*scopes[i], name)) return scopes[i];
  }
  return nullptr;
}

void require_new_value(const std::vector<Graph*>& scopes, std::string_view name) {
  const Graph& g = *scopes.back();
  const Graph* owner = defines_value(g, name) ? &g : outer_definition(scopes, name);
  if (!owner) owner = nested_definition(g, name);
  if (owner)
    throw CommandError(
        fmt::format("a value named '{}' already exists in graph {}", name, graph_label(*owner)));
}

void require_visible_value(const std::vector<Graph*>& scopes, std::string_view name) {
  if (defines_value(*scopes.back(), name) || outer_definition(scopes, name)) return;
  throw CommandError(fmt::format("value '{}' does not exist in graph {}", name, graph_label(*scopes.back())));
}

void require_name(std::string_view name, std::string_view what) {
  if (name.empty()) throw CommandError(fmt::format("{} needs a name", what));
}

Node& find_node_or_throw(Graph& g, const NodeRef& ref) {
  Node* n = ref.id != 0 ? g.find_node(ref.id) : g.find_node(ref.name);
  if (!n || (ref.id == 0 && ref.name.empty())) {
    throw CommandError(fmt::format("node {} does not exist in graph {}", ref.to_string(), graph_label(g)));
  }
  return *n;
}

}  // namespace tessera::ir
