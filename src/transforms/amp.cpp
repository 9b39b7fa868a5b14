#include "transforms/amp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "transforms/float16.h"

namespace tessera::transforms {

namespace {

// Operators whose float16 results commonly drift: sums over many elements, exp/log/pow, statistics.
bool sensitive(const ir::Node& n) {
  static const std::set<std::string> kOps = {"ReduceSum",
                                             "ReduceMean",
                                             "ReduceSumSquare",
                                             "ReduceLogSum",
                                             "ReduceLogSumExp",
                                             "ReduceProd",
                                             "ReduceL1",
                                             "ReduceL2",
                                             "Exp",
                                             "Log",
                                             "Pow",
                                             "Sqrt",
                                             "Reciprocal",
                                             "Softmax",
                                             "LogSoftmax",
                                             "Erf",
                                             "CumSum",
                                             "Div",
                                             "LayerNormalization",
                                             "BatchNormalization",
                                             "InstanceNormalization",
                                             "GroupNormalization",
                                             "SimplifiedLayerNormalization",
                                             "SkipLayerNormalization"};
  return kOps.count(n.op_type) != 0;
}

struct Outcome {
  bool ok = false;
  double worst = 0;   // largest |got - ref| - rtol * |ref|, over atol
  std::string where;  // the output and element that broke it
};

class Searcher {
 public:
  Searcher(const ir::Model& m, const AmpOptions& o, const std::vector<Feeds>& feeds)
      : m_(m), o_(o), feeds_(feeds) {
    rt::Session s(m, o.session);
    for (const auto& f : feeds) refs_.push_back(s.run(f));
  }

  Outcome test(const std::vector<std::string>& blocked) {
    ++runs_;
    FloatConvertOptions fo;
    fo.keep_io_types = o_.keep_io_types;
    fo.node_block_list = blocked;
    Report r;
    ir::Model low;
    try {
      low = convert_float_copy(m_, fo, r);
    } catch (const TransformError& e) {
      return {false, INFINITY, e.what()};
    }
    Outcome out{true, 0, {}};
    try {
      rt::Session s(std::move(low), o_.session);
      for (size_t k = 0; k < feeds_.size(); ++k) compare(s.run(feeds_[k]), refs_[k], out);
    } catch (const std::exception& e) {
      return {false, INFINITY, e.what()};
    }
    return out;
  }

  // The nodes of `candidates` that must stay float32 when `base` stays float32 too; `base` plus all of
  // `candidates` is known to pass.
  std::vector<std::string> needed(const std::vector<std::string>& candidates, std::vector<std::string> base,
                                  Report& report) {
    if (candidates.empty()) return {};
    Outcome t = test(base);
    if (t.ok) return {};
    if (candidates.size() == 1) {
      report.details.push_back(fmt::format("node '{}' stays float32: in float16 {} ({:.3g}x the tolerance)",
                                           candidates[0], t.where, t.worst));
      return candidates;
    }
    auto mid = candidates.begin() + static_cast<ptrdiff_t>(candidates.size() / 2);
    std::vector<std::string> first(candidates.begin(), mid), second(mid, candidates.end());
    std::vector<std::string> with_second = base;
    with_second.insert(with_second.end(), second.begin(), second.end());
    std::vector<std::string> r1 = needed(first, with_second, report);
    std::vector<std::string> with_r1 = base;
    with_r1.insert(with_r1.end(), r1.begin(), r1.end());
    std::vector<std::string> r2 = needed(second, with_r1, report);
    r1.insert(r1.end(), r2.begin(), r2.end());
    return r1;
  }

  int runs() const { return runs_; }

 private:
  void compare(const std::vector<rt::Value>& got, const std::vector<rt::Value>& ref, Outcome& out) const {
    for (size_t k = 0; k < ref.size() && k < got.size(); ++k) {
      if (!ref[k].is_tensor() || !got[k].is_tensor()) continue;
      const rt::Tensor& a = ref[k].tensor();
      const rt::Tensor& b = got[k].tensor();
      if (!ir::dtype_is_float(a.dtype())) continue;
      for (int64_t i = 0; i < a.numel() && i < b.numel(); ++i) {
        double x = a.to_double(i), y = b.to_double(i);
        double excess = std::isfinite(x) && !std::isfinite(y)
                            ? INFINITY
                            : (std::fabs(x - y) - o_.rtol * std::fabs(x)) / o_.atol;
        if (std::isnan(excess) || excess > out.worst) {
          out.worst = std::isnan(excess) ? INFINITY : excess;
          out.where = fmt::format("output {} element {} is {:.6g} for {:.6g}", k, i, y, x);
        }
      }
    }
    out.ok = out.worst <= 1.0;
  }

  const ir::Model& m_;
  const AmpOptions& o_;
  const std::vector<Feeds>& feeds_;
  std::vector<std::vector<rt::Value>> refs_;
  int runs_ = 0;
};

Report finish(ir::History& h, const AmpOptions& o, const std::vector<std::string>& keep, const Searcher& s,
              Report& report) {
  size_t nodes = h.model().graph.nodes.size();
  FloatConvertOptions fo;
  fo.keep_io_types = o.keep_io_types;
  fo.node_block_list = keep;
  Report conv = convert_float(h, fo);
  report.add("nodes", static_cast<int64_t>(nodes));
  report.add("nodes kept float32 for accuracy", static_cast<int64_t>(keep.size()));
  report.add("model runs", s.runs());
  for (const auto& [k, v] : conv.counts) report.add(k, v);
  for (auto& w : conv.warnings) report.warnings.push_back(std::move(w));
  return report;
}

}  // namespace

Report convert_amp(ir::History& h, const AmpOptions& o, const std::vector<Feeds>& feeds) {
  if (feeds.empty()) throw TransformError("convert amp needs at least one set of inputs");
  const ir::Model& m = h.model();
  std::vector<std::string> hot, rest;
  for (const auto& n : m.graph.nodes) {
    // The block list names nodes; unnamed ones, control flow (whose bodies convert node by node) and
    // function calls follow the conversion.
    bool subgraphs = std::any_of(n.attributes.begin(), n.attributes.end(),
                                 [](const ir::Attribute& a) { return !a.graphs.empty(); });
    if (n.name.empty() || subgraphs || m.find_function(n.domain, n.op_type, n.overload)) continue;
    (sensitive(n) ? hot : rest).push_back(n.name);
  }
  Report report;
  std::optional<Searcher> found;
  try {
    found.emplace(m, o, feeds);
  } catch (const std::exception& e) {
    throw TransformError(fmt::format("the float32 model does not run on these inputs: {}", e.what()));
  }
  Searcher& s = *found;
  if (s.test({}).ok) return finish(h, o, {}, s, report);  // the whole model in float16
  std::vector<std::string> all = hot;
  all.insert(all.end(), rest.begin(), rest.end());
  Outcome everything = s.test(all);
  if (!everything.ok) {
    throw TransformError(fmt::format(
        "even with every named node in float32 the model breaks the tolerance: {}", everything.where));
  }
  // The other nodes needed in float32 with the sensitive ones kept, then which sensitive ones are needed.
  std::vector<std::string> extra = s.needed(rest, hot, report);
  std::vector<std::string> keep = s.needed(hot, extra, report);
  keep.insert(keep.end(), extra.begin(), extra.end());
  return finish(h, o, keep, s, report);
}

}  // namespace tessera::transforms
