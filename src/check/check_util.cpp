#include "check/check_util.h"

namespace tessera::check {

std::string node_name(const ir::Node& n) {
  return n.name.empty() ? "<unnamed " + n.op_type + ">" : n.name;
}

// Materialises the value of a Constant node so later nodes can use it (Reshape targets, Slice starts).
std::optional<ir::Tensor> constant_value(const ir::Node& node) {
  for (const ir::Attribute& a : node.attributes) {
    if (a.is_reference()) continue;
    if (a.name == "value" && a.type == ir::AttrType::kTensor && !a.tensors.empty()) return a.tensors[0];
    if (a.name == "value_int" && a.type == ir::AttrType::kInt)
      return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {}, {a.i});
    if (a.name == "value_ints" && a.type == ir::AttrType::kInts)
      return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {static_cast<int64_t>(a.ints.size())},
                                      a.ints);
    if (a.name == "value_float" && a.type == ir::AttrType::kFloat)
      return ir::make_tensor<float>("", ir::DataType::kFloat, {}, {a.f});
    if (a.name == "value_floats" && a.type == ir::AttrType::kFloats)
      return ir::make_tensor<float>("", ir::DataType::kFloat, {static_cast<int64_t>(a.floats.size())},
                                    a.floats);
  }
  return std::nullopt;
}
bool tensor_data_usable(const ir::Tensor& t) {
  if (t.dtype == ir::DataType::kString)
    return t.numel() && static_cast<size_t>(*t.numel()) == t.strings.size();
  auto need = t.expected_bytes();
  return need && static_cast<int64_t>(t.bytes().size()) == *need;
}
// Domains whose operators Tessera knows completely: an unknown operator there is an error. In other
// domains it is a custom operator, which runtimes may provide; it is only warned about.
bool is_standard_domain(std::string_view d) {
  return d.empty() || d == "ai.onnx.ml" || d == "ai.onnx.preview.training" || d == "ai.onnx.preview";
}
std::optional<int64_t> imported_version(const std::vector<ir::OpsetImport>& opsets, std::string_view domain) {
  for (const auto& o : opsets) {
    if (ir::canonical_domain(o.domain) == ir::canonical_domain(domain)) return o.version;
  }
  return std::nullopt;
}

}  // namespace tessera::check
