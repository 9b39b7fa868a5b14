// The InferenceContext the checker hands to an operator's shape-inference function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/graph_checker.h"
#include "ops/infer.h"

namespace tessera::check {

class NodeContext final : public ops::InferenceContext {
 public:
  NodeContext(Checker& checker, const ir::Node& node, const ops::OpSchema& schema, int opset, Scope& scope,
              const std::string& path, const GraphEnv& env, NodeScratch& scratch);

  const ir::Node& node() const override { return node_; }
  const ops::OpSchema& schema() const override { return schema_; }
  int opset() const override { return opset_; }
  const ir::Type* input_type(size_t i) const override;
  const ir::Tensor* input_constant(size_t i) const override;
  const std::vector<ir::Dim>* input_shape_value(size_t i) const override;
  void set_output_type(size_t i, ir::Type t) override;
  void set_output_shape_value(size_t i, std::vector<ir::Dim> value) override;
  const ir::Type* output_type(size_t i) const override;
  std::vector<ir::Type> infer_subgraph(const ir::Graph& g, const std::vector<ir::Type>& input_types) override;
  ir::Dim new_symbol() override { return checker_.new_symbol(); }
  void warn(std::string msg, int input_index = -1) override;

  std::vector<std::optional<ir::Type>>& outputs() { return s_.outputs; }
  std::vector<std::optional<std::vector<ir::Dim>>>& shape_values() { return s_.shape_values; }
  const std::vector<const ir::Graph*>& visited_subgraphs() const { return s_.visited; }

 private:
  const ValueFacts* facts(size_t i) const;

  Checker& checker_;
  const ir::Node& node_;
  const ops::OpSchema& schema_;
  int opset_;
  Scope& scope_;
  const std::string& path_;
  const GraphEnv& env_;
  NodeScratch& s_;
};

// "main/if_1.then_branch": where a subgraph of `node` lives, for diagnostics.
std::string subgraph_path(const std::string& parent, const ir::Node& node, const ir::Graph& g);

}  // namespace tessera::check
