// Part of an initializer's values set in place: how the studio's tensor editor applies the cells edited
// in a tensor too large to send whole (only the edited runs travel; the rest stays on the server).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/commands/command.h"

namespace tessera::ir {

// Writes `values` (a rank-1 tensor of the initializer's element type) at element `offset` of the
// initializer `name` (flat, row-major), leaving the other elements as they are.
class SetInitializerValues : public GraphCommand {
 public:
  SetInitializerValues(GraphPath path, std::string name, int64_t offset, Tensor values);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  int64_t offset_;
  Tensor values_;
  std::optional<Tensor> before_;  // the initializer as it was (its buffer is shared, not copied)
  size_t index_ = 0;
};

}  // namespace tessera::ir
