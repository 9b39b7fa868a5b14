// A graph's own values: initializers, graph inputs and outputs, value_info.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/commands/command.h"

namespace tessera::ir {

// Appends an initializer. Its name must be new, except that it may match a graph input (an input
// with a default value, as ONNX allows).
class AddInitializer : public GraphCommand {
 public:
  AddInitializer(GraphPath path, Tensor tensor);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Tensor tensor_;
};

// Replaces the initializer of the same name (new values, type or shape).
class ReplaceInitializer : public GraphCommand {
 public:
  ReplaceInitializer(GraphPath path, Tensor tensor);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Tensor tensor_;  // the new tensor before apply, the old one after (apply and undo swap)
  size_t index_ = 0;
};

class RemoveInitializer : public GraphCommand {
 public:
  RemoveInitializer(GraphPath path, std::string name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  Tensor removed_;
  size_t index_ = 0;
};

// Adds a graph input at `position` (appends for SIZE_MAX). The name must be new, except that it may
// match an initializer, which then becomes the input's default.
class AddGraphInput : public GraphCommand {
 public:
  AddGraphInput(GraphPath path, ValueInfo input, size_t position = SIZE_MAX);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  ValueInfo input_;
  size_t position_;
  size_t index_ = 0;
};

// Removes a graph input; its consumers keep reading the name (from an initializer, or dangling).
class RemoveGraphInput : public GraphCommand {
 public:
  RemoveGraphInput(GraphPath path, std::string name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  ValueInfo removed_;
  size_t index_ = 0;
};

// Makes a value the graph can see a graph output, at `position` (appends for SIZE_MAX).
class AddGraphOutput : public GraphCommand {
 public:
  AddGraphOutput(GraphPath path, ValueInfo output, size_t position = SIZE_MAX);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  ValueInfo output_;
  size_t position_;
  size_t index_ = 0;
};

class RemoveGraphOutput : public GraphCommand {
 public:
  RemoveGraphOutput(GraphPath path, std::string name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  ValueInfo removed_;
  size_t index_ = 0;
};

// Sets the type (and doc string, metadata) recorded for a value: on its graph input and graph output
// entries where it is one, otherwise in value_info, which gains an entry if it has none. Setting a
// graph input's type is how a model's input shape is changed.
class SetValueInfo : public GraphCommand {
 public:
  SetValueInfo(GraphPath path, ValueInfo info);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  enum class List { kInputs, kOutputs, kValueInfo };
  struct Edit {
    List list;
    size_t index;
    std::optional<ValueInfo> previous;  // nullopt when apply appended the entry
  };
  static std::vector<ValueInfo>& list_of(Graph& g, List l);

  ValueInfo info_;
  std::vector<Edit> edits_;
};

// Drops the value_info entry of a value (graph input and output entries stay).
class RemoveValueInfo : public GraphCommand {
 public:
  RemoveValueInfo(GraphPath path, std::string name);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string name_;
  ValueInfo removed_;
  size_t index_ = 0;
};

}  // namespace tessera::ir
