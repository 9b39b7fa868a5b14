#include "transforms/amp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "check/checker.h"
#include "transforms/amp_suffix.h"
#include "transforms/float16.h"
#include "transforms/standalone.h"

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

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Outcome {
  bool ok = false;
  double worst = 0;   // largest |got - ref| - rtol * |ref|, over atol
  std::string where;  // the output and element that broke it
};

class Searcher {
 public:
  Searcher(const ir::Model& m, const AmpOptions& o, const std::vector<Feeds>& feeds)
      : m_(m), o_(o), feeds_(feeds), runner_(m, o.session, feeds, o.checkpoints) {
    rt::Session s(m, o.session);
    for (const auto& f : feeds) refs_.push_back(s.run(f));
  }

  Outcome test(const std::vector<std::string>& blocked) {
    ++runs_;
    FloatConvertOptions fo;
    fo.keep_io_types = o_.keep_io_types;
    fo.node_block_list = blocked;
    fo.cache = cache_;
    Report r;
    ir::Model low;
    auto t0 = Clock::now();
    try {
      low = convert_float_copy(m_, fo, r);
    } catch (const TransformError& e) {
      return {false, INFINITY, e.what()};
    }
    convert_s_ += seconds_since(t0);
    Outcome out{true, 0, {}};
    try {
      auto got = runner_.run(low);
      for (size_t k = 0; k < feeds_.size(); ++k) compare(got[k], refs_[k], out);
    } catch (const std::exception& e) {
      return {false, INFINITY, e.what()};
    }
    // The search keeps every state that passes: later trials start from it.
    if (out.ok) runner_.keep();
    return out;
  }

  int runs() const { return runs_; }
  const std::string& first_fallback() const { return runner_.first_fallback(); }
  // Where the search's time went, for --verbose.
  std::string timing() const {
    int64_t all = runner_.nodes_run() + runner_.nodes_skipped();
    return fmt::format(
        "search time: conversions {:.2f} s, sessions {:.2f} s, model runs {:.2f} s ({} runs; {:.0f} % of "
        "their nodes skipped, the kept state's values fed in; {} suffix runs failed and ran whole)",
        convert_s_, runner_.session_seconds(), runner_.run_seconds(), runs_,
        all ? 100.0 * static_cast<double>(runner_.nodes_skipped()) / static_cast<double>(all) : 0.0,
        runner_.fallbacks());
  }

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
  std::shared_ptr<ConvertedTensors> cache_ = std::make_shared<ConvertedTensors>();
  SuffixRunner runner_;
  int runs_ = 0;
  double convert_s_ = 0;
};

std::string verdict(const Outcome& t) {
  if (t.ok) return "within tolerance, kept";
  return fmt::format("{:.3g}x the tolerance ({})", t.worst, t.where);
}

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
  report.details.push_back(s.timing());
  if (!s.first_fallback().empty())
    report.details.push_back("the first suffix run that ran whole failed with: " + s.first_fallback());
  for (const auto& [k, v] : conv.counts) report.add(k, v);
  for (auto& w : conv.warnings) report.warnings.push_back(std::move(w));
  return report;
}

// The named nodes the search may keep float32, in the main graph and in If/Loop/Scan bodies at any depth
// (the conversion blocks a node by name in any graph): not control flow itself (its bodies' nodes are
// candidates instead), no function calls, and only nodes that read or write a float32 tensor (shape
// arithmetic has nothing to convert). The sensitive ones grouped by operator type, the others in file
// order, a body's nodes where its parent node stands. A name used in several graphs is one candidate.
struct Candidates {
  std::vector<std::string> rest;
  std::map<std::string, std::vector<std::string>> sensitive;  // op type -> nodes
  std::set<std::string> seen;
  int64_t in_subgraphs = 0;
  std::vector<std::string> all() const {
    std::vector<std::string> v = rest;
    for (const auto& [op, names] : sensitive) v.insert(v.end(), names.begin(), names.end());
    return v;
  }
};

void collect(const ir::Model& m, const ir::Graph& g, const TypeLookup& type_of, bool nested, Candidates& c) {
  auto is_float = [&](const std::string& v) {
    auto t = v.empty() ? std::nullopt : type_of(v);
    return t && t->is_tensor() && t->elem == ir::DataType::kFloat;
  };
  for (const auto& n : g.nodes) {
    bool subgraphs = std::any_of(n.attributes.begin(), n.attributes.end(),
                                 [](const ir::Attribute& a) { return !a.graphs.empty(); });
    if (subgraphs) {
      for (const auto& a : n.attributes) {
        for (const auto& sub : a.graphs) {
          auto types = std::make_shared<std::unordered_map<std::string, ir::Type>>(
              graph_value_types(m, *sub, type_of));
          TypeLookup inner = [types, &type_of](const std::string& v) -> std::optional<ir::Type> {
            auto it = types->find(v);
            if (it != types->end()) return it->second;
            return type_of(v);
          };
          collect(m, *sub, inner, true, c);
        }
      }
      continue;
    }
    if (n.name.empty() || m.find_function(n.domain, n.op_type, n.overload)) continue;
    if (n.op_type == "Constant") continue;  // follows its readers (a Constant read only in float32 stays so)
    bool floats = std::any_of(n.inputs.begin(), n.inputs.end(), is_float) ||
                  std::any_of(n.outputs.begin(), n.outputs.end(), is_float);
    if (!floats || !c.seen.insert(n.name).second) continue;
    c.in_subgraphs += nested;
    if (sensitive(n)) {
      c.sensitive[n.op_type].push_back(n.name);
    } else {
      c.rest.push_back(n.name);
    }
  }
}

Candidates candidates(const ir::Model& m) {
  auto types = std::make_shared<std::unordered_map<std::string, ir::Type>>(check::check_model(m).value_types);
  for (const auto& vi : m.graph.inputs) types->emplace(vi.name, vi.type);
  for (const auto& t : m.graph.initializers) types->emplace(t.name, ir::Type::tensor(t.dtype));
  TypeLookup main = [types](const std::string& v) -> std::optional<ir::Type> {
    auto it = types->find(v);
    if (it == types->end()) return std::nullopt;
    return it->second;
  };
  Candidates c;
  collect(m, m.graph, main, false, c);
  return c;
}

// Groups to hand to float16, most promising first: the other nodes in `chunks` runs of file order (a run
// of layers), then each sensitive operator type as a whole.
std::deque<std::vector<std::string>> initial_groups(const Candidates& c, int chunks) {
  std::deque<std::vector<std::string>> q;
  size_t n = c.rest.size(), k = static_cast<size_t>(std::max(1, chunks));
  for (size_t i = 0; i < k; ++i) {
    size_t lo = n * i / k, hi = n * (i + 1) / k;
    if (lo < hi)
      q.emplace_back(c.rest.begin() + static_cast<ptrdiff_t>(lo),
                     c.rest.begin() + static_cast<ptrdiff_t>(hi));
  }
  for (const auto& [op, names] : c.sensitive) q.push_back(names);
  return q;
}

}  // namespace

Report convert_amp(ir::History& h, const AmpOptions& o, const std::vector<Feeds>& feeds) {
  if (feeds.empty()) throw TransformError("convert amp needs at least one set of inputs");
  const ir::Model& m = h.model();
  Candidates c = candidates(m);
  Report report;
  report.add("candidate nodes", static_cast<int64_t>(c.seen.size()));
  report.add("candidates inside subgraphs", c.in_subgraphs);
  std::optional<Searcher> found;
  try {
    found.emplace(m, o, feeds);
  } catch (const std::exception& e) {
    throw TransformError(fmt::format("the float32 model does not run on these inputs: {}", e.what()));
  }
  Searcher& s = *found;
  Outcome whole = s.test({});
  report.details.push_back(fmt::format("run 1: the whole model in float16: {}", verdict(whole)));
  if (whole.ok) return finish(h, o, {}, s, report);
  std::vector<std::string> all = c.all();
  Outcome everything = s.test(all);
  if (!everything.ok) {
    throw TransformError(fmt::format(
        "even with every named node in float32 the model breaks the tolerance: {}", everything.where));
  }
  // From everything float32 (known to pass), hand groups to float16 one at a time, keeping each hand-over
  // that passes; a group that fails is split in halves, tried after the groups already queued. Every
  // state kept was run, so the result is within tolerance; when the run budget is spent, the groups not
  // yet tried stay float32. First, one run with only the sensitive operators float32: where that passes
  // (the usual case: the drift comes from sums, exponentials and statistics), the search starts there
  // and only the sensitive groups are left to try.
  std::set<std::string> keep(all.begin(), all.end());
  std::deque<std::vector<std::string>> queue;
  std::vector<std::string> sensitive_nodes = c.all();
  sensitive_nodes.erase(sensitive_nodes.begin(),
                        sensitive_nodes.begin() + static_cast<ptrdiff_t>(c.rest.size()));
  Outcome rest16{false, INFINITY, {}};
  if (!c.rest.empty() && !sensitive_nodes.empty() && s.runs() < o.max_runs) {
    rest16 = s.test(sensitive_nodes);
    report.details.push_back(fmt::format("run {}: every node but the sensitive operators ({}) in float16: {}",
                                         s.runs(), sensitive_nodes.size(), verdict(rest16)));
  }
  if (rest16.ok) {
    keep = {sensitive_nodes.begin(), sensitive_nodes.end()};
    for (const auto& [op, names] : c.sensitive) queue.push_back(names);
  } else {
    queue = initial_groups(c, o.initial_groups);
  }
  int64_t untried = 0;
  while (!queue.empty()) {
    std::vector<std::string> g = std::move(queue.front());
    queue.pop_front();
    if (s.runs() >= o.max_runs) {
      untried += static_cast<int64_t>(g.size());
      for (const auto& name : g)
        report.details.push_back(fmt::format("node '{}' stays float32: not tried (run budget spent)", name));
      continue;
    }
    std::set<std::string> trial = keep;
    for (const auto& name : g) trial.erase(name);
    Outcome t = s.test({trial.begin(), trial.end()});
    report.details.push_back(fmt::format("run {}: {} node{} ('{}'{}) to float16: {}", s.runs(), g.size(),
                                         g.size() == 1 ? "" : "s", g.front(),
                                         g.size() == 1 ? "" : fmt::format(" .. '{}'", g.back()), verdict(t)));
    if (t.ok) {
      keep = std::move(trial);
      continue;
    }
    if (g.size() == 1) {
      report.details.push_back(fmt::format("node '{}' stays float32: in float16 {} ({:.3g}x the tolerance)",
                                           g[0], t.where, t.worst));
      continue;
    }
    // Breadth first: every group is tried whole before any is split finer, so a spent budget leaves
    // fine detail undecided rather than whole layers untried.
    auto mid = g.begin() + static_cast<ptrdiff_t>(g.size() / 2);
    queue.emplace_back(g.begin(), mid);
    queue.emplace_back(mid, g.end());
  }
  if (untried) report.add("nodes not tried (run budget spent)", untried);
  return finish(h, o, {keep.begin(), keep.end()}, s, report);
}

}  // namespace tessera::transforms
