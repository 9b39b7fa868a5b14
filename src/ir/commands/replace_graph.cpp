#include "ir/commands/replace_graph.h"

#include <utility>

#include "ir/commands/ir_json.h"

namespace tessera::ir {

ReplaceGraph::ReplaceGraph(GraphPath path, Graph g, std::string what)
    : GraphCommand(std::move(path)), graph_(std::move(g)), what_(std::move(what)) {}

void ReplaceGraph::apply(Model& m) {
  Graph& g = graph(m);  // throws CommandError, touching nothing, when the path does not resolve
  std::swap(g, graph_);
}

void ReplaceGraph::undo(Model& m) {
  std::swap(graph(m), graph_);
}

nlohmann::json ReplaceGraph::to_json() const {
  nlohmann::json j{{"type", "replace_graph"}, {"description", what_}, {"graph", graph_to_json(graph_)}};
  if (path_ != GraphPath::main_graph()) j["path"] = graph_path_to_json(path_);
  return j;
}

void ReplaceGraph::changes(const Model& m, bool, std::vector<Change>& out) const {
  // After apply or undo, graph_ holds the graph that left and the model the one that came in.
  for (const Node& n : graph_.nodes) out.push_back(Change{Change::Kind::kNodeRemoved, path_, n.id});
  for (const Node& n : resolve_graph(m, path_).nodes)
    out.push_back(Change{Change::Kind::kNodeAdded, path_, n.id});
  for (auto k :
       {Change::Kind::kGraphIoChanged, Change::Kind::kInitializersChanged, Change::Kind::kValueInfoChanged})
    out.push_back(Change{k, path_, 0});
}

}  // namespace tessera::ir
