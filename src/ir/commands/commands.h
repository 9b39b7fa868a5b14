// Everything needed to edit a model through commands: include this one header.
#pragma once

#include "ir/commands/batch.h"               // IWYU pragma: export
#include "ir/commands/command.h"             // IWYU pragma: export
#include "ir/commands/delete_initializer.h"  // IWYU pragma: export
#include "ir/commands/graph_path.h"          // IWYU pragma: export
#include "ir/commands/history.h"             // IWYU pragma: export
#include "ir/commands/initializer_values.h"  // IWYU pragma: export
#include "ir/commands/model_commands.h"      // IWYU pragma: export
#include "ir/commands/node_commands.h"       // IWYU pragma: export
#include "ir/commands/rename_value.h"        // IWYU pragma: export
#include "ir/commands/replace_graph.h"       // IWYU pragma: export
#include "ir/commands/reshape_tensor.h"      // IWYU pragma: export
#include "ir/commands/value_commands.h"      // IWYU pragma: export
#include "ir/commands/wiring_commands.h"     // IWYU pragma: export
