// Rewiring: which values a node reads and writes.
#pragma once

#include <optional>
#include <string>

#include "ir/commands/node_command.h"

namespace tessera::ir {

// Sets input `index` of a node to `value`, a value the graph can see; index == input count appends a
// new trailing input.
class Connect : public NodeCommand {
 public:
  Connect(GraphPath path, NodeRef node, size_t index, std::string value);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  size_t index_;
  std::string value_;
  std::optional<std::string> previous_;  // nullopt when apply appended
};

// Marks input `index` as omitted (""), or drops it when it is the last one: ONNX omits trailing
// optional inputs by leaving them out.
class Disconnect : public NodeCommand {
 public:
  Disconnect(GraphPath path, NodeRef node, size_t index);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  size_t index_;
  std::string previous_;
  bool dropped_ = false;
};

// Sets output `index` of a node to `value`, which must be a new name; index == output count appends.
// An empty `value` marks the output omitted, or drops it when it is the last one, as Disconnect does.
// Consumers of the old name are left as they are (RenameValue moves them along).
class SetNodeOutput : public NodeCommand {
 public:
  SetNodeOutput(GraphPath path, NodeRef node, size_t index, std::string value);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  size_t index_;
  std::string value_;
  std::optional<std::string> previous_;  // nullopt when apply appended
  bool dropped_ = false;
};

}  // namespace tessera::ir
