// Replacing a whole graph at once: how a transformation computed on a copy of the model (precision
// conversion, the engine's rewrite rules, which edit graphs in place) enters the history as one step.
#pragma once

#include <string>

#include "ir/commands/command.h"

namespace tessera::ir {

// Replaces the graph `path` names (main graph, function body or subgraph) by `g`, node ids and id
// counter included. Unlike the fine-grained commands it keeps the whole replaced graph to swap back on
// undo; tensors share their buffers between the two, so that costs the node and value lists, not the
// weights. `what` is the description menus show ("Convert to float16").
class ReplaceGraph : public GraphCommand {
 public:
  ReplaceGraph(GraphPath path, Graph g, std::string what);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override { return what_; }
  nlohmann::json to_json() const override;
  // Every node of the two graphs (removed and added), their inputs, outputs, initializers and types.
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Graph graph_;  // the new graph before apply, the old one after (apply and undo swap)
  std::string what_;
};

}  // namespace tessera::ir
