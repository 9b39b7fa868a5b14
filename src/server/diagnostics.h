// The diagnostics list as the studio's API spells it.
#pragma once

#include "check/checker.h"
#include "check/incremental.h"
#include "ir/commands/ir_json.h"

namespace tessera::server {

using check::IncrementalChecker;

// [{severity, graph, node, node_id?, op_type, input_index, output_index, message, text}]
ir::json diagnostics_json(const ir::Model& m, const check::Diagnostics& d);
// What turns the list `from` into `to` (both as diagnostics_json gives them): {"removed": [indices into
// `from`, ascending], "added": [[index into `to`, item], ...] ascending}. The items both keep stay in
// the same order, so removing, then inserting each added item at its index, gives `to` exactly.
ir::json diagnostics_diff(const ir::json& from, const ir::json& to);
// `from` with `diff` applied (what the studio's app does); HttpError-free: throws std::invalid_argument
// when the diff does not fit the list (an index out of range).
ir::json apply_diagnostics_diff(const ir::json& from, const ir::json& diff);
// The id of the node a diagnostic names, when its graph is the main graph or a function body; 0 if none.
ir::NodeId diagnostic_node_id(const ir::Model& m, const check::Diagnostic& d);

}  // namespace tessera::server
