// The graph as the browser sees it (docs/studio-api.md, "The graph as the browser sees it"), and the
// operator palette.
#pragma once

#include "check/checker.h"
#include "ir/commands/ir_json.h"
#include "server/document.h"

namespace tessera::server {

// The name's path prefix up to the last '/' ("/encoder/layer.3/attention/MatMul" ->
// "/encoder/layer.3/attention"); "" when it has none.
std::string node_scope(const std::string& name);

// One node as in the graph answer; `severity` is "error", "warning" or null. `m`: to tell calls of
// the model's local functions ("function": {domain, name, overload?}).
json node_json(const ir::Model& m, const ir::Node& n, const json& severity);
// The whole answer for the graph at `p` of the document.
json graph_json(Document& doc, const ir::GraphPath& p);
// The worst severity the diagnostics give each node of the graph named `graph_name` (by node index).
std::vector<json> node_severities(const ir::Graph& g, const std::string& graph_name,
                                  const check::Diagnostics& d);

// {"ops": [...]}: the newest schema of every operator the model's opset imports bind.
json registry_json(const ir::Model& m);

}  // namespace tessera::server
