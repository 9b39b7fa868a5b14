#include "ir/summary.h"

#include <algorithm>
#include <set>

namespace tessera::ir {
namespace {

struct Counter {
  ModelSummary& s;
  std::set<std::string> files;

  void tensor(const Tensor& t) {
    s.parameter_count += t.numel().value_or(0);
    s.parameter_bytes += t.dtype == DataType::kString ? 0 : t.expected_bytes().value_or(0);
    if (t.external) files.insert(t.external->location);
  }

  void graph(const Graph& g) {
    for (const Tensor& t : g.initializers) tensor(t);
    for (const SparseTensor& t : g.sparse_initializers) tensor(t.values);
    for (const Node& n : g.nodes) {
      ++s.node_count;
      std::string key = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
      ++s.op_counts[key];
      for (const Attribute& a : n.attributes) {
        for (const auto& sub : a.graphs) graph(*sub);
      }
    }
  }
};

}  // namespace

ModelSummary summarize(const Model& model) {
  ModelSummary s;
  s.ir_version = model.ir_version;
  s.opsets = model.opset_imports;
  s.producer = model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version);
  for (const ValueInfo& in : model.graph.inputs) {
    if (!model.graph.find_initializer(in.name)) s.inputs.push_back(in);
  }
  s.outputs = model.graph.outputs;
  Counter c{s, {}};
  c.graph(model.graph);
  for (const Function& f : model.functions) c.graph(f.body);
  s.function_count = static_cast<int64_t>(model.functions.size());
  s.external_files.assign(c.files.begin(), c.files.end());
  return s;
}

}  // namespace tessera::ir
