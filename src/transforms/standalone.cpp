#include "transforms/standalone.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "check/checker.h"
#include "transforms/transform.h"

namespace tessera::transforms {

const ir::Node* find_call(const ir::Graph& g, const ir::Function& f) {
  for (const auto& n : g.nodes)
    if (n.op_type == f.name && ir::canonical_domain(n.domain) == ir::canonical_domain(f.domain) &&
        n.overload == f.overload)
      return &n;
  return nullptr;
}

void bind_references(ir::Graph& g, const ir::Node* call, const ir::Function& f) {
  for (auto& n : g.nodes) {
    for (auto& a : n.attributes) {
      for (auto& sub : a.graphs) bind_references(*sub, call, f);
      if (!a.is_reference()) continue;
      const ir::Attribute* v = call ? call->attr(a.ref_attr_name) : nullptr;
      if (!v) {
        auto d = std::find_if(f.attribute_defaults.begin(), f.attribute_defaults.end(),
                              [&](const ir::Attribute& x) { return x.name == a.ref_attr_name; });
        if (d != f.attribute_defaults.end()) v = &*d;
      }
      if (!v) {
        throw TransformError(fmt::format("attribute parameter '{}' of function '{}' has no value: {}",
                                         a.ref_attr_name, f.name,
                                         call ? "its call does not set it and it has no default"
                                              : "no call to take it from and no default"));
      }
      std::string name = a.name;
      a = *v;
      a.name = name;
    }
  }
}

ir::Model standalone_model(const ir::Model& m, const ir::Graph& g, const TypeLookup& outer_type) {
  ir::Model out;
  out.ir_version = m.ir_version;
  out.opset_imports = m.opset_imports;
  out.functions = m.functions;
  out.base_dir = m.base_dir;
  out.graph = g;
  for (const auto& name : outer_values(g)) {
    ir::ValueInfo vi;
    vi.name = name;
    if (auto t = outer_type(name)) vi.type = *t;
    out.graph.inputs.push_back(std::move(vi));
  }
  return out;
}

std::unordered_map<std::string, ir::Type> graph_value_types(const ir::Model& m, const ir::Graph& g,
                                                            const TypeLookup& outer_type) {
  ir::Model sub = standalone_model(m, g, outer_type);
  check::CheckOptions opts;
  opts.max_diagnostics = SIZE_MAX;  // the checker stops inferring once full; only the types are wanted
  auto types = check::check_model(sub, opts).value_types;
  auto declare = [&](const ir::ValueInfo& vi) {
    if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
  };
  for (const auto& vi : g.inputs) declare(vi);
  for (const auto& vi : g.outputs) declare(vi);
  for (const auto& vi : g.value_info) declare(vi);
  for (const auto& t : g.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
  return types;
}

namespace {

// The shape both calls agree on: a dimension they give differently becomes unknown, a rank they give
// differently no shape at all.
void merge_shape(ir::Type& into, const ir::Type& other) {
  if (!into.shape || !other.shape || into.shape->size() != other.shape->size()) {
    into.shape.reset();
    return;
  }
  for (size_t d = 0; d < into.shape->size(); ++d)
    if (!((*into.shape)[d] == (*other.shape)[d])) (*into.shape)[d] = ir::Dim::unknown();
}

// Whether another call passes the same element types as `into`'s; their shapes merged into `into`, so calls
// at different sizes (a block used at two resolutions) type the body alike.
bool merge_call_types(std::vector<ir::Type>& into, const std::vector<ir::Type>& call) {
  if (into.size() != call.size()) return false;
  for (size_t i = 0; i < into.size(); ++i) {
    if (into[i] == call[i]) continue;
    if (!into[i].is_tensor() || into[i].type_string() != call[i].type_string()) return false;
    merge_shape(into[i], call[i]);
  }
  return true;
}

}  // namespace

std::optional<std::unordered_map<std::string, ir::Type>> function_value_types(
    const ir::Model& m, const ir::Function& f, const std::unordered_map<std::string, ir::Type>& main_types) {
  std::optional<std::vector<ir::Type>> inputs;
  const ir::Node* first = nullptr;
  for (const auto& n : m.graph.nodes) {
    if (n.op_type != f.name || ir::canonical_domain(n.domain) != ir::canonical_domain(f.domain) ||
        n.overload != f.overload)
      continue;
    std::vector<ir::Type> call;
    for (const auto& v : n.inputs) {
      auto t = main_types.find(v);
      call.push_back(v.empty() || t == main_types.end() ? ir::Type{} : t->second);
    }
    if (inputs && !merge_call_types(*inputs, call)) return std::nullopt;
    if (first && first->attributes != n.attributes) return std::nullopt;  // attribute parameters differ
    inputs = std::move(call);
    if (!first) first = &n;
  }
  if (!inputs) return std::nullopt;
  ir::Graph body = f.body;
  try {
    bind_references(body, first, f);
  } catch (const TransformError&) {
    return std::nullopt;
  }
  for (size_t i = 0; i < body.inputs.size() && i < inputs->size(); ++i) body.inputs[i].type = (*inputs)[i];
  ir::Model typed;  // the body's scope: its opsets, the model's functions (no main graph to copy)
  typed.ir_version = m.ir_version;
  typed.opset_imports = f.opset_imports.empty() ? m.opset_imports : f.opset_imports;
  typed.functions = m.functions;
  typed.base_dir = m.base_dir;
  auto out = graph_value_types(typed, body, [](const std::string&) { return std::nullopt; });
  for (const auto& vi : body.inputs)
    if (!vi.type.is_none()) out.emplace(vi.name, vi.type);
  return out;
}

}  // namespace tessera::transforms
