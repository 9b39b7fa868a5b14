// The diagnostics of a model under edit, kept up to date edit by edit from the edit commands' change
// events (ir/commands/change.h): the studio's type-check list.
#pragma once

#include <vector>

#include "check/checker.h"
#include "check/memo.h"
#include "ir/commands/change.h"

namespace tessera::check {

class IncrementalChecker {
 public:
  // Checks the whole model, remembering each main-graph node's result.
  void reset(const ir::Model& m);
  // Brings the result up to date after an edit that made `changes`: the main graph's nodes that the
  // edit did not touch and whose inputs look the same are replayed, not checked (memo.h). The result
  // is the one check_model gives.
  void update(const ir::Model& m, const std::vector<ir::Change>& changes);
  const CheckResult& result() const { return result_; }
  double last_seconds() const { return last_seconds_; }
  const CheckMemo& memo() const { return memo_; }

 private:
  CheckResult result_;
  CheckMemo memo_;
  double last_seconds_ = 0;
};

}  // namespace tessera::check
