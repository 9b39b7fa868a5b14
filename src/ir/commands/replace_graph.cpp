#include "ir/commands/replace_graph.h"

#include <utility>

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

}  // namespace tessera::ir
