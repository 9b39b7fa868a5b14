#include "ir/attribute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "ir/graph.h"

namespace tessera::ir {

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kFloat:
      return "float";
    case AttrType::kInt:
      return "int";
    case AttrType::kString:
      return "string";
    case AttrType::kTensor:
      return "tensor";
    case AttrType::kGraph:
      return "graph";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kInts:
      return "ints";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensors:
      return "tensors";
    case AttrType::kGraphs:
      return "graphs";
    case AttrType::kSparseTensor:
      return "sparse_tensor";
    case AttrType::kSparseTensors:
      return "sparse_tensors";
    case AttrType::kTypeProto:
      return "type_proto";
    case AttrType::kTypeProtos:
      return "type_protos";
    case AttrType::kUndefined:
      break;
  }
  return "undefined";
}

bool attr_type_is_list(AttrType t) {
  switch (t) {
    case AttrType::kFloats:
    case AttrType::kInts:
    case AttrType::kStrings:
    case AttrType::kTensors:
    case AttrType::kGraphs:
    case AttrType::kSparseTensors:
    case AttrType::kTypeProtos:
      return true;
    default:
      return false;
  }
}

Attribute Attribute::of_float(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}
Attribute Attribute::of_int(std::string name, int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}
Attribute Attribute::of_string(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kString;
  a.s = std::move(v);
  return a;
}
Attribute Attribute::of_floats(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}
Attribute Attribute::of_ints(std::string name, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute Attribute::of_strings(std::string name, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}
Attribute Attribute::of_tensor(std::string name, Tensor v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kTensor;
  a.tensors.push_back(std::move(v));
  return a;
}
Attribute Attribute::of_graph(std::string name, Graph g) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kGraph;
  a.graphs.emplace_back(std::move(g));
  return a;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string tensor_summary(const Tensor& t) {
  std::string dims;
  for (size_t i = 0; i < t.dims.size(); ++i) dims += (i ? "," : "") + std::to_string(t.dims[i]);
  return fmt::format("<tensor {}[{}]>", dtype_name(t.dtype), dims);
}

}  // namespace

std::string Attribute::value_string() const {
  if (is_reference()) return "@" + ref_attr_name;
  switch (type) {
    case AttrType::kFloat:
      return fmt::format("{}", f);
    case AttrType::kInt:
      return std::to_string(i);
    case AttrType::kString:
      return quote(s);
    case AttrType::kFloats:
      return fmt::format("[{}]", fmt::join(floats, ", "));
    case AttrType::kInts:
      return fmt::format("[{}]", fmt::join(ints, ", "));
    case AttrType::kStrings: {
      std::vector<std::string> q;
      for (const auto& s1 : strings) q.push_back(quote(s1));
      return fmt::format("[{}]", fmt::join(q, ", "));
    }
    case AttrType::kTensor:
      return tensors.empty() ? "<tensor>" : tensor_summary(tensors[0]);
    case AttrType::kGraph:
      return graphs.empty() ? "<graph>" : fmt::format("<graph {}>", graphs[0]->name);
    case AttrType::kTensors:
      return fmt::format("<{} tensors>", tensors.size());
    case AttrType::kGraphs:
      return fmt::format("<{} graphs>", graphs.size());
    case AttrType::kSparseTensor:
      return "<sparse tensor>";
    case AttrType::kSparseTensors:
      return fmt::format("<{} sparse tensors>", sparse_tensors.size());
    case AttrType::kTypeProto:
      return types.empty() ? "<type>" : types[0].to_string();
    case AttrType::kTypeProtos:
      return fmt::format("<{} types>", types.size());
    case AttrType::kUndefined:
      break;
  }
  return "<undefined>";
}

bool Attribute::operator==(const Attribute& o) const {
  // Floats compare by bit pattern so that NaN defaults (and -0.0) round-trip as equal.
  auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  if (name != o.name || type != o.type || ref_attr_name != o.ref_attr_name || doc_string != o.doc_string)
    return false;
  if (!same_bits(f, o.f) || i != o.i || s != o.s || ints != o.ints || strings != o.strings) return false;
  if (floats.size() != o.floats.size()) return false;
  for (size_t k = 0; k < floats.size(); ++k) {
    if (!same_bits(floats[k], o.floats[k])) return false;
  }
  return tensors == o.tensors && graphs == o.graphs && sparse_tensors == o.sparse_tensors &&
         types == o.types && unknown_fields == o.unknown_fields;
}

}  // namespace tessera::ir
