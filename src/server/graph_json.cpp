#include "server/graph_json.h"

#include <map>

#include "ops/registry.h"

namespace tessera::server {

std::string node_scope(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash);
}

namespace {
json function_key_json(const ir::Function& f) {
  json j{{"domain", f.domain}, {"name", f.name}};
  if (!f.overload.empty()) j["overload"] = f.overload;
  return j;
}
}  // namespace

json node_json(const ir::Model& m, const ir::Node& n, const json& severity) {
  json j{{"id", n.id},
         {"name", n.name},
         {"op_type", n.op_type},
         {"domain", n.domain},
         {"scope", node_scope(n.name)},
         {"inputs", n.inputs},
         {"outputs", n.outputs}};
  j["attributes"] = json::array();
  j["subgraphs"] = json::array();
  for (const ir::Attribute& a : n.attributes) {
    j["attributes"].push_back(ir::attribute_to_json(a, false));
    for (size_t k = 0; k < a.graphs.size(); ++k) {
      j["subgraphs"].push_back({{"attribute", a.name}, {"index", k}, {"nodes", a.graphs[k]->nodes.size()}});
    }
  }
  if (const ir::Function* f = m.find_function(n.domain, n.op_type, n.overload))
    j["function"] = function_key_json(*f);
  j["severity"] = severity;
  return j;
}

std::vector<json> node_severities(const ir::Graph& g, const std::string& graph_name,
                                  const check::Diagnostics& d) {
  std::vector<json> out(g.nodes.size(), json(nullptr));
  for (const check::Diagnostic& x : d.items) {
    if (x.graph != graph_name || x.node_index < 0 || static_cast<size_t>(x.node_index) >= out.size())
      continue;
    json& s = out[static_cast<size_t>(x.node_index)];
    if (x.severity == check::Severity::kError) {
      s = "error";
    } else if (x.severity == check::Severity::kWarning && s.is_null()) {
      s = "warning";
    }
  }
  return out;
}

json graph_json(Document& doc, const ir::GraphPath& p) {
  const ir::Model& m = doc.model();
  const ir::Graph& g = ir::resolve_graph(m, p);
  std::string name = ir::path_string(m, p);
  std::vector<json> severity = node_severities(g, name, doc.checker().result().diagnostics);
  json j{{"version", doc.version()}, {"graph", name}};
  j["nodes"] = json::array();
  for (size_t k = 0; k < g.nodes.size(); ++k) j["nodes"].push_back(node_json(m, g.nodes[k], severity[k]));
  j["inputs"] = json::array();
  for (const ir::ValueInfo& v : g.inputs) j["inputs"].push_back(ir::value_info_to_json(v));
  j["outputs"] = json::array();
  for (const ir::ValueInfo& v : g.outputs) j["outputs"].push_back(ir::value_info_to_json(v));
  j["initializers"] = json::array();
  for (const ir::Tensor& t : g.initializers) {
    std::optional<int64_t> bytes = t.expected_bytes();
    j["initializers"].push_back({{"name", t.name},
                                 {"dtype", ir::dtype_name(t.dtype)},
                                 {"shape", t.dims},
                                 {"bytes", bytes ? json(*bytes) : json(nullptr)}});
  }
  // Inferred types are those of the main graph (what the checker keeps).
  j["value_types"] = json::object();
  if (p == ir::GraphPath::main_graph()) {
    for (const auto& [value, type] : doc.checker().result().value_types) {
      j["value_types"][value] = {{"type", type.type_string()},
                                 {"shape", type.shape ? ir::shape_to_json(*type.shape) : json(nullptr)}};
    }
  }
  // What the model holds besides this graph, for navigation and the properties panel.
  j["opset_imports"] = json::array();
  for (const ir::OpsetImport& o : m.opset_imports)
    j["opset_imports"].push_back({{"domain", o.domain}, {"version", o.version}});
  j["metadata"] = {{"graph_name", m.graph.name},
                   {"doc_string", m.doc_string},
                   {"producer_name", m.producer_name},
                   {"producer_version", m.producer_version},
                   {"domain", m.domain},
                   {"model_version", m.model_version},
                   {"ir_version", m.ir_version}};
  j["functions"] = json::array();
  for (const ir::Function& f : m.functions) j["functions"].push_back(function_key_json(f));
  j["positions"] = json::object();
  auto it = doc.positions().find(ir::graph_path_to_json(p).dump());
  if (it != doc.positions().end()) {
    for (const auto& [id, xy] : it->second) {
      if (g.find_node(id)) j["positions"][std::to_string(id)] = {xy.first, xy.second};
    }
  }
  auto io = doc.io_positions().find(ir::graph_path_to_json(p).dump());
  j["io_positions"] =
      io == doc.io_positions().end() ? json::object() : io_positions_json(doc.model(), g, io->second);
  return j;
}

namespace {

json params_json(const std::vector<ops::FormalParam>& params, const ops::OpSchema& s) {
  json out = json::array();
  for (const ops::FormalParam& f : params) {
    const char* option = f.option == ops::FormalParam::Option::kSingle     ? "single"
                         : f.option == ops::FormalParam::Option::kOptional ? "optional"
                                                                           : "variadic";
    const ops::TypeConstraint* tc = s.find_type_param(f.type);
    json types = tc ? json(tc->allowed) : json::array({f.type});
    out.push_back({{"name", f.name}, {"option", option}, {"types", std::move(types)}});
  }
  return out;
}

json schema_json(const ops::OpSchema& s) {
  json j{{"domain", s.domain()},
         {"op_type", s.name()},
         {"since_version", s.since_version()},
         {"category", ops::category_name(s.get_category())},
         {"inputs", params_json(s.inputs(), s)},
         {"outputs", params_json(s.outputs(), s)}};
  if (!s.get_doc().empty()) j["doc"] = s.get_doc();
  j["attributes"] = json::array();
  for (const ops::AttrSchema& a : s.attributes()) {
    json aj{{"name", a.name}, {"type", ir::attr_type_name(a.type)}, {"required", a.required}};
    if (a.default_value) aj["default"] = ir::attribute_to_json(*a.default_value, false)["value"];
    j["attributes"].push_back(std::move(aj));
  }
  return j;
}

}  // namespace

json registry_json(const ir::Model& m) {
  // For each imported domain, the newest version of each op not above the import.
  std::map<std::pair<std::string, std::string>, const ops::OpSchema*> chosen;
  for (const ops::OpSchema* s : ops::OpRegistry::global().all()) {
    std::optional<int64_t> v = m.opset_version(s->domain());
    if (!v || s->since_version() > *v) continue;
    auto& slot = chosen[{s->domain(), s->name()}];
    if (!slot || slot->since_version() < s->since_version()) slot = s;
  }
  json ops = json::array();
  for (const auto& [key, s] : chosen) {
    if (!s->is_deprecated()) ops.push_back(schema_json(*s));  // removed from the opset at that version
  }
  return {{"ops", std::move(ops)}};
}

}  // namespace tessera::server
