// What a run of add_node commands in one batch checks each new node against, kept in hash sets so that
// a batch of N additions costs O(N) instead of O(N^2): the node names and ids of the graph, and every
// value name a new output would clash with (defined in the graph, in an enclosing scope, or in a graph
// nested in it). Built once when the run starts and kept exact by the additions themselves; any other
// command ends the run (it could change what the sets hold).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "ir/commands/graph_path.h"
#include "ir/graph.h"

namespace tessera::ir {

struct AddNodeIndex {
  GraphPath path;
  const Graph* graph = nullptr;
  std::unordered_set<std::string> node_names;
  std::unordered_set<NodeId> ids;
  std::unordered_set<std::string> taken_values;

  // Indexes the last of `scopes` (reached through `path`), its enclosing scopes and its nested graphs.
  AddNodeIndex(GraphPath p, const std::vector<Graph*>& scopes);
  // Records a node just added to `graph`, with the values its own subgraphs define.
  void added(const Node& n);
};

// Every value that g and the graphs nested in it (at any depth) define, into `out`.
void collect_defined_values(const Graph& g, std::unordered_set<std::string>& out);

}  // namespace tessera::ir
