// Reversible edits of a model. Every change, from the studio, the CLI, batch modifications or scripts,
// is a Command applied to an ir::Model, so undo/redo, the server API and scripted edits share one
// mechanism (ARCHITECTURE.md, principle 7).
//
// Commands keep only what they need to reverse themselves (the removed node, the old attribute value),
// never a snapshot of the graph: a history of hundreds of edits on a model of tens of thousands of
// nodes stays small.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ir/commands/change.h"
#include "ir/commands/command_error.h"
#include "ir/commands/graph_path.h"
#include "ir/model.h"

namespace tessera::ir {

class Command {
 public:
  virtual ~Command() = default;

  // Checks the edit against `m` and performs it, or throws CommandError and changes nothing. Redo
  // calls it again, on the state the first apply saw; what the first apply decided (a new node's id)
  // is reused, so later commands that refer to it still find it.
  virtual void apply(Model& m) = 0;
  // Restores exactly the state before the last apply, node ids and id counters included. Only valid
  // on the model as that apply (and any commands undone since) left it.
  virtual void undo(Model& m) = 0;
  // One line for menus and logs: "Rename value 'x' to 'y'".
  virtual std::string description() const = 0;
  // The command as the studio's API spells it ({"type": "add_node", ...}; command_json.cpp), so that
  // a command read back from it does the same edit.
  virtual nlohmann::json to_json() const = 0;
  // What the last apply (undone = false) or undo (undone = true) changed, appended to `out`; called
  // right after it, on the model it left.
  virtual void changes(const Model& m, bool undone, std::vector<Change>& out) const = 0;
};

// Base of the commands that edit one graph: the main graph, a subgraph or a function body.
class GraphCommand : public Command {
 protected:
  explicit GraphCommand(GraphPath path) : path_(std::move(path)) {}
  Graph& graph(Model& m) const { return resolve_graph(m, path_); }

  GraphPath path_;
};

}  // namespace tessera::ir
