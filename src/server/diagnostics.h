// The diagnostics list as the studio's API spells it.
#pragma once

#include "check/checker.h"
#include "check/incremental.h"
#include "ir/commands/ir_json.h"

namespace tessera::server {

using check::IncrementalChecker;

// [{severity, graph, node, node_id?, op_type, input_index, output_index, message, text}]
ir::json diagnostics_json(const ir::Model& m, const check::Diagnostics& d);
// The id of the node a diagnostic names, when its graph is the main graph or a function body; 0 if none.
ir::NodeId diagnostic_node_id(const ir::Model& m, const check::Diagnostic& d);

}  // namespace tessera::server
