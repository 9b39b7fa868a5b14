#include "transforms/fold_shape_elements.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

#include "ir/tensor.h"
#include "passes/graph_util.h"

namespace tessera::transforms {

namespace {

constexpr int64_t kUnknown = -1;

// The dims a Shape node returns, kUnknown for a symbolic one; nullopt when the input's rank is unknown.
std::optional<std::vector<int64_t>> shape_elements(const ir::Node& shape, const ir::Type& t) {
  if (!t.is_tensor() || !t.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : *t.shape) dims.push_back(d.value >= 0 ? d.value : kUnknown);
  auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t start = clamp(passes::attr_int(shape, "start", 0));
  int64_t end = clamp(passes::attr_int(shape, "end", rank));
  if (end <= start) return std::vector<int64_t>{};
  return std::vector<int64_t>(dims.begin() + start, dims.begin() + end);
}

// Gather(axis 0) of the elements at constant indices; nullopt when one of them is symbolic.
std::optional<ir::Tensor> gather(const ir::Graph& g, const ir::Node& n, const std::vector<int64_t>& e) {
  if (n.inputs.size() != 2) return std::nullopt;
  int64_t axis = passes::attr_int(n, "axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  const ir::Tensor* idx = passes::constant_value(g, n.inputs[1]);
  auto values = passes::constant_ints(g, n.inputs[1]);
  if (!idx || !values) return std::nullopt;
  auto len = static_cast<int64_t>(e.size());
  std::vector<int64_t> out;
  for (int64_t i : *values) {
    if (i < -len || i >= len) return std::nullopt;  // out of range: the run-time error stays
    int64_t v = e[static_cast<size_t>(i < 0 ? i + len : i)];
    if (v == kUnknown) return std::nullopt;
    out.push_back(v);
  }
  return ir::make_tensor<int64_t>("", ir::DataType::kInt64, idx->dims, out);
}

// The first value of an optional constant 1-D input, or `fallback` when the input is omitted.
std::optional<int64_t> single(const ir::Graph& g, const ir::Node& n, size_t k, int64_t fallback) {
  if (n.inputs.size() <= k || n.inputs[k].empty()) return fallback;
  auto v = passes::constant_ints(g, n.inputs[k]);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

// Slice (opset 10+: starts, ends, axes, steps as inputs) of the elements, as ONNX clamps it.
std::optional<ir::Tensor> slice(const ir::Graph& g, const ir::Node& n, const std::vector<int64_t>& e) {
  if (n.inputs.size() < 3) return std::nullopt;
  auto start = single(g, n, 1, 0), end = single(g, n, 2, 0), axis = single(g, n, 3, 0),
       step = single(g, n, 4, 1);
  if (!start || !end || !axis || !step || (*axis != 0 && *axis != -1) || *step == 0) return std::nullopt;
  auto len = static_cast<int64_t>(e.size());
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < std::numeric_limits<int64_t>::min() + len ? lo : v + len;
    return std::clamp(v, lo, hi);
  };
  int64_t b = *step > 0 ? norm(*start, 0, len) : norm(*start, 0, len - 1);
  int64_t f = *step > 0 ? norm(*end, 0, len) : norm(*end, -1, len - 1);
  std::vector<int64_t> out;
  for (int64_t i = b; *step > 0 ? i < f : i > f; i += *step) {
    if (e[static_cast<size_t>(i)] == kUnknown) return std::nullopt;
    out.push_back(e[static_cast<size_t>(i)]);
  }
  return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {static_cast<int64_t>(out.size())}, out);
}

}  // namespace

int fold_shape_elements(ir::Graph& g, const std::unordered_map<std::string, ir::Type>& types,
                        std::vector<std::string>& details) {
  std::unordered_map<std::string, std::vector<int64_t>> shapes;  // Shape output -> its elements
  for (const auto& n : g.nodes) {
    if (n.op_type != "Shape" || !n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1) continue;
    auto t = types.find(n.inputs[0]);
    if (t == types.end()) continue;
    if (auto e = shape_elements(n, t->second)) shapes.emplace(n.outputs[0], std::move(*e));
  }
  std::vector<ir::NodeId> gone;
  std::vector<ir::Tensor> made;
  for (const auto& n : g.nodes) {
    bool is_gather = n.op_type == "Gather", is_slice = n.op_type == "Slice";
    if ((!is_gather && !is_slice) || !n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1) continue;
    auto e = shapes.find(n.inputs[0]);
    if (e == shapes.end() || passes::is_graph_output(g, n.outputs[0])) continue;
    auto t = is_gather ? gather(g, n, e->second) : slice(g, n, e->second);
    if (!t) continue;
    t->name = n.outputs[0];
    details.push_back(fmt::format("fold_shape_elements: node '{}' ({}) of a shape with static elements there",
                                  n.name, n.op_type));
    gone.push_back(n.id);
    made.push_back(std::move(*t));
  }
  // One sweep for all (passes::remove_nodes looks each node up: quadratic on large graphs); the index
  // inputs nothing reads any more go with sanitize's unused initializers.
  std::unordered_set<ir::NodeId> ids(gone.begin(), gone.end());
  std::unordered_set<std::string> names;
  for (const auto& t : made) names.insert(t.name);
  std::erase_if(g.nodes, [&](const ir::Node& n) { return ids.count(n.id) > 0; });
  std::erase_if(g.value_info, [&](const ir::ValueInfo& v) { return names.count(v.name) > 0; });
  for (auto& t : made) g.initializers.push_back(std::move(t));
  return static_cast<int>(gone.size());
}

}  // namespace tessera::transforms
