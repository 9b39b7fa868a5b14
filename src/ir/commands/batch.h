// Many commands as one: a batch modification, a script, or one studio gesture that touches several
// things, undone and redone in one step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/commands/command.h"

namespace tessera::ir {

class BatchCommand : public Command {
 public:
  explicit BatchCommand(std::string name) : name_(std::move(name)) {}

  // Adds a command, to run when the batch is applied. History's open batches instead add commands it
  // has just applied, so the caller sees each effect and each error at once.
  void add(std::unique_ptr<Command> c) { commands_.push_back(std::move(c)); }

  // All or nothing: when one command fails, those before it are undone and the error goes on with
  // the failing command's position in front of its message.
  void apply(Model& m) override;
  void undo(Model& m) override;
  std::string description() const override { return name_; }
  nlohmann::json to_json() const override;
  void changes(const Model& m, bool undone, std::vector<Change>& out) const override;

  bool empty() const { return commands_.empty(); }
  size_t size() const { return commands_.size(); }
  // Undoes the commands from position `start` on, last first, and drops them: cancels (part of) an
  // open batch whose commands were applied one by one. Appends what each undo changed to `changes`.
  void undo_from(Model& m, size_t start, std::vector<Change>* changes = nullptr);

 private:
  std::string name_;
  std::vector<std::unique_ptr<Command>> commands_;
};

}  // namespace tessera::ir
