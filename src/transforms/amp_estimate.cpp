#include "transforms/amp_estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

#include "check/checker.h"
#include "transforms/float16.h"

namespace tessera::transforms {

namespace {

bool is_float(ir::DataType t) {
  return t == ir::DataType::kFloat || t == ir::DataType::kFloat16 || t == ir::DataType::kBFloat16;
}

// Every float value the main graph's nodes make, fetched as well as the outputs.
std::unordered_map<std::string, rt::Value> run_fetching_all(const ir::Model& m, const rt::SessionOptions& o,
                                                            const Feeds& feeds) {
  ir::Model probe = m;
  auto types = check::check_model(probe).value_types;
  std::unordered_set<std::string> fetched;
  for (const auto& out : probe.graph.outputs) fetched.insert(out.name);
  for (const auto& n : m.graph.nodes) {
    for (const auto& v : n.outputs) {
      auto t = types.find(v);
      if (v.empty() || t == types.end() || !t->second.is_tensor() || !is_float(t->second.elem)) continue;
      if (fetched.insert(v).second) probe.graph.outputs.push_back({v, t->second, "", {}});
    }
  }
  rt::Session s(std::move(probe), o);
  std::vector<rt::Value> got = s.run(feeds);
  std::unordered_map<std::string, rt::Value> by_name;
  for (size_t i = 0; i < got.size() && i < s.outputs().size(); ++i)
    by_name.emplace(s.outputs()[i].name, got[i]);
  return by_name;
}

// Root mean square of (b - a) over that of a; a non-finite b where a is finite counts as a huge error.
double relative_error(const rt::Tensor& a, const rt::Tensor& b) {
  if (a.numel() != b.numel() || a.numel() == 0) return 0;
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.to_double(i), y = b.to_double(i);
    if (!std::isfinite(x)) continue;
    if (!std::isfinite(y)) return 1e30;
    num += (y - x) * (y - x);
    den += x * x;
  }
  if (num == 0) return 0;
  return std::sqrt(num / std::max(den, std::numeric_limits<double>::min()));
}

constexpr const char* kShadow = "__amp_local16";

// `original` with, after its nodes, a float16 copy of every main-graph node that writes a float32 value,
// reading the float32 values (through the conversion's Casts) and writing `value + kShadow` as extra
// graph outputs (float32 again through a Cast): one run gives every node's float16 result on exact
// inputs next to the float32 one. Nullopt where the main graph has control flow or function calls (the
// conversion cannot keep those float32, and the reference would drift).
std::optional<ir::Model> shadow_model(const ir::Model& original) {
  ir::Model s = original;
  auto types = check::check_model(original).value_types;
  FloatConvertOptions fo;
  fo.keep_io_types = true;
  std::vector<ir::Node> copies;
  int unnamed = 0;
  for (auto& n : s.graph.nodes) {
    bool subgraphs = std::any_of(n.attributes.begin(), n.attributes.end(),
                                 [](const ir::Attribute& a) { return !a.graphs.empty(); });
    if (subgraphs || s.find_function(n.domain, n.op_type, n.overload)) return std::nullopt;
    if (n.name.empty()) n.name = "__amp_unnamed" + std::to_string(unnamed++);
    fo.node_block_list.push_back(n.name);
    if (n.op_type == "Constant") continue;
    bool writes_float = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& v) {
      auto t = types.find(v);
      return t != types.end() && t->second.is_tensor() && t->second.elem == ir::DataType::kFloat;
    });
    if (!writes_float) continue;
    ir::Node c = n;
    c.name = n.name + kShadow;
    for (auto& v : c.outputs)
      if (!v.empty()) v += kShadow;
    copies.push_back(std::move(c));
  }
  for (auto& c : copies) {
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      if (c.outputs[i].empty()) continue;
      auto t = types.find(c.outputs[i].substr(0, c.outputs[i].size() - std::string_view(kShadow).size()));
      if (t != types.end()) s.graph.outputs.push_back({c.outputs[i], t->second, "", {}});
    }
    s.graph.add_node(std::move(c), s.graph.nodes.size());
  }
  Report r;
  return convert_float_copy(s, fo, r);
}

}  // namespace

ErrorGrowth estimate_error_growth(const ir::Model& original, const ir::Model& low,
                                  const rt::SessionOptions& options, const Feeds& feeds) {
  // The float32 values, and each node's float16 result on them, from the shadow model where it can be
  // made and run; the plain float32 model otherwise.
  std::unordered_map<std::string, rt::Value> ref;
  bool local = false;
  try {
    if (auto s = shadow_model(original)) {
      ref = run_fetching_all(*s, options, feeds);
      local = true;
    }
  } catch (const std::exception&) {
    local = false;
  }
  if (!local) ref = run_fetching_all(original, options, feeds);
  auto got = run_fetching_all(low, options, feeds);
  ErrorGrowth e;
  auto error = [](const rt::Value& a, const rt::Value& b) {
    return a.is_tensor() && b.is_tensor() ? relative_error(a.tensor(), b.tensor()) : 0.0;
  };
  for (const auto& [name, a] : ref) {
    auto b = got.find(name);
    if (b != got.end()) e.relative.emplace(name, error(a, b->second));
  }
  auto rel = [&](const std::string& v) {
    auto it = e.relative.find(v);
    return it == e.relative.end() ? 0.0 : it->second;  // graph inputs, initializers: exact
  };
  for (const auto& n : original.graph.nodes) {
    if (n.name.empty()) continue;
    double in = 0, out = 0, alone = -1;
    for (const auto& v : n.inputs) in = std::max(in, rel(v));
    for (const auto& v : n.outputs) {
      out = std::max(out, rel(v));
      auto a = ref.find(v), b = ref.find(v + kShadow);
      if (local && a != ref.end() && b != ref.end()) alone = std::max(alone, error(a->second, b->second));
    }
    double growth = std::max(0.0, out - in);
    e.by_node.emplace(n.name, alone >= 0 ? std::min(alone, growth) : growth);
    if (alone >= 0) e.alone.emplace(n.name, alone);
  }
  return e;
}

}  // namespace tessera::transforms
