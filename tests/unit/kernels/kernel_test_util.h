// Shared by the reference-kernel tests of tests/unit/kernels: running one node on the CPU (inputs fed as
// graph inputs of their element type, an undefined tensor leaving that input out) and building and
// reading small tensors.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace tessera::kernel_test {

// How run_one_node runs its node.
struct OneNodeRun {
  size_t outputs = 1;
  std::string domain = "";  // "" for ai.onnx; another domain is imported at version 1
  int threads = 1;
  std::optional<rt::OptLevel> optimization = std::nullopt;  // unset: the session's default level
};

// Runs node `op` (opset `opset`) on `ins`; returns its outputs. Throws what the session throws.
inline std::vector<rt::Tensor> run_one_node(const std::string& op, int opset,
                                            const std::vector<rt::Tensor>& ins,
                                            std::vector<ir::Attribute> attrs, const OneNodeRun& how) {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", opset}};
  if (!how.domain.empty()) m.opset_imports.push_back({how.domain, 1});
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> names;
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i].defined()) {
      names.emplace_back();
      continue;
    }
    std::string name = "in" + std::to_string(i);
    b.input(name, ir::Type::tensor(ins[i].dtype()));
    names.push_back(name);
    feeds.emplace_back(name, rt::Value(ins[i]));
  }
  auto outs = b.nodes(op, names, std::move(attrs), "node", how.outputs, how.domain);
  for (const auto& o : outs) b.output(o);
  rt::SessionOptions options;
  options.threads = how.threads;
  if (how.optimization) options.optimization = *how.optimization;
  rt::Session s(std::move(m), options);
  std::vector<rt::Tensor> result;
  for (const rt::Value& v : s.run(feeds)) result.push_back(v.tensor());
  return result;
}

// The message of what running the node throws ("" when it runs).
inline std::string run_error(const std::string& op, int opset, const std::vector<rt::Tensor>& ins,
                             std::vector<ir::Attribute> attrs, const OneNodeRun& how) {
  try {
    run_one_node(op, opset, ins, std::move(attrs), how);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

template <class T>
rt::Tensor make(ir::DataType dt, rt::Shape shape, std::vector<T> values) {
  return rt::Tensor::from_vector<T>(dt, std::move(shape), values);
}

// A 1-D tensor of `values`.
template <class T>
rt::Tensor vec(ir::DataType dt, std::vector<T> values) {
  auto n = static_cast<int64_t>(values.size());
  return rt::Tensor::from_vector<T>(dt, {n}, values);
}

template <class T>
std::vector<T> values(const rt::Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

}  // namespace tessera::kernel_test
