// A terse way to build graphs in code: samples, tests, importers.
//
//   GraphBuilder b(model.graph);
//   auto x = b.input("image", Type::tensor(DataType::kFloat, {Dim::symbol("batch"), ...}));
//   auto y = b.node("Relu", {x}, {}, "relu_1");
//   b.output(y);
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/model.h"

namespace tessera::ir {

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph& g) : g_(g) {}

  std::string input(std::string name, Type type);
  void output(const std::string& value, Type type = {});
  std::string initializer(Tensor t);
  // Adds a node named `name` (generated from the op type when empty) and returns its output names,
  // "<name>" for a single output, "<name>_<k>" otherwise.
  std::vector<std::string> nodes(const std::string& op, std::vector<std::string> inputs,
                                 std::vector<Attribute> attrs = {}, std::string name = {}, size_t outputs = 1,
                                 std::string domain = {});
  std::string node(const std::string& op, std::vector<std::string> inputs, std::vector<Attribute> attrs = {},
                   std::string name = {}) {
    return nodes(op, std::move(inputs), std::move(attrs), std::move(name), 1)[0];
  }

  // Initializers with deterministic pseudo-random contents.
  std::string random_normal(const std::string& name, std::vector<int64_t> dims, float stddev);
  std::string constant_floats(const std::string& name, std::vector<int64_t> dims, float value);
  std::string constant_ints(const std::string& name, std::vector<int64_t> values);

 private:
  std::string unique(const std::string& base);

  Graph& g_;
  std::mt19937 rng_{20261121};
  int64_t counter_ = 0;
  std::unordered_set<std::string> names_;  // node names taken, filled on first use
};

}  // namespace tessera::ir
