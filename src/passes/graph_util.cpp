#include "passes/graph_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <unordered_set>

#include "check/check_util.h"
#include "check/checker.h"
#include "ops/registry.h"
#include "runtime/half.h"

namespace tessera::passes {

namespace {

// Whether graph `g` defines `name` itself (input, initializer or node output), hiding an outer value.
bool defines(const ir::Graph& g, std::string_view name) {
  if (g.find_input(name) || g.find_initializer(name)) return true;
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), name) != n.outputs.end()) return true;
  return false;
}

// Whether a subgraph (or one nested in it) reads the outer value `name`.
bool reads_outer(const ir::Graph& sub, std::string_view name) {
  if (defines(sub, name)) return false;
  if (sub.find_output(name)) return true;
  for (const auto& n : sub.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) return true;
    for (const auto& a : n.attributes)
      for (const auto& g : a.graphs)
        if (reads_outer(*g, name)) return true;
  }
  return false;
}

bool subgraphs_read(const ir::Node& n, std::string_view name) {
  for (const auto& a : n.attributes)
    for (const auto& g : a.graphs)
      if (reads_outer(*g, name)) return true;
  return false;
}

void replace_in_subgraph(ir::Graph& sub, const std::string& from, const std::string& to) {
  if (defines(sub, from)) return;
  replace_uses(sub, from, to);
  for (auto& o : sub.outputs)
    if (o.name == from) o.name = to;
}

void rename_value(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes)
    for (auto& o : n.outputs)
      if (o == from) o = to;
  replace_uses(g, from, to);
  for (auto& vi : g.value_info)
    if (vi.name == from) vi.name = to;
}

void forget_value_info(ir::Graph& g, std::string_view name) {
  std::erase_if(g.value_info, [&](const ir::ValueInfo& vi) { return vi.name == name; });
}

template <class T>
void append_as_double(const ir::Tensor& t, std::vector<double>& out) {
  for (T v : t.as<T>()) out.push_back(static_cast<double>(static_cast<float>(v)));
}

}  // namespace

std::vector<Use> uses(const ir::Graph& g, std::string_view value) {
  std::vector<Use> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] == value) out.push_back({i, k});
    if (subgraphs_read(n, value)) out.push_back({i, Use::kInSubgraph});
  }
  return out;
}

bool is_used(const ir::Graph& g, std::string_view value) {
  return is_graph_output(g, value) || !uses(g, value).empty();
}

std::optional<size_t> sole_consumer(const ir::Graph& g, std::string_view value) {
  if (is_graph_output(g, value)) return std::nullopt;
  auto us = uses(g, value);
  if (us.empty()) return std::nullopt;
  for (const Use& u : us)
    if (u.input == Use::kInSubgraph || u.node != us[0].node) return std::nullopt;
  return us[0].node;
}

bool is_graph_output(const ir::Graph& g, std::string_view value) {
  return g.find_output(value) != nullptr;
}

const ir::Tensor* constant_value(const ir::Graph& g, std::string_view value) {
  if (value.empty() || g.find_input(value)) return nullptr;
  const ir::Tensor* t = g.find_initializer(value);
  if (!t || !check::tensor_data_usable(*t)) return nullptr;
  return t;
}

std::optional<size_t> producer(const ir::Graph& g, std::string_view value) {
  if (value.empty()) return std::nullopt;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (o == value) return i;
  return std::nullopt;
}

std::optional<std::vector<double>> constant_doubles(const ir::Graph& g, std::string_view value) {
  const ir::Tensor* t = constant_value(g, value);
  if (!t) return std::nullopt;
  std::vector<double> out;
  switch (t->dtype) {
    case ir::DataType::kFloat:
      append_as_double<float>(*t, out);
      break;
    case ir::DataType::kDouble:
      for (double v : t->as<double>()) out.push_back(v);
      break;
    case ir::DataType::kFloat16:
      append_as_double<rt::Float16>(*t, out);
      break;
    case ir::DataType::kBFloat16:
      append_as_double<rt::BFloat16>(*t, out);
      break;
    case ir::DataType::kInt32:
      for (int32_t v : t->as<int32_t>()) out.push_back(v);
      break;
    case ir::DataType::kInt64:
      for (int64_t v : t->as<int64_t>()) out.push_back(static_cast<double>(v));
      break;
    default:
      return std::nullopt;
  }
  return out;
}

std::optional<double> constant_scalar(const ir::Graph& g, std::string_view value) {
  const ir::Tensor* t = constant_value(g, value);
  if (!t || t->dims.size() > 1) return std::nullopt;
  auto v = constant_doubles(g, value);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

std::optional<std::vector<int64_t>> constant_ints(const ir::Graph& g, std::string_view value) {
  const ir::Tensor* t = constant_value(g, value);
  if (!t) return std::nullopt;
  if (t->dtype == ir::DataType::kInt64) {
    auto s = t->as<int64_t>();
    return std::vector<int64_t>(s.begin(), s.end());
  }
  if (t->dtype == ir::DataType::kInt32) {
    auto s = t->as<int32_t>();
    return std::vector<int64_t>(s.begin(), s.end());
  }
  return std::nullopt;
}

ir::Tensor make_float_tensor(ir::DataType dtype, std::vector<int64_t> dims,
                             const std::vector<double>& values) {
  if (dtype == ir::DataType::kDouble) return ir::make_tensor<double>("", dtype, std::move(dims), values);
  std::vector<float> f(values.begin(), values.end());
  return ir::make_tensor<float>("", ir::DataType::kFloat, std::move(dims), f);
}

std::optional<std::vector<double>> per_channel(const ir::Graph& g, std::string_view value, size_t rank,
                                               int64_t channels) {
  const ir::Tensor* t = constant_value(g, value);
  if (!t || t->dims.size() > rank || rank < 2) return std::nullopt;
  // Aligned to the right against [N, C, spatial...]: every axis but C must be 1.
  size_t lead = rank - t->dims.size();
  for (size_t k = 0; k < t->dims.size(); ++k) {
    bool channel_axis = lead + k == 1;
    if (t->dims[k] != 1 && !(channel_axis && t->dims[k] == channels)) return std::nullopt;
  }
  auto v = constant_doubles(g, value);
  if (!v || v->empty()) return std::nullopt;
  if (v->size() == 1) return std::vector<double>(static_cast<size_t>(channels), (*v)[0]);
  return v;
}

std::optional<FoldableConv> foldable_conv(const ir::Graph& g, std::string_view value, size_t consumer) {
  auto p = producer(g, value);
  if (!p || sole_consumer(g, value) != consumer) return std::nullopt;
  const ir::Node& conv = g.nodes[*p];
  if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) return std::nullopt;
  const ir::Tensor* w = constant_value(g, conv.inputs[1]);
  if (!w || w->dims.size() < 3 || w->dims[0] <= 0) return std::nullopt;
  if (w->dtype != ir::DataType::kFloat && w->dtype != ir::DataType::kDouble) return std::nullopt;
  FoldableConv f{*p, w->dtype, w->dims, *constant_doubles(g, conv.inputs[1]), {}};
  f.b.assign(static_cast<size_t>(f.channels()), 0.0);
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    const ir::Tensor* b = constant_value(g, conv.inputs[2]);
    if (!b || b->dtype != w->dtype) return std::nullopt;
    f.b = *constant_doubles(g, conv.inputs[2]);
    if (f.b.size() != static_cast<size_t>(f.channels())) return std::nullopt;
  }
  return f;
}

void replace_folded_conv(ir::Graph& g, const FoldableConv& conv, size_t consumer) {
  const ir::Node& old = g.nodes[conv.index];
  ir::Node n = old;
  n.inputs.resize(3);
  std::string base = old.name.empty() ? "conv" : old.name;
  n.inputs[1] = add_initializer(g, make_float_tensor(conv.dtype, conv.w_dims, conv.w), base + "_W_folded");
  n.inputs[2] =
      add_initializer(g, make_float_tensor(conv.dtype, {conv.channels()}, conv.b), base + "_B_folded");
  n.outputs = {g.nodes[consumer].outputs[0]};
  replace_with(g, consumer, std::move(n), {old.id, g.nodes[consumer].id});
}

void replace_uses(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes) {
    for (auto& in : n.inputs)
      if (in == from) in = to;
    for (auto& a : n.attributes)
      for (auto& sub : a.graphs) replace_in_subgraph(*sub, from, to);
  }
}

bool bypass_node(ir::Graph& g, size_t node_index, const std::string& replacement) {
  const ir::Node& n = g.nodes[node_index];
  if (n.outputs.size() != 1 || n.outputs[0].empty() || replacement.empty()) return false;
  std::string out = n.outputs[0];
  if (!is_graph_output(g, out)) {
    g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(node_index));
    replace_uses(g, out, replacement);
    forget_value_info(g, out);
    return true;
  }
  // The output is part of the graph's interface: keep its name by renaming the value upstream, which
  // is only possible when a node of this graph produces it and it is not an interface name itself.
  auto p = producer(g, replacement);
  if (!p || is_graph_output(g, replacement)) return false;
  g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(node_index));
  forget_value_info(g, out);
  rename_value(g, replacement, out);
  return true;
}

void drop_unused_initializers(ir::Graph& g, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (name.empty() || g.find_input(name) || is_used(g, name)) continue;
    std::erase_if(g.initializers, [&](const ir::Tensor& t) { return t.name == name; });
  }
}

void remove_nodes(ir::Graph& g, const std::vector<ir::NodeId>& ids) {
  std::vector<std::string> inputs;
  for (ir::NodeId id : ids) {
    size_t i = g.node_index(id);
    if (i == SIZE_MAX) continue;
    for (const auto& in : g.nodes[i].inputs) inputs.push_back(in);
    for (const auto& out : g.nodes[i].outputs) forget_value_info(g, out);
    g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(i));
  }
  drop_unused_initializers(g, inputs);
}

void replace_with(ir::Graph& g, size_t index, ir::Node n, const std::vector<ir::NodeId>& gone) {
  // Record which ONNX nodes the new one stands for (flattening earlier fusions), so profiles tie the
  // fused kernel's time to them.
  std::string from;
  for (ir::NodeId id : gone) {
    const ir::Node* old = g.find_node(id);
    if (!old) continue;
    std::string names = old->name.empty() ? old->op_type : old->name;
    for (const auto& [k, v] : old->metadata_props)
      if (k == kFusedFromKey) names = v;
    from += (from.empty() ? "" : ",") + names;
  }
  if (!from.empty()) {
    std::erase_if(n.metadata_props, [](const ir::StringPair& p) { return p.first == kFusedFromKey; });
    n.metadata_props.emplace_back(kFusedFromKey, from);
  }
  g.add_node(std::move(n), index);
  remove_nodes(g, gone);
}

namespace {

void collect_names(const ir::Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& v : g.inputs) names.insert(v.name);
  for (const auto& v : g.outputs) names.insert(v.name);
  for (const auto& t : g.initializers) names.insert(t.name);
  for (const auto& n : g.nodes) {
    for (const auto& s : n.outputs) names.insert(s);
    for (const auto& s : n.inputs) names.insert(s);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) collect_names(*sub, names);
  }
}

}  // namespace

std::string fresh_name(const ir::Graph& g, std::string_view base) {
  std::unordered_set<std::string> names;
  collect_names(g, names);
  std::string b(base);
  if (!names.count(b)) return b;
  for (int k = 1;; ++k) {
    std::string candidate = fmt::format("{}_{}", b, k);
    if (!names.count(candidate)) return candidate;
  }
}

std::string add_initializer(ir::Graph& g, ir::Tensor t, std::string_view base) {
  t.name = fresh_name(g, base);
  std::string name = t.name;
  g.initializers.push_back(std::move(t));
  return name;
}

// ---- Types ----------------------------------------------------------------------------------------

namespace {

// The checker's types of the main graph, for the model at `model` in the state `fingerprint` says.
// `stale` marks a cache that a rule carried over its own edit (keep_type_cache): the types it holds are
// still right, but the edit may let the checker infer more (a Reshape whose target became a constant),
// so an answer that is not fully static is looked up again.
struct TypeCache {
  const ir::Model* model = nullptr;
  size_t fingerprint = 0;
  bool stale = false;
  std::unordered_map<std::string, ir::Type> types;
};

TypeCache& type_cache() {
  thread_local TypeCache cache;
  return cache;
}

// Changes whenever a node, its wiring or the initializers change (not a proof, but collisions only
// make a rule use types that were right a moment ago for values that keep their names).
size_t fingerprint(const ir::Graph& g) {
  std::hash<std::string_view> h;
  size_t f = g.next_node_id * 0x9e3779b97f4a7c15ULL + g.nodes.size() * 31 + g.initializers.size();
  auto mix = [&](std::string_view s) { f = (f ^ h(s)) * 0x100000001b3ULL; };
  for (const auto& n : g.nodes) {
    f = (f ^ n.id) * 0x100000001b3ULL;
    for (const auto& s : n.inputs) mix(s);
    for (const auto& s : n.outputs) mix(s);
  }
  for (const auto& t : g.initializers) {
    mix(t.name);
    for (int64_t d : t.dims) f = (f ^ static_cast<size_t>(d)) * 0x100000001b3ULL;
  }
  // Declared input types too: two models built alike at one address may differ only there.
  for (const auto& in : g.inputs) mix(in.type.to_string());
  return f;
}

ir::Type constant_type(const ir::Tensor& t) {
  ir::Shape s;
  for (int64_t d : t.dims) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(t.dtype, std::move(s));
}

}  // namespace

std::optional<ir::Type> value_type(const RuleContext& ctx, std::string_view value) {
  if (const ir::Tensor* t = constant_value(ctx.graph, value)) return constant_type(*t);
  if (!ctx.is_main_graph) return std::nullopt;
  TypeCache& c = type_cache();
  size_t f = fingerprint(ctx.model.graph);
  auto refresh = [&] {
    c.types = check::check_model(ctx.model).value_types;
    c.model = &ctx.model;
    c.fingerprint = f;
    c.stale = false;
  };
  if (c.model != &ctx.model || c.fingerprint != f) refresh();
  auto it = c.types.find(std::string(value));
  bool precise = it != c.types.end() && it->second.shape && ir::shape_is_static(*it->second.shape);
  if (c.stale && !precise) {
    refresh();
    it = c.types.find(std::string(value));
  }
  if (it == c.types.end()) return std::nullopt;
  return it->second;
}

void forget_type_cache() {
  type_cache() = TypeCache{};
}

void keep_type_cache(const RuleContext& ctx) {
  TypeCache& c = type_cache();
  if (!ctx.is_main_graph || c.model != &ctx.model) return;
  c.fingerprint = fingerprint(ctx.model.graph);
  c.stale = true;
}

std::optional<std::vector<int64_t>> static_shape(const RuleContext& ctx, std::string_view value) {
  auto t = value_type(ctx, value);
  if (!t || !t->is_tensor() || !t->shape || !ir::shape_is_static(*t->shape)) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : *t->shape) dims.push_back(d.value);
  return dims;
}

ir::DataType elem_type(const RuleContext& ctx, std::string_view value) {
  auto t = value_type(ctx, value);
  return t && t->is_tensor() ? t->elem : ir::DataType::kUndefined;
}

// ---- Kernels and opsets ---------------------------------------------------------------------------

bool kernel_available(const RuleContext& ctx, const ir::Node& n) {
  return ctx.target.kernels && ctx.target.kernels->has_kernel(ctx.model, n);
}

void ensure_opset_import(ir::Model& model, const std::string& domain, int64_t version) {
  if (model.opset_version(domain)) return;
  model.opset_imports.push_back({domain, version});
}

// ---- Attributes -----------------------------------------------------------------------------------

int64_t attr_int(const ir::Node& n, std::string_view name, int64_t fallback) {
  const ir::Attribute* a = n.attr(name);
  return a && a->type == ir::AttrType::kInt ? a->i : fallback;
}

float attr_float(const ir::Node& n, std::string_view name, float fallback) {
  const ir::Attribute* a = n.attr(name);
  return a && a->type == ir::AttrType::kFloat ? a->f : fallback;
}

std::optional<std::vector<int64_t>> attr_ints(const ir::Node& n, std::string_view name) {
  const ir::Attribute* a = n.attr(name);
  if (!a || a->type != ir::AttrType::kInts) return std::nullopt;
  return a->ints;
}

std::optional<std::string> other_input(const ir::Node& n, std::string_view op, std::string_view x) {
  if (!is_op(n, op) || n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return std::nullopt;
  if (n.inputs[0] == x) return n.inputs[1];
  if (n.inputs[1] == x) return n.inputs[0];
  return std::nullopt;
}

bool is_constant_near(const ir::Graph& g, std::string_view value, double want) {
  auto v = constant_scalar(g, value);
  return v && std::abs(*v - want) <= 1e-3 * std::abs(want);
}

bool is_compute_float(ir::DataType t) {
  return t == ir::DataType::kFloat || t == ir::DataType::kDouble || t == ir::DataType::kFloat16 ||
         t == ir::DataType::kBFloat16;
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& a : n.attributes)
    if (!a.graphs.empty()) return true;
  return false;
}

bool is_op(const ir::Node& n, std::string_view op) {
  return n.op_type == op && ir::canonical_domain(n.domain).empty();
}

int64_t onnx_opset(const ir::Model& m) {
  return m.opset_version("").value_or(0);
}

// Clip's bounds: attributes before opset 11, optional constant inputs from 11 on.
static std::optional<std::vector<float>> clip_params(const RuleContext& ctx, const ir::Node& n) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (onnx_opset(ctx.model) < 11)
    return std::vector<float>{attr_float(n, "min", lo), attr_float(n, "max", hi)};
  std::array<float*, 2> bounds = {&lo, &hi};
  for (size_t k = 1; k < 3; ++k) {
    if (k >= n.inputs.size() || n.inputs[k].empty()) continue;
    auto v = constant_scalar(ctx.graph, n.inputs[k]);
    if (!v) return std::nullopt;
    *bounds[k - 1] = static_cast<float>(*v);
  }
  return std::vector<float>{lo, hi};
}

std::optional<std::vector<float>> fusable_activation(const RuleContext& ctx, const ir::Node& n) {
  if (!ir::canonical_domain(n.domain).empty()) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return std::vector<float>{};
  if (op == "LeakyRelu") return std::vector<float>{attr_float(n, "alpha", 0.01f)};
  if (op == "HardSigmoid")
    return std::vector<float>{attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)};
  if (op == "Clip") return clip_params(ctx, n);
  return std::nullopt;
}

}  // namespace tessera::passes
