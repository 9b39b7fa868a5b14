// The diagnostics of a model under edit, kept up to date edit by edit from the edit commands' change
// events (ir/commands/change.h): the studio's type-check list.
//
// After a full check it keeps, for the main graph, each node's findings and the facts of every value.
// An edit that only adds, removes or changes main-graph nodes then re-checks those nodes and, in order,
// the consumers whose input facts changed, and reassembles the list: the same list and value types a
// full check gives. An edit inside a subgraph (If/Loop/Scan bodies, at any depth) re-checks the
// main-graph node holding it, subgraph included, as a changed node; one whose subgraphs read a value
// whose facts changed is re-checked too. An edit inside a local function's body re-checks the function
// bodies and the main-graph nodes that call a function (directly or in their subgraphs). An edit of the
// main graph's inputs or initializers defines them again and re-checks the nodes reading a value whose
// facts changed; one of graph outputs or value_info re-checks the producers of the values whose
// declared type changed; functions added, removed or replaced (and metadata) re-check the model's
// header (function bodies) and the nodes calling a function that is or was there. Anything else
// (opset imports), or a graph where the shortcut could differ from a full check (duplicate names or
// producers, a node output named like a graph input or initializer, nodes out of order, a list cut at
// max_diagnostics, a re-check that would renumber the checker's fresh symbols), is checked in full.
//
// An update may stop after a budget of re-checked nodes (the studio answers an edit at the head of a
// long chain before re-checking the 50,000 nodes below it): its result is provisional until finish().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check/checker.h"
#include "ir/commands/change.h"

namespace tessera::check {

class IncrementalChecker {
 public:
  IncrementalChecker();
  ~IncrementalChecker();
  IncrementalChecker(const IncrementalChecker&) = delete;
  IncrementalChecker& operator=(const IncrementalChecker&) = delete;

  // Checks the whole model.
  void reset(const ir::Model& m);
  // Brings the result up to date after an edit that made `changes`. Equals check_model(m), unless
  // more than `budget` nodes had to be checked again: then the result is provisional (complete() is
  // false; the nodes not checked yet keep their findings from before the edit; the edited nodes come
  // first) until finish(m), which must be called before the model changes again.
  void update(const ir::Model& m, const std::vector<ir::Change>& changes, size_t budget = SIZE_MAX);
  // Checks what the last update left (nothing when complete). Then result() equals check_model(m).
  void finish(const ir::Model& m);
  bool complete() const { return complete_; }
  const CheckResult& result() const { return result_; }
  double last_seconds() const { return last_seconds_; }
  // Whether the last update took the shortcut, and how many nodes it checked.
  bool last_incremental() const { return last_incremental_; }
  size_t last_checked_nodes() const { return last_checked_; }

  struct State;

 private:
  void full(const ir::Model& m);
  bool incremental(const ir::Model& m, const std::vector<ir::Change>& changes, size_t budget);
  bool run_pass(const ir::Model& m, size_t budget);
  void set_value_type(const std::string& name, const ir::Type& t);

  CheckResult result_;
  std::unique_ptr<State> state_;
  double last_seconds_ = 0;
  bool last_incremental_ = false;
  size_t last_checked_ = 0;
  bool complete_ = true;
};

}  // namespace tessera::check
