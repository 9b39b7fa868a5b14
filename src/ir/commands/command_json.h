// Edit commands as JSON, in the spelling of the studio's API (docs/studio-api.md, "Edit commands"):
// {"type": "connect", "path": {...}, "node": 12, "index": 1, "value": "W"}. Every command class has
// one type; Command::to_json writes it back.
#pragma once

#include <memory>
#include <string>

#include "ir/commands/batch.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir {

// One command. Throws JsonError naming the field: "command 3: 'index' must be a non-negative integer"
// (`where` is the prefix, "command 3: "; "" for none). {"type": "batch", "name", "commands": [...]}
// gives a BatchCommand.
std::unique_ptr<Command> command_from_json(const json& j, const std::string& where = {});

// A batch of commands, each read with the prefix "command K: " (K from 1).
std::unique_ptr<BatchCommand> batch_from_json(const std::string& name, const json& commands);

}  // namespace tessera::ir
