#include "ir/commands/batch.h"

#include <fmt/format.h>

namespace tessera::ir {

void BatchCommand::apply(Model& m) {
  for (size_t i = 0; i < commands_.size(); ++i) {
    try {
      commands_[i]->apply(m);
    } catch (const CommandError& e) {
      for (size_t j = i; j-- > 0;) commands_[j]->undo(m);
      if (commands_.size() == 1) throw;
      throw CommandError(fmt::format("step {} of {} ({}): {}", i + 1, commands_.size(),
                                     commands_[i]->description(), e.what()));
    }
  }
}

void BatchCommand::undo(Model& m) {
  for (size_t j = commands_.size(); j-- > 0;) commands_[j]->undo(m);
}

void BatchCommand::undo_from(Model& m, size_t start, std::vector<Change>* changes) {
  while (commands_.size() > start) {
    commands_.back()->undo(m);
    if (changes) commands_.back()->changes(m, true, *changes);
    commands_.pop_back();
  }
}

}  // namespace tessera::ir
