// Reading commands from JSON, and each command's to_json and changes (declared in its class).
#include "ir/commands/command_json.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "ir/commands/commands.h"
#include "ir/commands/scope.h"

namespace tessera::ir {

std::string_view change_kind_name(Change::Kind k) {
  switch (k) {
    case Change::Kind::kNodeAdded:
      return "node_added";
    case Change::Kind::kNodeRemoved:
      return "node_removed";
    case Change::Kind::kNodeChanged:
      return "node_changed";
    case Change::Kind::kGraphIoChanged:
      return "graph_io_changed";
    case Change::Kind::kInitializersChanged:
      return "initializers_changed";
    case Change::Kind::kValueInfoChanged:
      return "value_info_changed";
    case Change::Kind::kModelChanged:
      return "model_changed";
  }
  return "unknown";
}

namespace {

GraphPath path_of(const json& j, const std::string& where) {
  auto it = j.find("path");
  return it == j.end() ? GraphPath::main_graph() : graph_path_from_json(*it, where);
}

NodeRef node_of(const json& j, const std::string& where) {
  return node_ref_from_json(require_field(j, "node", where), where);
}

size_t position_of(const json& j, const std::string& where) {
  auto it = j.find("position");
  if (it == j.end() || it->is_null()) return SIZE_MAX;
  return index_field(j, "position", where);
}

json with_type(const char* type, const GraphPath& p, json fields) {
  fields["type"] = type;
  if (p != GraphPath::main_graph()) fields["path"] = graph_path_to_json(p);
  return fields;
}

GraphPath::FunctionKey function_key_of(const json& j, const std::string& where) {
  const json& f = require_field(j, "function", where);
  std::string w = where + "'function': ";
  return {optional_string_field(f, "domain", w), string_field(f, "name", w),
          optional_string_field(f, "overload", w)};
}

std::optional<int64_t> opset_version_of(const json& j, const std::string& where) {
  const json& v = require_field(j, "version", where);
  if (v.is_null()) return std::nullopt;
  return int_field(j, "version", where);
}

ModelMetadata metadata_of(const json& j, const std::string& where) {
  ModelMetadata md;
  auto str = [&](const char* key, std::optional<std::string>& field) {
    if (j.contains(key)) field = string_field(j, key, where);
  };
  str("doc_string", md.doc_string);
  str("producer_name", md.producer_name);
  str("producer_version", md.producer_version);
  str("domain", md.domain);
  str("graph_name", md.graph_name);
  if (j.contains("model_version")) md.model_version = int_field(j, "model_version", where);
  if (j.contains("metadata_props")) {
    const json& props = j["metadata_props"];
    if (!props.is_object())
      throw JsonError(fmt::format("{}'metadata_props' must be an object of strings", where));
    md.metadata_props.emplace();
    for (auto& [k, v] : props.items()) {
      if (!v.is_string())
        throw JsonError(fmt::format("{}'metadata_props' must be an object of strings", where));
      md.metadata_props->emplace_back(k, v.get<std::string>());
    }
  }
  return md;
}

// {"dtype": "float", "values": [...]}: the rank-1 tensor of values a set_*_values command writes.
Tensor values_tensor(const json& j, const std::string& name, const std::string& where) {
  const json& values = require_field(j, "values", where);
  if (!values.is_array()) throw JsonError(fmt::format("{}'values' must be an array", where));
  json t{{"name", name},
         {"dtype", string_field(j, "dtype", where)},
         {"shape", {values.size()}},
         {"values", values}};
  return tensor_from_json(t, where);
}

// {"shape": [2, 3]}: the new shape of a reshape_* command. Negative dimensions pass, for the command to
// refuse naming the tensor.
std::vector<int64_t> shape_of(const json& j, const std::string& where) {
  const json& s = require_field(j, "shape", where);
  if (!s.is_array()) throw JsonError(fmt::format("{}'shape' must be an array of integers", where));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!s[i].is_number_integer() ||
        (s[i].is_number_unsigned() && s[i].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      throw JsonError(fmt::format("{}'shape'[{}] must be an integer, not {}", where, i, s[i].dump()));
    dims.push_back(s[i].get<int64_t>());
  }
  return dims;
}

using Reader = std::function<std::unique_ptr<Command>(const json&, const std::string&)>;

const std::map<std::string, Reader, std::less<>>& readers() {
  static const std::map<std::string, Reader, std::less<>> table = {
      {"add_node",
       [](const json& j, const std::string& w) {
         return std::make_unique<AddNode>(
             path_of(j, w), node_from_json(require_field(j, "node", w), w + "'node': "), position_of(j, w));
       }},
      {"remove_node",
       [](const json& j, const std::string& w) {
         return std::make_unique<RemoveNode>(path_of(j, w), node_of(j, w));
       }},
      {"rename_node",
       [](const json& j, const std::string& w) {
         return std::make_unique<RenameNode>(path_of(j, w), node_of(j, w), string_field(j, "name", w));
       }},
      {"set_attribute",
       [](const json& j, const std::string& w) {
         return std::make_unique<SetAttribute>(path_of(j, w), node_of(j, w),
                                               attribute_from_json(require_field(j, "attribute", w), w));
       }},
      {"reset_attribute",
       [](const json& j, const std::string& w) {
         return std::make_unique<ResetAttribute>(path_of(j, w), node_of(j, w), string_field(j, "name", w));
       }},
      {"connect",
       [](const json& j, const std::string& w) {
         return std::make_unique<Connect>(path_of(j, w), node_of(j, w), index_field(j, "index", w),
                                          string_field(j, "value", w));
       }},
      {"disconnect",
       [](const json& j, const std::string& w) {
         return std::make_unique<Disconnect>(path_of(j, w), node_of(j, w), index_field(j, "index", w));
       }},
      {"set_node_output",
       [](const json& j, const std::string& w) {
         return std::make_unique<SetNodeOutput>(path_of(j, w), node_of(j, w), index_field(j, "index", w),
                                                string_field(j, "value", w));
       }},
      {"rename_value",
       [](const json& j, const std::string& w) {
         return std::make_unique<RenameValue>(path_of(j, w), string_field(j, "from", w),
                                              string_field(j, "to", w));
       }},
      {"add_initializer",
       [](const json& j, const std::string& w) {
         return std::make_unique<AddInitializer>(path_of(j, w),
                                                 tensor_from_json(require_field(j, "tensor", w), w));
       }},
      {"replace_initializer",
       [](const json& j, const std::string& w) {
         return std::make_unique<ReplaceInitializer>(path_of(j, w),
                                                     tensor_from_json(require_field(j, "tensor", w), w));
       }},
      {"set_initializer_values",
       [](const json& j, const std::string& w) {
         std::string name = string_field(j, "name", w);
         auto offset = static_cast<int64_t>(index_field(j, "offset", w));
         return std::make_unique<SetInitializerValues>(path_of(j, w), name, offset,
                                                       values_tensor(j, name, w));
       }},
      {"remove_initializer",
       [](const json& j, const std::string& w) {
         return std::make_unique<RemoveInitializer>(path_of(j, w), string_field(j, "name", w));
       }},
      {"delete_initializer",
       [](const json& j, const std::string& w) {
         return std::make_unique<DeleteInitializer>(path_of(j, w), string_field(j, "name", w));
       }},
      {"reshape_initializer",
       [](const json& j, const std::string& w) {
         return std::make_unique<ReshapeInitializer>(path_of(j, w), string_field(j, "name", w),
                                                     shape_of(j, w));
       }},
      {"reshape_attribute",
       [](const json& j, const std::string& w) {
         return std::make_unique<ReshapeAttribute>(path_of(j, w), node_of(j, w), string_field(j, "name", w),
                                                   shape_of(j, w));
       }},
      {"set_attribute_values",
       [](const json& j, const std::string& w) {
         std::string name = string_field(j, "name", w);
         auto offset = static_cast<int64_t>(index_field(j, "offset", w));
         return std::make_unique<SetAttributeValues>(path_of(j, w), node_of(j, w), name, offset,
                                                     values_tensor(j, name, w));
       }},
      {"add_graph_input",
       [](const json& j, const std::string& w) {
         return std::make_unique<AddGraphInput>(
             path_of(j, w), value_info_from_json(require_field(j, "value", w), w), position_of(j, w));
       }},
      {"add_graph_output",
       [](const json& j, const std::string& w) {
         return std::make_unique<AddGraphOutput>(
             path_of(j, w), value_info_from_json(require_field(j, "value", w), w), position_of(j, w));
       }},
      {"remove_graph_input",
       [](const json& j, const std::string& w) {
         return std::make_unique<RemoveGraphInput>(path_of(j, w), string_field(j, "name", w));
       }},
      {"remove_graph_output",
       [](const json& j, const std::string& w) {
         return std::make_unique<RemoveGraphOutput>(path_of(j, w), string_field(j, "name", w));
       }},
      {"set_value_info",
       [](const json& j, const std::string& w) {
         return std::make_unique<SetValueInfo>(path_of(j, w),
                                               value_info_from_json(require_field(j, "value", w), w));
       }},
      {"remove_value_info",
       [](const json& j, const std::string& w) {
         return std::make_unique<RemoveValueInfo>(path_of(j, w), string_field(j, "name", w));
       }},
      {"set_opset_import",
       [](const json& j, const std::string& w) {
         return std::make_unique<SetOpsetImport>(optional_string_field(j, "domain", w),
                                                 opset_version_of(j, w));
       }},
      {"set_model_metadata",
       [](const json& j, const std::string& w) {
         return std::make_unique<SetModelMetadata>(metadata_of(j, w));
       }},
      {"add_function",
       [](const json& j, const std::string& w) {
         return std::make_unique<AddFunction>(function_from_json(require_field(j, "function", w), w));
       }},
      {"replace_function",
       [](const json& j, const std::string& w) {
         return std::make_unique<ReplaceFunction>(function_from_json(require_field(j, "function", w), w));
       }},
      {"replace_graph",
       [](const json& j, const std::string& w) {
         std::string what = optional_string_field(j, "description", w);
         return std::make_unique<ReplaceGraph>(path_of(j, w),
                                               graph_from_json(require_field(j, "graph", w), w),
                                               what.empty() ? "Replace graph" : what);
       }},
      {"remove_function",
       [](const json& j, const std::string& w) {
         GraphPath::FunctionKey k = function_key_of(j, w);
         return std::make_unique<RemoveFunction>(k.domain, k.name, k.overload);
       }},
      {"batch",
       [](const json& j, const std::string& w) -> std::unique_ptr<Command> {
         return batch_from_json(optional_string_field(j, "name", w), require_field(j, "commands", w));
       }},
  };
  return table;
}

void add(std::vector<Change>& out, Change::Kind k, const GraphPath& p, NodeId node = 0) {
  out.push_back(Change{k, p, node});
}

// Added on apply, removed on undo (or the reverse for `removes`).
Change::Kind added_or_removed(bool undone, bool removes) {
  return undone != removes ? Change::Kind::kNodeRemoved : Change::Kind::kNodeAdded;
}

// The nodes of `g` that a rename touched: those reading or writing `name`, and those holding a
// subgraph that mentions it.
void nodes_mentioning(const Graph& g, const std::string& name, const GraphPath& p, std::vector<Change>& out) {
  for (const Node& n : g.nodes) {
    bool hit = std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end() ||
               std::find(n.outputs.begin(), n.outputs.end(), name) != n.outputs.end();
    for (const Attribute& a : n.attributes) {
      for (const auto& sub : a.graphs) hit = hit || subtree_mentions(*sub, name);
    }
    if (hit) add(out, Change::Kind::kNodeChanged, p, n.id);
  }
}

}  // namespace

std::unique_ptr<Command> command_from_json(const json& j, const std::string& where) {
  require_object(j, where.empty() ? "the command" : where.substr(0, where.size() - 2));
  std::string type = string_field(j, "type", where);
  auto it = readers().find(type);
  if (it == readers().end()) throw JsonError(fmt::format("{}unknown command type '{}'", where, type));
  return it->second(j, where);
}

std::unique_ptr<BatchCommand> batch_from_json(const std::string& name, const json& commands) {
  if (!commands.is_array()) throw JsonError("'commands' must be an array");
  auto batch = std::make_unique<BatchCommand>(name);
  for (size_t i = 0; i < commands.size(); ++i) {
    batch->add(command_from_json(commands[i], fmt::format("command {}: ", i + 1)));
  }
  return batch;
}

// ---- to_json and changes, per class ---------------------------------------------------------------

json BatchCommand::to_json() const {
  json cmds = json::array();
  for (const auto& c : commands_) cmds.push_back(c->to_json());
  return {{"type", "batch"}, {"name", name_}, {"commands", std::move(cmds)}};
}

void BatchCommand::changes(const Model& m, bool undone, std::vector<Change>& out) const {
  if (!undone) {
    for (const auto& c : commands_) c->changes(m, false, out);
    return;
  }
  for (size_t k = commands_.size(); k-- > 0;) commands_[k]->changes(m, true, out);
}

json AddNode::to_json() const {
  json j{{"node", node_to_json(node_)}};
  if (position_ != SIZE_MAX) j["position"] = position_;
  return with_type("add_node", path_, std::move(j));
}
void AddNode::changes(const Model&, bool undone, std::vector<Change>& out) const {
  add(out, added_or_removed(undone, false), path_, id_);
}

json RemoveNode::to_json() const {
  return with_type("remove_node", path_, {{"node", node_ref_to_json(ref_)}});
}
void RemoveNode::changes(const Model&, bool undone, std::vector<Change>& out) const {
  add(out, added_or_removed(undone, true), path_, ref_.id);
}

json RenameNode::to_json() const {
  return with_type("rename_node", path_, {{"node", node_ref_to_json(ref_)}, {"name", new_name_}});
}
void RenameNode::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json SetAttribute::to_json() const {
  return with_type("set_attribute", path_,
                   {{"node", node_ref_to_json(ref_)}, {"attribute", attribute_to_json(attr_)}});
}
void SetAttribute::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json ResetAttribute::to_json() const {
  return with_type("reset_attribute", path_, {{"node", node_ref_to_json(ref_)}, {"name", name_}});
}
void ResetAttribute::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json Connect::to_json() const {
  return with_type("connect", path_,
                   {{"node", node_ref_to_json(ref_)}, {"index", index_}, {"value", value_}});
}
void Connect::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json Disconnect::to_json() const {
  return with_type("disconnect", path_, {{"node", node_ref_to_json(ref_)}, {"index", index_}});
}
void Disconnect::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json SetNodeOutput::to_json() const {
  return with_type("set_node_output", path_,
                   {{"node", node_ref_to_json(ref_)}, {"index", index_}, {"value", value_}});
}
void SetNodeOutput::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json RenameValue::to_json() const {
  return with_type("rename_value", path_, {{"from", from_}, {"to", to_}});
}
void RenameValue::changes(const Model& m, bool undone, std::vector<Change>& out) const {
  const Graph* g = nullptr;
  try {
    g = &resolve_graph(m, path_);
  } catch (const CommandError&) {
    return;  // a later command of the same batch removed the graph; its own change says so
  }
  const std::string& now = undone ? from_ : to_;
  nodes_mentioning(*g, now, path_, out);
  bool io = g->find_input(now) || g->find_output(now);
  if (io) add(out, Change::Kind::kGraphIoChanged, path_);
  if (g->find_initializer(now)) add(out, Change::Kind::kInitializersChanged, path_);
  if (g->find_value_info(now)) add(out, Change::Kind::kValueInfoChanged, path_);
}

json AddInitializer::to_json() const {
  return with_type("add_initializer", path_, {{"tensor", tensor_to_json(tensor_)}});
}
void AddInitializer::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kInitializersChanged, path_);
}

json ReplaceInitializer::to_json() const {
  return with_type("replace_initializer", path_, {{"tensor", tensor_to_json(tensor_)}});
}
void ReplaceInitializer::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kInitializersChanged, path_);
}

json SetInitializerValues::to_json() const {
  return with_type("set_initializer_values", path_,
                   {{"name", name_},
                    {"offset", offset_},
                    {"dtype", std::string(dtype_name(values_.dtype))},
                    {"values", tensor_values_json(values_, SIZE_MAX)}});
}
void SetInitializerValues::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kInitializersChanged, path_);
}

json SetAttributeValues::to_json() const {
  return with_type("set_attribute_values", path_,
                   {{"node", node_ref_to_json(ref_)},
                    {"name", attribute_},
                    {"offset", offset_},
                    {"dtype", std::string(dtype_name(values_.dtype))},
                    {"values", tensor_values_json(values_, SIZE_MAX)}});
}
void SetAttributeValues::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kNodeChanged, path_, ref_.id);
}

json RemoveInitializer::to_json() const {
  return with_type("remove_initializer", path_, {{"name", name_}});
}
void RemoveInitializer::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kInitializersChanged, path_);
}

json AddGraphInput::to_json() const {
  json j{{"value", value_info_to_json(input_)}};
  if (position_ != SIZE_MAX) j["position"] = position_;
  return with_type("add_graph_input", path_, std::move(j));
}
void AddGraphInput::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kGraphIoChanged, path_);
}

json RemoveGraphInput::to_json() const {
  return with_type("remove_graph_input", path_, {{"name", name_}});
}
void RemoveGraphInput::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kGraphIoChanged, path_);
}

json AddGraphOutput::to_json() const {
  json j{{"value", value_info_to_json(output_)}};
  if (position_ != SIZE_MAX) j["position"] = position_;
  return with_type("add_graph_output", path_, std::move(j));
}
void AddGraphOutput::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kGraphIoChanged, path_);
}

json RemoveGraphOutput::to_json() const {
  return with_type("remove_graph_output", path_, {{"name", name_}});
}
void RemoveGraphOutput::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kGraphIoChanged, path_);
}

json SetValueInfo::to_json() const {
  return with_type("set_value_info", path_, {{"value", value_info_to_json(info_)}});
}
void SetValueInfo::changes(const Model&, bool, std::vector<Change>& out) const {
  bool io = false, vi = false;
  for (const Edit& e : edits_) (e.list == List::kValueInfo ? vi : io) = true;
  if (io) add(out, Change::Kind::kGraphIoChanged, path_);
  if (vi) add(out, Change::Kind::kValueInfoChanged, path_);
}

json RemoveValueInfo::to_json() const {
  return with_type("remove_value_info", path_, {{"name", name_}});
}
void RemoveValueInfo::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kValueInfoChanged, path_);
}

json AddFunction::to_json() const {
  return {{"type", "add_function"}, {"function", function_to_json(function_)}};
}
void AddFunction::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kModelChanged, GraphPath::main_graph());
}

json RemoveFunction::to_json() const {
  json f{{"domain", key_.domain}, {"name", key_.name}};
  if (!key_.overload.empty()) f["overload"] = key_.overload;
  return {{"type", "remove_function"}, {"function", std::move(f)}};
}
void RemoveFunction::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kModelChanged, GraphPath::main_graph());
}

json ReplaceFunction::to_json() const {
  return {{"type", "replace_function"}, {"function", function_to_json(function_)}};
}
void ReplaceFunction::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kModelChanged, GraphPath::main_graph());
}

json SetOpsetImport::to_json() const {
  return {{"type", "set_opset_import"},
          {"domain", domain_},
          {"version", version_ ? json(*version_) : json(nullptr)}};
}
void SetOpsetImport::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kModelChanged, GraphPath::main_graph());
}

json SetModelMetadata::to_json() const {
  json j{{"type", "set_model_metadata"}};
  if (md_.doc_string) j["doc_string"] = *md_.doc_string;
  if (md_.producer_name) j["producer_name"] = *md_.producer_name;
  if (md_.producer_version) j["producer_version"] = *md_.producer_version;
  if (md_.domain) j["domain"] = *md_.domain;
  if (md_.model_version) j["model_version"] = *md_.model_version;
  if (md_.graph_name) j["graph_name"] = *md_.graph_name;
  if (md_.metadata_props) {
    j["metadata_props"] = json::object();
    for (const auto& [k, v] : *md_.metadata_props) j["metadata_props"][k] = v;
  }
  return j;
}
void SetModelMetadata::changes(const Model&, bool, std::vector<Change>& out) const {
  add(out, Change::Kind::kModelChanged, GraphPath::main_graph());
}

}  // namespace tessera::ir
