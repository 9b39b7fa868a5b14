#include "server/diagnostics.h"

#include <stdexcept>

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

// An edit changes the list in one place most of the time (the edited nodes' findings, in graph order):
// what lies between the common head and the common tail is the difference. An edit whose findings
// change in two distant places sends the stretch between them again, still exact.
ir::json diagnostics_diff(const ir::json& from, const ir::json& to) {
  size_t head = 0;
  while (head < from.size() && head < to.size() && from[head] == to[head]) ++head;
  size_t tail = 0;
  while (tail < from.size() - head && tail < to.size() - head &&
         from[from.size() - 1 - tail] == to[to.size() - 1 - tail])
    ++tail;
  ir::json removed = ir::json::array();
  for (size_t k = head; k < from.size() - tail; ++k) removed.push_back(k);
  ir::json added = ir::json::array();
  for (size_t k = head; k < to.size() - tail; ++k) added.push_back(ir::json::array({k, to[k]}));
  return {{"removed", std::move(removed)}, {"added", std::move(added)}};
}

ir::json apply_diagnostics_diff(const ir::json& from, const ir::json& diff) {
  ir::json out = ir::json::array();
  const ir::json& removed = diff.at("removed");
  size_t r = 0;
  for (size_t k = 0; k < from.size(); ++k) {
    if (r < removed.size() && removed[r].get<size_t>() == k) {
      ++r;
      continue;
    }
    out.push_back(from[k]);
  }
  if (r != removed.size()) throw std::invalid_argument("a removed index is past the list");
  for (const ir::json& a : diff.at("added")) {
    size_t at = a.at(0).get<size_t>();
    if (at > out.size()) throw std::invalid_argument("an added index is past the list");
    out.insert(out.begin() + static_cast<ptrdiff_t>(at), a.at(1));
  }
  return out;
}

}  // namespace tessera::server
