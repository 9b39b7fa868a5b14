// Renaming a value everywhere it appears.
#pragma once

#include <string>

#include "ir/commands/command.h"

namespace tessera::ir {

// Renames value `from` to `to` in a graph: producers, consumers, graph inputs and outputs, value_info,
// initializers and sparse initializers, and in every nested graph that reads it from the outer scope
// (a nested graph that defines `from` itself shadows it, and is left alone with everything below it).
//
// `to` must appear nowhere in the graph or below it and must not be visible from outside, so the
// rename can neither merge two values nor capture a reference; that also makes the reverse rename an
// exact undo. A value that belongs to an enclosing graph is renamed there, not from a subgraph.
// The serialized quantization annotations are kept as they are, not renamed.
class RenameValue : public GraphCommand {
 public:
  RenameValue(GraphPath path, std::string from, std::string to);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string from_;
  std::string to_;
};

// Renames `from` to `to` in g and the nested graphs that do not shadow `from`. No checks: the
// command's apply makes them; exposed for passes that rename after their own checks.
void rename_value_in_scope(Graph& g, const std::string& from, const std::string& to);

}  // namespace tessera::ir
