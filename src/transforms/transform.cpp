#include "transforms/transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "ir/commands/commands.h"
#include "ir/commands/replace_graph.h"

namespace tessera::transforms {

void Report::add(std::string_view what, int64_t n) {
  for (auto& [k, v] : counts) {
    if (k == what) {
      v += n;
      return;
    }
  }
  counts.emplace_back(std::string(what), n);
}

int64_t Report::get(std::string_view what) const {
  for (const auto& [k, v] : counts)
    if (k == what) return v;
  return 0;
}

NameTable::NameTable(const ir::Model& m) {
  add_graph(m.graph);
  for (const auto& f : m.functions) add_graph(f.body);
}

NameTable::NameTable(const ir::Graph& g) {
  add_graph(g);
}

void NameTable::add_graph(const ir::Graph& g) {
  for (const auto& v : g.inputs) names_.insert(v.name);
  for (const auto& v : g.outputs) names_.insert(v.name);
  for (const auto& v : g.value_info) names_.insert(v.name);
  for (const auto& t : g.initializers) names_.insert(t.name);
  for (const auto& t : g.sparse_initializers) names_.insert(t.values.name);
  for (const auto& n : g.nodes) {
    names_.insert(n.name);
    for (const auto& s : n.inputs) names_.insert(s);
    for (const auto& s : n.outputs) names_.insert(s);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) add_graph(*sub);
  }
}

std::string NameTable::fresh(std::string_view base) {
  std::string name(base);
  for (int k = 1; name.empty() || names_.count(name); ++k) name = fmt::format("{}_{}", base, k);
  names_.insert(name);
  return name;
}

namespace {

bool same_key(const ir::Function& a, const ir::Function& b) {
  return a.domain == b.domain && a.name == b.name && a.overload == b.overload;
}

void commit_functions(ir::History& h, const ir::Model& old, std::vector<ir::Function>& now) {
  for (const auto& f : old.functions) {
    bool kept = std::any_of(now.begin(), now.end(), [&](const ir::Function& g) { return same_key(f, g); });
    if (!kept) h.execute(std::make_unique<ir::RemoveFunction>(f.domain, f.name, f.overload));
  }
  for (auto& f : now) {
    auto it = std::find_if(old.functions.begin(), old.functions.end(),
                           [&](const ir::Function& g) { return same_key(f, g); });
    if (it == old.functions.end()) {
      h.execute(std::make_unique<ir::AddFunction>(std::move(f)));
    } else if (!(*it == f)) {
      h.execute(std::make_unique<ir::ReplaceFunction>(std::move(f)));
    }
  }
}

void commit_opsets(ir::History& h, const ir::Model& old, const ir::Model& now) {
  for (const auto& o : now.opset_imports) {
    if (old.opset_version(o.domain) != o.version)
      h.execute(std::make_unique<ir::SetOpsetImport>(o.domain, o.version));
  }
  for (const auto& o : old.opset_imports) {
    if (!now.opset_version(o.domain)) h.execute(std::make_unique<ir::SetOpsetImport>(o.domain, std::nullopt));
  }
}

}  // namespace

// Initializers that share their buffer are equal without comparing their bytes: a transformation
// that left a 1 GiB model's weights alone must not page them all in to find out.
bool same_tensor(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.data && a.data == b.data) {
    return a.name == b.name && a.dtype == b.dtype && a.dims == b.dims && a.doc_string == b.doc_string &&
           a.metadata_props == b.metadata_props && a.external.has_value() == b.external.has_value();
  }
  return a == b;
}

bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  if (a.initializers.size() != b.initializers.size()) return false;
  for (size_t i = 0; i < a.initializers.size(); ++i)
    if (!same_tensor(a.initializers[i], b.initializers[i])) return false;
  return a.name == b.name && a.doc_string == b.doc_string && a.nodes == b.nodes &&
         a.sparse_initializers == b.sparse_initializers && a.inputs == b.inputs && a.outputs == b.outputs &&
         a.value_info == b.value_info && a.quantization_annotation == b.quantization_annotation &&
         a.metadata_props == b.metadata_props && a.unknown_fields == b.unknown_fields;
}

bool commit(ir::History& h, const std::string& name, ir::Model transformed) {
  const ir::Model& old = h.model();
  bool graph_changed = !same_graph(old.graph, transformed.graph);
  if (!graph_changed && old.functions == transformed.functions &&
      old.opset_imports == transformed.opset_imports)
    return false;
  ir::BatchScope batch(h, name);
  try {
    commit_opsets(h, old, transformed);
    commit_functions(h, old, transformed.functions);
    if (graph_changed) {
      h.execute(std::make_unique<ir::ReplaceGraph>(ir::GraphPath::main_graph(), std::move(transformed.graph),
                                                   name));
    }
  } catch (const ir::CommandError& e) {
    throw TransformError(fmt::format("{}: {}", name, e.what()));
  }
  batch.commit();
  return true;
}

namespace {

void collect_defined(const ir::Graph& g, std::unordered_set<std::string>& defined) {
  for (const auto& v : g.inputs) defined.insert(v.name);
  for (const auto& t : g.initializers) defined.insert(t.name);
  for (const auto& t : g.sparse_initializers) defined.insert(t.values.name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) defined.insert(o);
}

}  // namespace

std::vector<std::string> outer_values(const ir::Graph& g) {
  std::unordered_set<std::string> defined, seen;
  collect_defined(g, defined);
  std::vector<std::string> out;
  auto use = [&](const std::string& name) {
    if (name.empty() || defined.count(name) || !seen.insert(name).second) return;
    out.push_back(name);
  };
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) use(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs)
        for (const auto& name : outer_values(*sub)) use(name);
  }
  for (const auto& o : g.outputs) use(o.name);
  return out;
}

ir::Type retype_float(const ir::Type& t, ir::DataType to, bool* changed) {
  ir::Type r = t;
  bool did = false;
  if ((t.kind == ir::Type::Kind::kTensor || t.kind == ir::Type::Kind::kSparseTensor) &&
      t.elem == ir::DataType::kFloat) {
    r.elem = to;
    did = true;
  } else if (t.inner && (t.kind == ir::Type::Kind::kSequence || t.kind == ir::Type::Kind::kOptional ||
                         t.kind == ir::Type::Kind::kMap)) {
    bool inner_changed = false;
    ir::Type inner = retype_float(*t.inner, to, &inner_changed);
    if (inner_changed) {
      r.inner = std::make_shared<const ir::Type>(std::move(inner));
      did = true;
    }
  }
  if (changed) *changed = did;
  return r;
}

}  // namespace tessera::transforms
