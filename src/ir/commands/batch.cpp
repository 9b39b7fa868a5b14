#include "ir/commands/batch.h"

#include <fmt/format.h>

#include <optional>

#include "ir/commands/add_node_index.h"
#include "ir/commands/name_index.h"
#include "ir/commands/node_commands.h"

namespace tessera::ir {

namespace {
// A run of add_node commands on one graph checks names against an index built when the run starts
// (add_node_index.h); any other command ends the run, since it may change what the index holds.
void apply_one(Model& m, Command& c, std::optional<AddNodeIndex>& index) {
  auto* add = dynamic_cast<AddNode*>(&c);
  if (!add) {
    index.reset();
    c.apply(m);
    return;
  }
  if (!index || !(index->path == add->path())) {
    index.reset();
    std::vector<Graph*> scopes = resolve_scopes(m, add->path());
    index.emplace(add->path(), scopes);
  }
  add->apply_indexed(m, *index);
}
}  // namespace

void BatchCommand::apply(Model& m) {
  NameIndex::Suspended no_names;  // the history's name index hears of the steps after the batch
  std::optional<AddNodeIndex> index;
  for (size_t i = 0; i < commands_.size(); ++i) {
    try {
      apply_one(m, *commands_[i], index);
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
