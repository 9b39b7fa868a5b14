#include "check/node_context.h"

namespace tessera::check {

NodeContext::NodeContext(Checker& checker, const ir::Node& node, const ops::OpSchema& schema, int opset,
                         Scope& scope, const std::string& path, const GraphEnv& env, NodeScratch& scratch)
    : checker_(checker),
      node_(node),
      schema_(schema),
      opset_(opset),
      scope_(scope),
      path_(path),
      env_(env),
      s_(scratch) {
  s_.outputs.assign(node.outputs.size(), std::nullopt);
  s_.shape_values.assign(node.outputs.size(), std::nullopt);
  s_.visited.clear();
}

const ValueFacts* NodeContext::facts(size_t i) const {
  if (!has_input(i)) return nullptr;
  return scope_.find(node_.inputs[i]);
}

const ir::Type* NodeContext::input_type(size_t i) const {
  const ValueFacts* f = facts(i);
  return f && !f->type.is_none() ? &f->type : nullptr;
}

const ir::Tensor* NodeContext::input_constant(size_t i) const {
  const ValueFacts* f = facts(i);
  return f ? f->constant : nullptr;
}

const std::vector<ir::Dim>* NodeContext::input_shape_value(size_t i) const {
  const ValueFacts* f = facts(i);
  return f ? f->shape_value : nullptr;
}

void NodeContext::set_output_type(size_t i, ir::Type t) {
  if (i < s_.outputs.size()) s_.outputs[i] = std::move(t);
}

void NodeContext::set_output_shape_value(size_t i, std::vector<ir::Dim> value) {
  if (i < s_.shape_values.size()) s_.shape_values[i] = std::move(value);
}

const ir::Type* NodeContext::output_type(size_t i) const {
  return i < s_.outputs.size() && s_.outputs[i] ? &*s_.outputs[i] : nullptr;
}

std::vector<ir::Type> NodeContext::infer_subgraph(const ir::Graph& g,
                                                  const std::vector<ir::Type>& input_types) {
  s_.visited.push_back(&g);
  GraphEnv sub = env_;
  sub.depth = env_.depth + 1;
  return checker_.check_graph(g, subgraph_path(path_, node_, g), &scope_, &input_types, sub);
}

void NodeContext::warn(std::string msg, int input_index) {
  checker_.report(Severity::kWarning, path_, &node_, input_index, -1, std::move(msg));
}

std::string subgraph_path(const std::string& parent, const ir::Node& node, const ir::Graph& g) {
  for (const ir::Attribute& a : node.attributes) {
    for (size_t k = 0; k < a.graphs.size(); ++k) {
      if (a.graphs[k].get() != &g) continue;
      std::string p = parent + "/" + (node.name.empty() ? node.op_type : node.name) + "." + a.name;
      return a.type == ir::AttrType::kGraphs ? p + "[" + std::to_string(k) + "]" : p;
    }
  }
  return parent + "/" + node.name;
}

}  // namespace tessera::check
