#include "transforms/amp_estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <vector>

#include "check/checker.h"

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

}  // namespace

ErrorGrowth estimate_error_growth(const ir::Model& original, const ir::Model& low,
                                  const rt::SessionOptions& options, const Feeds& feeds) {
  auto ref = run_fetching_all(original, options, feeds);
  auto got = run_fetching_all(low, options, feeds);
  ErrorGrowth e;
  for (const auto& [name, a] : ref) {
    auto b = got.find(name);
    if (b == got.end() || !a.is_tensor() || !b->second.is_tensor()) continue;
    e.relative.emplace(name, relative_error(a.tensor(), b->second.tensor()));
  }
  auto rel = [&](const std::string& v) {
    auto it = e.relative.find(v);
    return it == e.relative.end() ? 0.0 : it->second;  // graph inputs, initializers: exact
  };
  for (const auto& n : original.graph.nodes) {
    if (n.name.empty()) continue;
    double in = 0, out = 0;
    for (const auto& v : n.inputs) in = std::max(in, rel(v));
    for (const auto& v : n.outputs) out = std::max(out, rel(v));
    e.by_node.emplace(n.name, std::max(0.0, out - in));
  }
  return e;
}

}  // namespace tessera::transforms
