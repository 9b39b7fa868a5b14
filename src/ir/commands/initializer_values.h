// Part of a tensor's values set in place: how the studio's tensor editor applies the cells edited in a
// tensor too large to send whole (only the edited runs travel; the rest stays on the server), for an
// initializer and for a node's tensor attribute (a Constant's value, say).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/commands/node_command.h"

namespace tessera::ir {

// Writes the values of a rank-1 tensor into a tensor of the same element type at a flat offset, and
// takes them back out. It keeps only the bytes it overwrote (the edited range), never a copy of the
// tensor: the bytes are written in place when the tensor alone holds its buffer, and copied once
// otherwise (a buffer shared with another model, an undo step or a memory-mapped file is never
// written). Sub-byte types (int4, uint4, float4e2m1) are written nibble by nibble.
class TensorPatch {
 public:
  // `label` names the tensor in errors ("initializer 'w'"). Throws CommandError, changing nothing, when
  // the types differ, the range lies outside the tensor or its bytes are not loaded.
  void apply(Tensor& t, int64_t offset, const Tensor& values, const std::string& label);
  void undo(Tensor& t, int64_t offset);
  // Bytes held to undo the last apply (the overwritten range): what the edit costs in memory.
  size_t undo_bytes() const { return old_bytes_.size() + old_strings_.capacity() * sizeof(std::string); }

 private:
  // What the last apply overwrote: the bytes [old_at_, old_at_ + size) of the tensor's data (whole
  // bytes, also for sub-byte types), or the strings of a string tensor.
  std::vector<std::byte> old_bytes_;
  int64_t old_at_ = 0;
  std::vector<std::string> old_strings_;
  std::optional<ExternalData> external_;  // dropped by the edit (the values are the model's own)
};

// Writes `values` (a rank-1 tensor of the initializer's element type) at element `offset` of the
// initializer `name` (flat, row-major), leaving the other elements as they are (TensorPatch).
class SetInitializerValues : public GraphCommand {
 public:
  SetInitializerValues(GraphPath path, std::string name, int64_t offset, Tensor values);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

  size_t undo_bytes() const { return patch_.undo_bytes(); }

 private:
  Tensor& find(Model& m) const;
  std::string name_;
  int64_t offset_;
  Tensor values_;
  TensorPatch patch_;
};

// The same for the tensor of a node's tensor attribute `attribute` (a Constant's `value`, say): the
// paged tensor editor's edit of an attribute too large to send whole.
class SetAttributeValues : public NodeCommand {
 public:
  SetAttributeValues(GraphPath path, NodeRef node, std::string attribute, int64_t offset, Tensor values);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

  size_t undo_bytes() const { return patch_.undo_bytes(); }

 private:
  Tensor& find(Model& m);
  std::string attribute_;
  int64_t offset_;
  Tensor values_;
  TensorPatch patch_;
};

}  // namespace tessera::ir
