#include "ir/builder.h"

#include <unordered_set>

namespace tessera::ir {

std::string GraphBuilder::unique(const std::string& base) {
  if (names_.empty()) {
    for (const Node& node : g_.nodes) names_.insert(node.name);
  }
  std::string n = base;
  while (names_.count(n)) n = base + "_" + std::to_string(++counter_);
  names_.insert(n);
  return n;
}

std::string GraphBuilder::input(std::string name, Type type) {
  g_.inputs.push_back({name, std::move(type), {}, {}});
  return name;
}

void GraphBuilder::output(const std::string& value, Type type) {
  g_.outputs.push_back({value, std::move(type), {}, {}});
}

std::string GraphBuilder::initializer(Tensor t) {
  std::string name = t.name;
  g_.initializers.push_back(std::move(t));
  return name;
}

std::vector<std::string> GraphBuilder::nodes(const std::string& op, std::vector<std::string> inputs,
                                             std::vector<Attribute> attrs, std::string name, size_t outputs,
                                             std::string domain) {
  Node n;
  n.op_type = op;
  n.domain = std::move(domain);
  n.name = unique(name.empty() ? op : name);
  n.inputs = std::move(inputs);
  n.attributes = std::move(attrs);
  for (size_t k = 0; k < outputs; ++k)
    n.outputs.push_back(outputs == 1 ? n.name : n.name + "_" + std::to_string(k));
  std::vector<std::string> outs = n.outputs;
  g_.add_node(std::move(n));
  return outs;
}

std::string GraphBuilder::random_normal(const std::string& name, std::vector<int64_t> dims, float stddev) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = dist(rng_);
  return initializer(make_tensor(name, DataType::kFloat, std::move(dims), values));
}

std::string GraphBuilder::constant_floats(const std::string& name, std::vector<int64_t> dims, float value) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return initializer(make_tensor(name, DataType::kFloat, std::move(dims), std::vector<float>(n, value)));
}

std::string GraphBuilder::constant_ints(const std::string& name, std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return initializer(make_tensor(name, DataType::kInt64, {n}, values));
}

}  // namespace tessera::ir
