// Incremental checking for an editor: what checking each node of the main graph produced, kept between
// checks, so that a node the edit did not touch, whose inputs look exactly as they did last time, is
// replayed (its diagnostics and output facts) instead of checked again. The result equals a full
// check's: the graph-level checks (names, producers, order, outputs) always run, and a node is
// replayed only when everything its check reads is unchanged (its own content, as the edit commands'
// change events say; its input types, constant values and shape values; the symbol counter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/checker.h"

namespace tessera::check {

struct MemoFacts {
  bool present = false;  // input: found in scope; output: defined by this node
  ir::Type type;
  std::optional<ir::Tensor> constant;  // holds the buffer alive, so its address identifies its bytes
  std::optional<std::vector<ir::Dim>> shape_value;
  std::string producer;
};

struct NodeMemo {
  std::string op_type, domain, overload;
  std::vector<std::string> inputs, outputs;
  std::vector<MemoFacts> in, out;
  std::vector<Diagnostic> diagnostics;
  int position = -1;  // the node's index when recorded (its diagnostics' node_index)
  int64_t symbols_before = 0, symbols_after = 0;
};

class CheckMemo {
 public:
  // The node's content changed (or it was added or removed): check it again next time.
  void forget(ir::NodeId id) { nodes_.erase(id); }
  // Anything else changed (graph inputs, initializers, value_info, opsets, functions): start over.
  void clear() { nodes_.clear(); }

  size_t replayed() const { return replayed_; }  // during the last check
  size_t checked() const { return checked_; }

 private:
  friend class Checker;
  friend CheckResult check_model(const ir::Model&, CheckMemo&, const CheckOptions&);
  std::unordered_map<ir::NodeId, NodeMemo> nodes_;
  size_t replayed_ = 0, checked_ = 0;
};

// check_model that reuses and refreshes `memo` for the main graph's nodes.
CheckResult check_model(const ir::Model& model, CheckMemo& memo, const CheckOptions& options = {});

}  // namespace tessera::check
