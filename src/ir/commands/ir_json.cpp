#include "ir/commands/ir_json.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "io/npy.h"
#include "ir/commands/json_float.h"

namespace tessera::ir {

// ---- field access --------------------------------------------------------------------------------

namespace {
// "command 3: " -> "command 3"; "" -> "the request": how a message names the object itself.
std::string object_what(const std::string& where) {
  if (where.empty()) return "the request";
  return where.ends_with(": ") ? where.substr(0, where.size() - 2) : where;
}
}  // namespace

void require_object(const json& j, const std::string& what) {
  if (!j.is_object()) throw JsonError(fmt::format("{} must be a JSON object", what));
}

const json& require_field(const json& obj, const char* key, const std::string& where) {
  require_object(obj, object_what(where));
  auto it = obj.find(key);
  if (it == obj.end()) throw JsonError(fmt::format("{}'{}' is missing", where, key));
  return *it;
}

std::string string_field(const json& obj, const char* key, const std::string& where) {
  const json& v = require_field(obj, key, where);
  if (!v.is_string()) throw JsonError(fmt::format("{}'{}' must be a string", where, key));
  return v.get<std::string>();
}

std::string optional_string_field(const json& obj, const char* key, const std::string& where) {
  require_object(obj, object_what(where));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) throw JsonError(fmt::format("{}'{}' must be a string", where, key));
  return it->get<std::string>();
}

int64_t int_field(const json& obj, const char* key, const std::string& where) {
  const json& v = require_field(obj, key, where);
  if (!v.is_number_integer()) {
    throw JsonError(fmt::format("{}'{}' must be an integer", where, key));
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    throw JsonError(fmt::format("{}'{}' is out of range", where, key));
  }
  return v.get<int64_t>();
}

size_t index_field(const json& obj, const char* key, const std::string& where) {
  const json& v = require_field(obj, key, where);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) {
    throw JsonError(fmt::format("{}'{}' must be a non-negative integer", where, key));
  }
  return v.get<size_t>();
}

namespace {

std::vector<std::string> string_list(const json& obj, const char* key, const std::string& where,
                                     bool required) {
  require_object(obj, object_what(where));
  auto it = obj.find(key);
  if (it == obj.end() || (!required && it->is_null())) {
    if (required) throw JsonError(fmt::format("{}'{}' is missing", where, key));
    return {};
  }
  if (!it->is_array()) throw JsonError(fmt::format("{}'{}' must be an array of strings", where, key));
  std::vector<std::string> out;
  for (const json& s : *it) {
    if (!s.is_string()) {
      throw JsonError(fmt::format("{}'{}' must be an array of strings", where, key));
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}

const json* optional_array(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_array()) throw JsonError(fmt::format("{}'{}' must be an array", where, key));
  return &*it;
}

std::string item_where(const std::string& where, const char* key, size_t i) {
  return fmt::format("{}{}[{}]: ", where, key, i);
}

}  // namespace

// ---- types ---------------------------------------------------------------------------------------

json shape_to_json(const Shape& s) {
  json out = json::array();
  for (const Dim& d : s) {
    if (d.is_static()) {
      out.push_back(d.value);
    } else if (d.is_symbolic()) {
      out.push_back(d.param);
    } else {
      out.push_back(nullptr);
    }
  }
  return out;
}

Shape shape_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) throw JsonError(fmt::format("{}'shape' must be an array", where));
  Shape s;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& d = j[i];
    if (d.is_null()) {
      s.push_back(Dim::unknown());
    } else if (d.is_string()) {
      s.push_back(Dim::symbol(d.get<std::string>()));
    } else if (d.is_number_integer() && (d.is_number_unsigned() || d.get<int64_t>() >= 0)) {
      s.push_back(Dim::of(d.get<int64_t>()));
    } else {
      throw JsonError(
          fmt::format("{}'shape'[{}] must be a non-negative integer, a symbol or null", where, i));
    }
  }
  return s;
}

json value_info_to_json(const ValueInfo& v) {
  json j{{"name", v.name}, {"type", v.type.is_none() ? std::string() : v.type.type_string()}};
  j["shape"] = v.type.shape ? shape_to_json(*v.type.shape) : json(nullptr);
  if (!v.doc_string.empty()) j["doc_string"] = v.doc_string;
  return j;
}

ValueInfo value_info_from_json(const json& j, const std::string& where) {
  ValueInfo v;
  v.name = string_field(j, "name", where);
  std::string type = optional_string_field(j, "type", where);
  v.doc_string = optional_string_field(j, "doc_string", where);
  if (type.empty()) return v;  // no type recorded
  std::optional<Type> t = parse_type_string(type);
  if (!t) throw JsonError(fmt::format("{}'type' '{}' is not a type", where, type));
  v.type = *t;
  auto it = j.find("shape");
  if (it != j.end() && !it->is_null()) {
    if (!v.type.is_tensor() && v.type.kind != Type::Kind::kSparseTensor) {
      throw JsonError(fmt::format("{}a shape is given for type '{}', which is not a tensor", where, type));
    }
    v.type.shape = shape_from_json(*it, where);
  }
  return v;
}

// ---- attributes ----------------------------------------------------------------------------------

namespace {

constexpr size_t kGraphAnswerTensorValues = 64;

json graphs_count_or_full(const Attribute& a, bool full) {
  if (!full) return static_cast<int64_t>(a.graphs.size());
  if (a.type == AttrType::kGraph) return a.graphs.empty() ? json(nullptr) : graph_to_json(*a.graphs[0]);
  json out = json::array();
  for (const auto& g : a.graphs) out.push_back(graph_to_json(*g));
  return out;
}

json attribute_value_json(const Attribute& a, bool full) {
  size_t limit = full ? SIZE_MAX : kGraphAnswerTensorValues;
  switch (a.type) {
    case AttrType::kFloat:
      return json_float(a.f);
    case AttrType::kInt:
      return a.i;
    case AttrType::kString:
      return a.s;
    case AttrType::kFloats: {
      json out = json::array();
      for (float f : a.floats) out.push_back(json_float(f));
      return out;
    }
    case AttrType::kInts:
      return a.ints;
    case AttrType::kStrings:
      return a.strings;
    case AttrType::kTensor:
      return a.tensors.empty() ? json(nullptr) : tensor_to_json(a.tensors[0], limit);
    case AttrType::kTensors: {
      json out = json::array();
      for (const Tensor& t : a.tensors) out.push_back(tensor_to_json(t, limit));
      return out;
    }
    case AttrType::kGraph:
    case AttrType::kGraphs:
      return graphs_count_or_full(a, full);
    case AttrType::kSparseTensor:
    case AttrType::kSparseTensors:
      return static_cast<int64_t>(a.sparse_tensors.size());
    case AttrType::kTypeProto:
    case AttrType::kTypeProtos: {
      json out = json::array();
      for (const Type& t : a.types) out.push_back(t.to_string());
      return out;
    }
    case AttrType::kUndefined:
      break;
  }
  return nullptr;
}

std::optional<AttrType> attr_type_from_name(std::string_view name) {
  for (int k = 1; k <= static_cast<int>(AttrType::kTypeProtos); ++k) {
    if (attr_type_name(static_cast<AttrType>(k)) == name) return static_cast<AttrType>(k);
  }
  return std::nullopt;
}

// A float attribute: a number, or "nan", "inf", "-inf" (json_float.h).
float float_value(const json& v, const std::string& what) {
  return static_cast<float>(json_float_value(v, what));
}

int64_t int_value(const json& v, const std::string& what) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
    throw JsonError(fmt::format("{} must be an integer", what));
  }
  return v.get<int64_t>();
}

// An attribute's tensor: its name is optional (ONNX leaves it empty there; an initializer needs one).
Tensor attribute_tensor(const json& v, const std::string& what) {
  if (!v.is_object() || v.contains("name")) return tensor_from_json(v, what);
  json named = v;
  named["name"] = "";
  return tensor_from_json(named, what);
}

void fill_attribute_value(Attribute& a, const json& v, const std::string& what) {
  auto list = [&](auto&& each) {
    if (!v.is_array()) throw JsonError(fmt::format("{} must be an array", what));
    for (size_t i = 0; i < v.size(); ++i) each(v[i], fmt::format("{}[{}]", what, i));
  };
  switch (a.type) {
    case AttrType::kFloat:
      a.f = float_value(v, what);
      return;
    case AttrType::kInt:
      a.i = int_value(v, what);
      return;
    case AttrType::kString:
      if (!v.is_string()) throw JsonError(fmt::format("{} must be a string", what));
      a.s = v.get<std::string>();
      return;
    case AttrType::kFloats:
      list([&](const json& x, const std::string& w) { a.floats.push_back(float_value(x, w)); });
      return;
    case AttrType::kInts:
      list([&](const json& x, const std::string& w) { a.ints.push_back(int_value(x, w)); });
      return;
    case AttrType::kStrings:
      list([&](const json& x, const std::string& w) {
        if (!x.is_string()) throw JsonError(fmt::format("{} must be a string", w));
        a.strings.push_back(x.get<std::string>());
      });
      return;
    case AttrType::kTensor:
      a.tensors.push_back(attribute_tensor(v, what + ": "));
      return;
    case AttrType::kTensors:
      list([&](const json& x, const std::string& w) { a.tensors.push_back(attribute_tensor(x, w + ": ")); });
      return;
    case AttrType::kGraph:
      a.graphs.emplace_back(graph_from_json(v, what + ": "));
      return;
    case AttrType::kGraphs:
      list([&](const json& x, const std::string& w) { a.graphs.emplace_back(graph_from_json(x, w + ": ")); });
      return;
    default:
      throw JsonError(
          fmt::format("{}: attributes of type '{}' cannot be set from JSON", what, attr_type_name(a.type)));
  }
}

}  // namespace

json attribute_to_json(const Attribute& a, bool full) {
  json j{{"name", a.name}, {"type", std::string(attr_type_name(a.type))}};
  if (a.is_reference()) {
    j["ref"] = a.ref_attr_name;
  } else {
    j["value"] = attribute_value_json(a, full);
  }
  if (!a.doc_string.empty()) j["doc_string"] = a.doc_string;
  return j;
}

Attribute attribute_from_json(const json& j, const std::string& where) {
  Attribute a;
  a.name = string_field(j, "name", where);
  std::string w = fmt::format("{}attribute '{}': ", where, a.name);
  std::string type = string_field(j, "type", w);
  std::optional<AttrType> t = attr_type_from_name(type);
  if (!t) throw JsonError(fmt::format("{}'type' '{}' is not an attribute type", w, type));
  a.type = *t;
  a.doc_string = optional_string_field(j, "doc_string", w);
  a.ref_attr_name = optional_string_field(j, "ref", w);
  if (a.is_reference()) return a;
  fill_attribute_value(a, require_field(j, "value", w), w + "'value'");
  return a;
}

// ---- nodes, graphs, functions --------------------------------------------------------------------

json node_to_json(const Node& n) {
  json j{{"name", n.name},
         {"op_type", n.op_type},
         {"domain", n.domain},
         {"inputs", n.inputs},
         {"outputs", n.outputs}};
  if (!n.overload.empty()) j["overload"] = n.overload;
  if (!n.doc_string.empty()) j["doc_string"] = n.doc_string;
  j["attributes"] = json::array();
  for (const Attribute& a : n.attributes) j["attributes"].push_back(attribute_to_json(a));
  return j;
}

Node node_from_json(const json& j, const std::string& where) {
  Node n;
  n.name = optional_string_field(j, "name", where);
  std::string w = n.name.empty() ? where : fmt::format("{}node '{}': ", where, n.name);
  n.op_type = string_field(j, "op_type", w);
  n.domain = std::string(canonical_domain(optional_string_field(j, "domain", w)));
  n.overload = optional_string_field(j, "overload", w);
  n.doc_string = optional_string_field(j, "doc_string", w);
  n.inputs = string_list(j, "inputs", w, false);
  n.outputs = string_list(j, "outputs", w, false);
  if (const json* attrs = optional_array(j, "attributes", w)) {
    for (size_t i = 0; i < attrs->size(); ++i) {
      n.attributes.push_back(attribute_from_json((*attrs)[i], item_where(w, "attributes", i)));
    }
  }
  return n;
}

json graph_to_json(const Graph& g) {
  json j{{"name", g.name}};
  for (const char* key : {"inputs", "outputs", "initializers", "nodes"}) j[key] = json::array();
  for (const ValueInfo& v : g.inputs) j["inputs"].push_back(value_info_to_json(v));
  for (const ValueInfo& v : g.outputs) j["outputs"].push_back(value_info_to_json(v));
  for (const Tensor& t : g.initializers) j["initializers"].push_back(tensor_to_json(t));
  for (const Node& n : g.nodes) j["nodes"].push_back(node_to_json(n));
  if (!g.value_info.empty()) {
    j["value_info"] = json::array();
    for (const ValueInfo& v : g.value_info) j["value_info"].push_back(value_info_to_json(v));
  }
  return j;
}

namespace {
// Subgraphs nest through attributes; a request nesting them without end must be refused, not recursed
// into until the stack runs out. The same bound as loading a file (onnx::LoadOptions).
constexpr int kMaxGraphDepth = 64;
thread_local int graph_depth = 0;
}  // namespace

Graph graph_from_json(const json& j, const std::string& where) {
  require_object(j, where + "the graph");
  if (graph_depth >= kMaxGraphDepth) {
    throw JsonError(fmt::format("{}subgraphs are nested more than {} deep", where, kMaxGraphDepth));
  }
  struct Depth {
    Depth() { ++graph_depth; }
    ~Depth() { --graph_depth; }
  } depth;
  Graph g;
  g.name = optional_string_field(j, "name", where);
  auto each = [&](const char* key, auto&& fn) {
    if (const json* arr = optional_array(j, key, where)) {
      for (size_t i = 0; i < arr->size(); ++i) fn((*arr)[i], item_where(where, key, i));
    }
  };
  each("inputs",
       [&](const json& x, const std::string& w) { g.inputs.push_back(value_info_from_json(x, w)); });
  each("outputs",
       [&](const json& x, const std::string& w) { g.outputs.push_back(value_info_from_json(x, w)); });
  each("value_info",
       [&](const json& x, const std::string& w) { g.value_info.push_back(value_info_from_json(x, w)); });
  each("initializers",
       [&](const json& x, const std::string& w) { g.initializers.push_back(tensor_from_json(x, w)); });
  each("nodes", [&](const json& x, const std::string& w) { g.add_node(node_from_json(x, w)); });
  return g;
}

json function_to_json(const Function& f) {
  json j{{"domain", f.domain}, {"name", f.name}, {"attributes", f.attributes}};
  if (!f.overload.empty()) j["overload"] = f.overload;
  if (!f.doc_string.empty()) j["doc_string"] = f.doc_string;
  j["inputs"] = json::array();
  j["outputs"] = json::array();
  for (const ValueInfo& v : f.body.inputs) j["inputs"].push_back(v.name);
  for (const ValueInfo& v : f.body.outputs) j["outputs"].push_back(v.name);
  j["attribute_defaults"] = json::array();
  for (const Attribute& a : f.attribute_defaults) j["attribute_defaults"].push_back(attribute_to_json(a));
  j["opset_imports"] = json::array();
  for (const OpsetImport& o : f.opset_imports) {
    j["opset_imports"].push_back({{"domain", o.domain}, {"version", o.version}});
  }
  j["nodes"] = json::array();
  for (const Node& n : f.body.nodes) j["nodes"].push_back(node_to_json(n));
  return j;
}

Function function_from_json(const json& j, const std::string& where) {
  Function f;
  f.name = string_field(j, "name", where);
  f.domain = optional_string_field(j, "domain", where);
  f.overload = optional_string_field(j, "overload", where);
  f.doc_string = optional_string_field(j, "doc_string", where);
  std::string w = fmt::format("{}function '{}': ", where, f.name);
  for (std::string& s : string_list(j, "inputs", w, false))
    f.body.inputs.push_back({std::move(s), {}, {}, {}});
  for (std::string& s : string_list(j, "outputs", w, false))
    f.body.outputs.push_back({std::move(s), {}, {}, {}});
  f.attributes = string_list(j, "attributes", w, false);
  if (const json* defs = optional_array(j, "attribute_defaults", w)) {
    for (size_t i = 0; i < defs->size(); ++i) {
      f.attribute_defaults.push_back(attribute_from_json((*defs)[i], item_where(w, "attribute_defaults", i)));
    }
  }
  if (const json* ops = optional_array(j, "opset_imports", w)) {
    for (size_t i = 0; i < ops->size(); ++i) {
      std::string iw = item_where(w, "opset_imports", i);
      f.opset_imports.push_back(
          {optional_string_field((*ops)[i], "domain", iw), int_field((*ops)[i], "version", iw)});
    }
  }
  if (const json* nodes = optional_array(j, "nodes", w)) {
    for (size_t i = 0; i < nodes->size(); ++i) {
      f.body.add_node(node_from_json((*nodes)[i], item_where(w, "nodes", i)));
    }
  }
  return f;
}

// ---- graph paths and node references -------------------------------------------------------------

json graph_path_to_json(const GraphPath& p) {
  json j = json::object();
  if (p.function) {
    j["function"] = {{"domain", p.function->domain}, {"name", p.function->name}};
    if (!p.function->overload.empty()) j["function"]["overload"] = p.function->overload;
  }
  j["steps"] = json::array();
  for (const GraphPath::Step& s : p.steps) {
    j["steps"].push_back({{"node", s.node}, {"attribute", s.attribute}, {"index", s.index}});
  }
  return j;
}

GraphPath graph_path_from_json(const json& j, const std::string& where) {
  GraphPath p;
  if (j.is_null()) return p;
  std::string w = where + "'path': ";
  require_object(j, where + "'path'");
  auto fn = j.find("function");
  if (fn != j.end() && !fn->is_null()) {
    std::string fw = w + "'function': ";
    p.function =
        GraphPath::FunctionKey{optional_string_field(*fn, "domain", fw), string_field(*fn, "name", fw),
                               optional_string_field(*fn, "overload", fw)};
  }
  if (const json* steps = optional_array(j, "steps", w)) {
    for (size_t i = 0; i < steps->size(); ++i) {
      std::string sw = item_where(w, "steps", i);
      const json& s = (*steps)[i];
      GraphPath::Step step;
      step.node = index_field(s, "node", sw);
      step.attribute = string_field(s, "attribute", sw);
      step.index = s.contains("index") ? index_field(s, "index", sw) : 0;
      p.steps.push_back(std::move(step));
    }
  }
  return p;
}

json node_ref_to_json(const NodeRef& r) {
  return r.id != 0 ? json(r.id) : json(r.name);
}

NodeRef node_ref_from_json(const json& j, const std::string& where) {
  if (j.is_string()) return NodeRef(j.get<std::string>());
  if (j.is_number_integer() && (j.is_number_unsigned() || j.get<int64_t>() > 0) && j.get<uint64_t>() != 0) {
    return NodeRef(static_cast<NodeId>(j.get<uint64_t>()));
  }
  throw JsonError(fmt::format("{}'node' must be a node id (a positive integer) or a node name", where));
}

// ---- base64 --------------------------------------------------------------------------------------

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  uint32_t v = uint8_t(bytes[i]) << 16;
  if (rest == 2) v |= uint8_t(bytes[i + 1]) << 8;
  out += kAlphabet[(v >> 18) & 63];
  out += kAlphabet[(v >> 12) & 63];
  out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
  out += '=';
  return out;
}

std::string base64_decode(std::string_view text, const std::string& where) {
  if (text.size() % 4 != 0) {
    throw JsonError(fmt::format("{}base64 text has a length of {}, not a multiple of 4", where, text.size()));
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        ++pad;
        v <<= 6;
        continue;
      }
      int s = sextet(c);
      if (s < 0 || pad > 0) {
        throw JsonError(fmt::format("{}base64 text has an invalid character at offset {}", where, i + k));
      }
      v = (v << 6) | static_cast<uint32_t>(s);
    }
    out += static_cast<char>((v >> 16) & 255);
    if (pad < 2) out += static_cast<char>((v >> 8) & 255);
    if (pad < 1) out += static_cast<char>(v & 255);
  }
  return out;
}

}  // namespace tessera::ir
