// Deleting an initializer as the studio's initializer editor does: the tensor and every link to it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/commands/batch.h"

namespace tessera::ir {

// Removes initializer `name` and disconnects every node input that read it: in its graph and in the
// subgraphs nested there (If/Loop/Scan bodies, at any depth) that read it from the outer scope. A
// subgraph that defines the name itself shadows it, and its readers are left alone; so are all readers
// when a graph input of the same name remains (the initializer was only its default). Undo restores the
// tensor and every link in one step. A graph output naming the initializer (of its graph, or of a
// subgraph that sees it) is refused with a CommandError naming each output: an output cannot be left
// empty as a node input can, and removing it would change what the graph returns.
class DeleteInitializer : public GraphCommand {
 public:
  DeleteInitializer(GraphPath path, std::string name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

  // Node inputs the last apply disconnected.
  size_t disconnected() const { return steps_ ? steps_->size() - 1 : 0; }

 private:
  void collect(const Graph& g, const GraphPath& p, BatchCommand& batch) const;
  void outputs_naming(const Graph& g, std::vector<std::string>& found) const;
  std::string name_;
  std::unique_ptr<BatchCommand> steps_;  // the disconnects, then the removal
};

}  // namespace tessera::ir
