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

namespace {

// Root mean square of a tensor's finite elements.
double rms(const rt::Tensor& t) {
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.to_double(i);
    if (!std::isfinite(x)) continue;
    sum += x * x;
    ++n;
  }
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

bool normalizes(const ir::Node& n) {
  static const std::unordered_set<std::string> kOps = {
      "LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
      "SkipSimplifiedLayerNormalization", "RMSNormalization"};
  return kOps.count(n.op_type) != 0;
}

// The rms rounding error of one value rounded to float16, relative to its rms (2^-11 / sqrt(3)).
constexpr double kRounding = 2.8e-4;

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
    e.rms.emplace(name, rms(a.tensor()));
  }
  auto find = [](const std::unordered_map<std::string, double>& m, const std::string& v) {
    auto it = m.find(v);
    return it == m.end() ? 0.0 : it->second;  // graph inputs, initializers: exact
  };
  auto rel = [&](const std::string& v) { return find(e.relative, v); };
  auto mag = [&](const std::string& v) { return find(e.rms, v); };
  // The residual stream a node's error ends up in: the input of the next normalization in file order (a
  // transformer's LayerNorm reads the residual sum). An error is judged against that value's magnitude,
  // not its own: an attention branch 10x smaller than the stream it is added to matters 10x less.
  const auto& nodes = original.graph.nodes;
  std::vector<double> stream(nodes.size(), 0);
  double next = 0;
  for (size_t i = nodes.size(); i-- > 0;) {
    if (normalizes(nodes[i]) && !nodes[i].inputs.empty() && mag(nodes[i].inputs[0]) > 0)
      next = mag(nodes[i].inputs[0]);
    stream[i] = next;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    if (n.name.empty()) continue;
    double in = 0, out = 0, out_mag = 0, in_abs2 = 0;
    int rounded = 0;  // float values it rounds alone in float16
    for (const auto& v : n.inputs) {
      in = std::max(in, rel(v));
      in_abs2 += rel(v) * mag(v) * rel(v) * mag(v);
      rounded += mag(v) > 0;
    }
    for (const auto& v : n.outputs) {
      if (!e.relative.count(v)) continue;
      ++rounded;
      if (rel(v) >= out) out = rel(v), out_mag = mag(v);
    }
    if (out_mag == 0) {  // no float output (Shape): rounds nothing that matters
      e.by_node.emplace(n.name, 0.0);
      continue;
    }
    // Its own error: what its outputs' relative error grew by over its inputs'. For an Add (a residual
    // sum) the inputs' absolute errors add up in quadrature instead: judged by the largest relative error,
    // a small branch's would hide the rounding of the sum itself.
    double own = n.op_type == "Add" && ir::canonical_domain(n.domain).empty()
                     ? std::max(0.0, out - std::sqrt(in_abs2) / out_mag)
                     : std::max(0.0, out - in);
    // Alone in float16 a node also rounds its inputs and outputs (the Casts around it), which in the
    // all-float16 run cost nothing more.
    own += kRounding * rounded;
    // A branch smaller than the stream it joins matters that much less (never more: attention scores and
    // masks are larger than the stream, but pass through a Softmax first).
    double share = stream[i] > 0 ? std::min(1.0, out_mag / stream[i]) : 1.0;
    e.by_node.emplace(n.name, own * share);
  }
  return e;
}

}  // namespace tessera::transforms
