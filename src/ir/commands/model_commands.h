// Model-wide edits: local functions, opset imports, metadata.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/commands/command.h"

namespace tessera::ir {

// A function is identified by (domain, name, overload), as ONNX calls it from a node.
class AddFunction : public Command {
 public:
  explicit AddFunction(Function f) : function_(std::move(f)) {}
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Function function_;
};

// Removes a function; nodes calling it are left for the checker to report or the same batch to
// replace.
class RemoveFunction : public Command {
 public:
  RemoveFunction(std::string domain, std::string name, std::string overload = {});
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  GraphPath::FunctionKey key_;
  Function removed_;
  size_t index_ = 0;
};

// Replaces the function with the same (domain, name, overload) as a whole: signature, attributes,
// opset imports and body. Edits inside the body are ordinary commands with a function GraphPath.
class ReplaceFunction : public Command {
 public:
  explicit ReplaceFunction(Function f) : function_(std::move(f)) {}
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  Function function_;  // the new function before apply, the old one after (apply and undo swap)
  size_t index_ = 0;
};

// Sets the version the model imports for a domain ("" and "ai.onnx" alike), adding the import if
// there is none; nullopt removes the import.
class SetOpsetImport : public Command {
 public:
  SetOpsetImport(std::string domain, std::optional<int64_t> version);
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override;
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  std::string domain_;
  std::optional<int64_t> version_;
  std::optional<OpsetImport> previous_;  // nullopt when apply added the import
  size_t index_ = 0;
};

// The fields to change; those left unset keep their value.
struct ModelMetadata {
  std::optional<std::string> doc_string;
  std::optional<std::string> producer_name;
  std::optional<std::string> producer_version;
  std::optional<std::string> domain;
  std::optional<int64_t> model_version;
  std::optional<std::vector<StringPair>> metadata_props;
  std::optional<std::string> graph_name;  // the main graph's name (the model's name in the studio)
};

class SetModelMetadata : public Command {
 public:
  explicit SetModelMetadata(ModelMetadata md) : md_(std::move(md)) {}
  void apply(Model& m) override { swap_with(m); }
  void undo(Model& m) override { swap_with(m); }
  std::string description() const override { return "Edit model properties"; }
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

 private:
  // Exchanging the set fields with the model's is its own inverse: apply and undo are the same move.
  void swap_with(Model& m);
  ModelMetadata md_;
};

}  // namespace tessera::ir
