#include "server/diagnostics.h"

#include "ir/commands/graph_path.h"

namespace tessera::server {

ir::NodeId diagnostic_node_id(const ir::Model& m, const check::Diagnostic& d) {
  if (d.node_index < 0) return 0;
  const ir::Graph* g = nullptr;
  if (d.graph == "main") {
    g = &m.graph;
  } else {
    for (const ir::Function& f : m.functions) {
      ir::GraphPath p = ir::GraphPath::function_body(f.domain, f.name, f.overload);
      if (ir::path_string(m, p) == d.graph) g = &f.body;
    }
  }
  if (!g || static_cast<size_t>(d.node_index) >= g->nodes.size()) return 0;
  return g->nodes[static_cast<size_t>(d.node_index)].id;
}

ir::json diagnostics_json(const ir::Model& m, const check::Diagnostics& d) {
  ir::json out = ir::json::array();
  for (const check::Diagnostic& x : d.items) {
    ir::json j{{"severity", check::severity_name(x.severity)},
               {"graph", x.graph},
               {"node", x.node},
               {"op_type", x.op_type},
               {"input_index", x.input_index},
               {"output_index", x.output_index},
               {"message", x.message},
               {"text", x.to_string()}};
    if (ir::NodeId id = diagnostic_node_id(m, x)) j["node_id"] = id;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace tessera::server
