#include "transforms/import_layer.h"

#include <fmt/format.h>

#include <memory>

#include "ir/commands/commands.h"
#include "transforms/observer.h"

namespace tessera::transforms {

namespace {

constexpr int64_t kFirstIrWithFunctions = 8;

ir::Node constant_node(ir::Tensor t) {
  ir::Node n;
  n.name = t.name + "_constant";
  n.op_type = "Constant";
  n.outputs = {t.name};
  t.name.clear();
  n.attributes.push_back(ir::Attribute::of_tensor("value", std::move(t)));
  return n;
}

ir::Function as_function(const ir::Model& other, const ImportLayerOptions& o, Report& report) {
  ir::Function f;
  f.name = o.name;
  f.domain = o.domain;
  f.doc_string = other.graph.doc_string.empty() ? other.doc_string : other.graph.doc_string;
  f.opset_imports = other.opset_imports;
  ir::Graph& body = f.body;
  body.name = o.name;
  NameTable names(other.graph);
  Steps steps("carrying initializers as constants", other.graph.initializers.size(), 0.1, 0.7);
  for (const auto& t : other.graph.initializers) {
    steps.at(static_cast<size_t>(&t - other.graph.initializers.data()));
    ir::Node c = constant_node(t);
    c.name = names.fresh(c.name);
    body.add_node(std::move(c));
    report.add("initializers carried as constants");
  }
  for (const auto& sp : other.graph.sparse_initializers) {
    ir::Node c;
    c.name = names.fresh(sp.values.name + "_constant");
    c.op_type = "Constant";
    c.outputs = {sp.values.name};
    ir::Attribute a;
    a.name = "sparse_value";
    a.type = ir::AttrType::kSparseTensor;
    a.sparse_tensors = {sp};
    c.attributes.push_back(std::move(a));
    body.add_node(std::move(c));
    report.add("initializers carried as constants");
  }
  for (const auto& n : other.graph.nodes) body.add_node(n);
  for (const auto& in : other.graph.inputs) {
    if (other.graph.find_initializer(in.name)) continue;  // a default: the constant above
    body.inputs.push_back({in.name, {}, {}, {}});
  }
  for (const auto& out : other.graph.outputs) body.outputs.push_back({out.name, {}, {}, {}});
  report.add("function nodes", static_cast<int64_t>(body.nodes.size()));
  return f;
}

}  // namespace

Report import_layer(ir::History& h, const ir::Model& other, const ImportLayerOptions& o) {
  const ir::Model& m = h.model();
  if (o.name.empty()) throw TransformError("give the layer a name (--name)");
  if (m.ir_version < kFirstIrWithFunctions) {
    throw TransformError(fmt::format("local functions need IR version {} or later; the model is IR {}",
                                     kFirstIrWithFunctions, m.ir_version));
  }
  if (m.find_function(o.domain, o.name))
    throw TransformError(fmt::format("the model already has a function '{}:{}'", o.domain, o.name));
  Report report;
  ir::Function f = as_function(other, o, report);
  report_progress(0.8, "adding the function");
  ir::BatchScope batch(h, fmt::format("Import layer '{}'", o.name));
  try {
    for (const auto& g : other.functions) {
      const ir::Function* same = m.find_function(g.domain, g.name, g.overload);
      if (same && *same == g) continue;
      if (same) {
        throw TransformError(fmt::format("the imported model's function '{}:{}' differs from the model's own",
                                         g.domain, g.name));
      }
      h.execute(std::make_unique<ir::AddFunction>(g));
      report.add("functions carried");
    }
    h.execute(std::make_unique<ir::AddFunction>(std::move(f)));
    if (!m.opset_version(o.domain)) h.execute(std::make_unique<ir::SetOpsetImport>(o.domain, 1));
    for (const auto& g : other.functions) {
      if (!m.opset_version(g.domain)) h.execute(std::make_unique<ir::SetOpsetImport>(g.domain, 1));
    }
  } catch (const ir::CommandError& e) {
    throw TransformError(e.what());
  }
  batch.commit();
  return report;
}

}  // namespace tessera::transforms
