// Changing a tensor's shape as the studio's tensor editor does: an initializer's, or a node's tensor
// attribute's (a Constant's value, say), in one undo step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/commands/node_command.h"

namespace tessera::ir {

// The most bytes a tensor may grow to: what the studio holds of one tensor (the same bound as a tensor
// sent to it as JSON).
inline constexpr int64_t kMaxReshapedBytes = int64_t{1} << 30;

// `t` with shape `dims`. With the same element count the values stay as they are, in row-major order (a
// reshape; the bytes are shared, not copied). Otherwise the first min(old, new) elements are kept and the
// rest are zero (empty strings; 1.0 for float8e8m0, which has no zero), and the values become the
// model's own (external data is dropped). Throws CommandError naming `label` and what is wrong: a
// negative dimension, a shape whose element count overflows, a size past kMaxReshapedBytes, or bytes not
// loaded (a tensor still in its external file can only be reshaped, not grown or cut).
Tensor reshaped(const Tensor& t, const std::vector<int64_t>& dims, const std::string& label);

// Gives initializer `name` the shape `dims` (reshaped()).
class ReshapeInitializer : public GraphCommand {
 public:
  ReshapeInitializer(GraphPath path, std::string name, std::vector<int64_t> dims);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  std::vector<int64_t> dims_;
  size_t index_ = 0;
  Tensor old_;  // the tensor before the last apply (its buffer shared, not copied)
};

// Gives the tensor of node attribute `attribute` the shape `dims` (reshaped()).
class ReshapeAttribute : public NodeCommand {
 public:
  ReshapeAttribute(GraphPath path, NodeRef node, std::string attribute, std::vector<int64_t> dims);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Tensor& find(Model& m);
  std::string attribute_;
  std::vector<int64_t> dims_;
  Tensor old_;
};

}  // namespace tessera::ir
