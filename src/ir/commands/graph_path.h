// Addressing the graph an edit applies to, and the nodes in it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/model.h"

namespace tessera::ir {

// A node by stable id, or by name as a person or a script writes it. Commands resolve a name once, on
// their first apply, and keep the id, so redo finds the node even after later edits renamed it.
struct NodeRef {
  NodeId id = 0;  // 0: look the node up by name
  std::string name;

  NodeRef(NodeId node_id) : id(node_id) {}                        // NOLINT(google-explicit-constructor)
  NodeRef(std::string node_name) : name(std::move(node_name)) {}  // NOLINT(google-explicit-constructor)
  NodeRef(const char* node_name) : name(node_name) {}             // NOLINT(google-explicit-constructor)

  std::string to_string() const;  // "'conv_9'" or "#12"
};

// The main graph, a local function's body, or a subgraph below either, nested to any depth: each step
// goes through a node's graph attribute (index 0 for a `graph`, the position in a `graphs` list).
struct GraphPath {
  struct Step {
    NodeId node = 0;
    std::string attribute;
    size_t index = 0;
    bool operator==(const Step& o) const = default;
  };
  struct FunctionKey {
    std::string domain;
    std::string name;
    std::string overload;
    bool operator==(const FunctionKey& o) const = default;
    std::string to_string() const;  // "custom.Gelu", "custom.Gelu:fast"
  };

  std::optional<FunctionKey> function;  // start from this function's body instead of the main graph
  std::vector<Step> steps;

  static GraphPath main_graph() { return {}; }
  static GraphPath function_body(std::string domain, std::string name, std::string overload = {});
  // The subgraph held by attribute `attribute` (element `index` of a graphs list) of node `node` here.
  GraphPath sub(NodeId node, std::string attribute, size_t index = 0) const;

  bool operator==(const GraphPath& o) const = default;
};

// The graph `p` names; throws CommandError saying which step does not resolve.
Graph& resolve_graph(Model& m, const GraphPath& p);
const Graph& resolve_graph(const Model& m, const GraphPath& p);
// The graphs from the outermost down to the one `p` names: the scopes whose values that graph sees.
// A function body sees no outer scope.
std::vector<Graph*> resolve_scopes(Model& m, const GraphPath& p);
// "main", "main/If_3.then_branch", "function custom.Gelu/#4.body", for messages and logs.
std::string path_string(const Model& m, const GraphPath& p);

// How messages name things: "'conv_9'" for a named node, "#7 (Conv)" for an unnamed one; "'main'" for
// a graph, "'<unnamed>'" when it has no name.
std::string node_label(const Node& n);
std::string graph_label(const Graph& g);

}  // namespace tessera::ir
