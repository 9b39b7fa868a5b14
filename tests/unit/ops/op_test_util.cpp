#include "ops/op_test_util.h"

namespace tessera::testing {

OpResult infer(const OpCase& c) {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports.push_back({"", c.domain.empty() ? c.opset : 21});
  if (!c.domain.empty()) m.opset_imports.push_back({c.domain, c.opset});

  ir::Node node;
  node.name = "n";
  node.op_type = c.op;
  node.domain = c.domain;
  node.attributes = c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i] && !c.constants.count(i)) {
      node.inputs.emplace_back();
      continue;
    }
    std::string name = "in" + std::to_string(i);
    node.inputs.push_back(name);
    if (auto it = c.constants.find(i); it != c.constants.end()) {
      ir::Tensor t = it->second;
      t.name = name;
      m.graph.initializers.push_back(std::move(t));
      continue;
    }
    m.graph.inputs.push_back({name, *c.inputs[i], {}, {}});
  }
  // Constants beyond the listed inputs still become inputs at their index.
  for (const auto& [idx, t] : c.constants) {
    if (idx < c.inputs.size()) continue;
    while (node.inputs.size() < idx) node.inputs.emplace_back();
    std::string name = "in" + std::to_string(idx);
    node.inputs.push_back(name);
    ir::Tensor copy = t;
    copy.name = name;
    m.graph.initializers.push_back(std::move(copy));
  }
  for (size_t o = 0; o < c.num_outputs; ++o) node.outputs.push_back("out" + std::to_string(o));
  m.graph.add_node(std::move(node));

  check::CheckResult r = check::check_model(m);
  OpResult out;
  out.diags = std::move(r.diagnostics);
  // Graph inputs of kind kNone are an error at the top level; tests use them for "unknown", so drop it.
  std::erase_if(out.diags.items, [](const check::Diagnostic& d) {
    return d.node.empty() && d.message.find("has no type") != std::string::npos;
  });
  for (size_t o = 0; o < c.num_outputs; ++o) {
    auto it = r.value_types.find("out" + std::to_string(o));
    out.outputs.push_back(it == r.value_types.end() ? ir::Type{} : it->second);
  }
  return out;
}

std::string OpResult::errors() const {
  std::string s;
  for (const auto& d : diags.items) s += d.to_string() + "\n";
  return s;
}

ir::Type T(ir::DataType elem, std::vector<std::variant<int64_t, std::string>> dims) {
  ir::Shape shape;
  for (auto& d : dims) {
    if (auto* v = std::get_if<int64_t>(&d)) {
      shape.push_back(ir::Dim::of(*v));
    } else {
      shape.push_back(ir::Dim::symbol(std::get<std::string>(d)));
    }
  }
  return ir::Type::tensor(elem, std::move(shape));
}

ir::Type T(ir::DataType elem) {
  return ir::Type::tensor(elem);
}

ir::Tensor ints_tensor(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {n}, values);
}

ir::Tensor float_tensor(std::vector<int64_t> dims, std::vector<float> values) {
  return ir::make_tensor<float>("", ir::DataType::kFloat, std::move(dims), values);
}

}  // namespace tessera::testing
