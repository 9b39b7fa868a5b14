#include "check/incremental.h"

#include <chrono>

namespace tessera::check {

void IncrementalChecker::reset(const ir::Model& m) {
  memo_.clear();
  update(m, {});
}

void IncrementalChecker::update(const ir::Model& m, const std::vector<ir::Change>& changes) {
  auto start = std::chrono::steady_clock::now();
  for (const ir::Change& c : changes) {
    bool node_change = c.kind == ir::Change::Kind::kNodeAdded || c.kind == ir::Change::Kind::kNodeRemoved ||
                       c.kind == ir::Change::Kind::kNodeChanged;
    if (c.path.function) {
      memo_.clear();  // main-graph nodes may call the function
    } else if (!c.path.steps.empty()) {
      memo_.forget(c.path.steps[0].node);  // inside a subgraph of this main-graph node
    } else if (node_change) {
      memo_.forget(c.node);
    } else {
      memo_.clear();  // graph inputs, outputs, initializers, value_info, the model's imports
    }
  }
  result_ = check_model(m, memo_);
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera::check
