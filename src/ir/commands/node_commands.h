// Adding, removing and renaming nodes and setting their attributes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/commands/node_command.h"

namespace tessera::ir {

struct AddNodeIndex;

// Inserts `node` at `position` (appends for SIZE_MAX) with a fresh id from the graph; the node's own
// id is ignored. Its outputs must be new names. Undo removes it and gives the id back to the counter,
// so redo assigns the same id again and commands recorded after this one still find the node.
class AddNode : public GraphCommand {
 public:
  AddNode(GraphPath path, Node node, size_t position = SIZE_MAX);
  void apply(Model& m) override;
  // apply, checking names and ids against `index` (a batch's run of additions to one graph) instead of
  // scanning the graph; `index` is updated with the new node. Same effects and errors as apply.
  void apply_indexed(Model& m, AddNodeIndex& index);
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;
  NodeId node_id() const { return id_; }  // 0 until the first apply
  const GraphPath& path() const { return path_; }

 private:
  void apply_to(std::vector<Graph*>& scopes, AddNodeIndex* index);
  Node node_;
  size_t position_;
  NodeId id_ = 0;
  NodeId next_id_before_ = 0;
};

// Removes a node and nothing else: its consumers keep their inputs (now dangling, for the checker to
// report or a later command in the same batch to rewire). Undo puts it back at the same position.
class RemoveNode : public NodeCommand {
 public:
  RemoveNode(GraphPath path, NodeRef node) : NodeCommand(std::move(path), std::move(node)) {}
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override { return "Remove node " + label_; }
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Node removed_;
  size_t index_ = 0;
};

// Node names are optional in ONNX but unique within a graph when given.
class RenameNode : public NodeCommand {
 public:
  RenameNode(GraphPath path, NodeRef node, std::string new_name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string new_name_;
  std::string old_name_;
};

// Sets an attribute, replacing one of the same name in place or appending it.
class SetAttribute : public NodeCommand {
 public:
  SetAttribute(GraphPath path, NodeRef node, Attribute attr);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Attribute attr_;
  std::optional<Attribute> previous_;
  size_t index_ = 0;
};

// Removes an attribute so the op falls back to its default.
class ResetAttribute : public NodeCommand {
 public:
  ResetAttribute(GraphPath path, NodeRef node, std::string attr_name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  Attribute removed_;
  size_t index_ = 0;
};

}  // namespace tessera::ir
