// What names a graph defines and refers to, across nested scopes: the checks edit commands share
// before they touch anything.
#pragma once

#include <string_view>
#include <vector>

#include "ir/commands/graph_path.h"
#include "ir/graph.h"

namespace tessera::ir {

// Calls fn(Graph&) for every graph held directly by the attributes of g's nodes (not deeper).
template <class G, class F>
void for_each_direct_subgraph(G& g, F&& fn) {
  for (auto& n : g.nodes) {
    for (auto& a : n.attributes) {
      for (auto& sub : a.graphs) fn(*sub);
    }
  }
}

// Graph input, initializer, sparse initializer or node output of g itself.
bool defines_value(const Graph& g, std::string_view name);
bool node_produces(const Graph& g, std::string_view name);
// Defined in g, or referred to by a node input, a graph output or a value_info entry of g itself.
bool mentions_value(const Graph& g, std::string_view name);
// mentions_value for g or any graph nested in it.
bool subtree_mentions(const Graph& g, std::string_view name);
// A graph nested (at any depth) in g, not g itself, that defines `name`; nullptr when none does.
const Graph* nested_definition(const Graph& g, std::string_view name);
// One of the enclosing scopes (all but the last of `scopes`) that defines `name`; nullptr when none.
const Graph* outer_definition(const std::vector<Graph*>& scopes, std::string_view name);

// Throws CommandError unless `name` is free for a new definition in the last of `scopes`: ONNX
// requires single assignment within a graph and forbids shadowing a name the graph can see from
// outside, and a nested graph defining it already would end up shadowing it.
void require_new_value(const std::vector<Graph*>& scopes, std::string_view name);
// Throws CommandError unless the last of `scopes` can read `name` (defined there or outside).
void require_visible_value(const std::vector<Graph*>& scopes, std::string_view name);
// Throws CommandError when `name` is empty, naming `what` ("a graph input").
void require_name(std::string_view name, std::string_view what);

Node& find_node_or_throw(Graph& g, const NodeRef& ref);

}  // namespace tessera::ir
