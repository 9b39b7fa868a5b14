#include "transforms/amp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>

#include "check/checker.h"
#include "transforms/amp_estimate.h"
#include "transforms/amp_suffix.h"
#include "transforms/float16.h"
#include "transforms/observed_run.h"
#include "transforms/specialise.h"
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

// Operators that only move, select or describe values: no arithmetic to round.
bool moves_data(const ir::Node& n) {
  static const std::set<std::string> kOps = {"Reshape", "Transpose", "Squeeze",  "Unsqueeze", "Flatten",
                                             "Shape",   "Size",      "Gather",   "Slice",     "Concat",
                                             "Split",   "Expand",    "Identity", "Dropout",   "Tile"};
  return ir::canonical_domain(n.domain).empty() && kOps.count(n.op_type) != 0;
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
    check_cancel();
    rt::Session s(m, o.session);
    for (const auto& f : feeds) refs_.push_back(observed_run(s, f));
  }

  Outcome test(const std::vector<std::string>& blocked) {
    if (o_.progress) o_.progress(std::min(1.0, spent_ / std::max(1, o_.max_runs)));
    ++runs_;
    Spend spend(*this);
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
      // The input sets one after the other, stopping at the first that breaks the tolerance: most trials
      // fail, and then on the given inputs, so the check sets cost little.
      runner_.run(low, [&](size_t k, const std::vector<rt::Value>& got) {
        if (k == 0) out = {true, 0, {}};  // from the start again when a suffix run fell back to a whole one
        compare(got, refs_[k], out);
        return !out.ok;
      });
    } catch (const std::exception& e) {
      return {false, INFINITY, e.what()};
    }
    // The search keeps every state that passes: later trials start from it.
    if (out.ok) runner_.keep();
    return out;
  }

  // The per-node estimate: the float32 model and the whole model in float16, every value fetched.
  ErrorGrowth estimate() {
    FloatConvertOptions fo;
    fo.keep_io_types = o_.keep_io_types;
    fo.cache = cache_;
    Report r;
    ir::Model low = convert_float_copy(m_, fo, r);
    auto t0 = Clock::now();
    ErrorGrowth e = estimate_error_growth(m_, low, o_.session, feeds_[0]);
    estimate_s_ += seconds_since(t0);
    return e;
  }

  int runs() const { return runs_; }
  double limit() const { return o_.limit(); }
  // The budget spent, in whole-model runs: a trial run from a checkpoint counts the share of the model's
  // nodes it ran, so late trials (the last layers' groups) cost what they cost.
  double spent() const { return spent_; }
  const std::string& first_fallback() const { return runner_.first_fallback(); }
  // Where the search's time went, for --verbose.
  std::string timing() const {
    int64_t all = runner_.nodes_run() + runner_.nodes_skipped();
    return fmt::format(
        "search time: conversions {:.2f} s, estimate {:.2f} s, sessions {:.2f} s, model runs {:.2f} s ({} "
        "runs; "
        "{:.0f} % of their nodes skipped, the kept state's values fed in; {} suffix runs failed and ran "
        "whole)",
        convert_s_, estimate_s_, runner_.session_seconds(), runner_.run_seconds(), runs_,
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
    out.ok = out.worst <= o_.limit();
  }

  // Adds a trial's share of a whole run to spent_ when the trial ends, however it ends.
  struct Spend {
    Searcher& s;
    int64_t ran0, skipped0;
    explicit Spend(Searcher& searcher)
        : s(searcher), ran0(searcher.runner_.nodes_run()), skipped0(searcher.runner_.nodes_skipped()) {}
    ~Spend() {
      int64_t ran = s.runner_.nodes_run() - ran0, all = ran + s.runner_.nodes_skipped() - skipped0;
      s.spent_ += all > 0 ? static_cast<double>(ran) / static_cast<double>(all) : 1.0;
    }
  };

  const ir::Model& m_;
  const AmpOptions& o_;
  const std::vector<Feeds>& feeds_;
  std::vector<std::vector<rt::Value>> refs_;
  std::shared_ptr<ConvertedTensors> cache_ = std::make_shared<ConvertedTensors>();
  SuffixRunner runner_;
  int runs_ = 0;
  double spent_ = 0;
  double convert_s_ = 0, estimate_s_ = 0;
};

std::string verdict(const Outcome& t) {
  if (t.ok) return fmt::format("{:.3g}x the tolerance, kept", t.worst);
  return fmt::format("{:.3g}x the tolerance ({})", t.worst, t.where);
}

// Converts `m` (h.model(), its functions specialised) with `keep` float32 and records it in h as one step.
Report finish(ir::History& h, const ir::Model& m, const AmpOptions& o, const std::vector<std::string>& keep,
              const Searcher& s, Report& report) {
  size_t nodes = m.graph.nodes.size();
  FloatConvertOptions fo;
  fo.keep_io_types = o.keep_io_types;
  fo.node_block_list = keep;
  Report conv;
  commit(h, "Convert to mixed precision", convert_float_copy(m, fo, conv));
  report.add("nodes", static_cast<int64_t>(nodes));
  report.add("nodes kept float32 for accuracy", static_cast<int64_t>(keep.size()));
  report.add("model runs", s.runs());
  report.add("budget spent (whole-model runs)", static_cast<int64_t>(std::ceil(s.spent())));
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
// arithmetic has nothing to convert). In file order, a body's nodes where its parent node stands, each
// with the main-graph node it is in (itself in the main graph). A name used in several graphs is one
// candidate.
struct Candidates {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::string> top;  // candidate -> the main-graph node holding it
  std::set<std::string> risky;                       // sensitive() ones
  std::set<std::string> movers;                      // moves_data() ones
  std::set<std::string> seen;
  int64_t in_subgraphs = 0;  // of which in If/Loop/Scan bodies or local function bodies
  int64_t in_functions = 0;  // of which in local function bodies
};

void collect(const ir::Model& m, const ir::Graph& g, const TypeLookup& type_of, const std::string* top,
             Candidates& c) {
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
          collect(m, *sub, inner, top ? top : &n.name, c);
        }
      }
      continue;
    }
    if (n.name.empty() || m.find_function(n.domain, n.op_type, n.overload)) continue;
    if (n.op_type == "Constant") continue;  // follows its readers (a Constant read only in float32 stays so)
    bool floats = std::any_of(n.inputs.begin(), n.inputs.end(), is_float) ||
                  std::any_of(n.outputs.begin(), n.outputs.end(), is_float);
    if (!floats || !c.seen.insert(n.name).second) continue;
    c.in_subgraphs += top != nullptr;
    c.names.push_back(n.name);
    c.top.emplace(n.name, top ? *top : n.name);
    if (sensitive(n)) c.risky.insert(n.name);
    if (moves_data(n)) c.movers.insert(n.name);
  }
}

std::unordered_map<std::string, ir::Type> main_value_types(const ir::Model& m) {
  auto types = check::check_model(m).value_types;
  for (const auto& vi : m.graph.inputs) types.emplace(vi.name, vi.type);
  for (const auto& t : m.graph.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
  return types;
}

Candidates candidates(const ir::Model& m) {
  auto types = std::make_shared<std::unordered_map<std::string, ir::Type>>(main_value_types(m));
  TypeLookup main = [types](const std::string& v) -> std::optional<ir::Type> {
    auto it = types->find(v);
    if (it == types->end()) return std::nullopt;
    return it->second;
  };
  Candidates c;
  collect(m, m.graph, main, nullptr, c);
  // Local function bodies, typed from their main-graph calls (the conversion then converts such a body
  // node by node); a body's nodes stand where its first call does.
  std::set<const ir::Function*> done;
  for (const auto& n : m.graph.nodes) {
    const ir::Function* f = m.find_function(n.domain, n.op_type, n.overload);
    if (!f || n.name.empty() || !done.insert(f).second) continue;
    auto body = function_value_types(m, *f, *types);
    if (!body) continue;
    auto body_types = std::make_shared<std::unordered_map<std::string, ir::Type>>(std::move(*body));
    TypeLookup inner = [body_types](const std::string& v) -> std::optional<ir::Type> {
      auto it = body_types->find(v);
      if (it == body_types->end()) return std::nullopt;
      return it->second;
    };
    size_t before = c.names.size();
    collect(m, f->body, inner, &n.name, c);
    c.in_functions += static_cast<int64_t>(c.names.size() - before);
  }
  return c;
}

// The candidates, least estimated error growth first (amp_estimate.h): a body's nodes have their own
// estimate where the bodies were measured, else take their main-graph node's; nodes without go last; ties
// (above all the many nodes adding none) put the operators that only move data first, the known-sensitive
// ones (sums, exponentials, statistics: sensitive()) last, then file order (neighbours share their Casts).
struct Ranked {
  std::vector<std::string> names;
  std::vector<double> growth;  // per name (infinity: no estimate)
};

Ranked rank(const Candidates& c, const ErrorGrowth& e) {
  struct Item {
    double growth;
    int tier;  // 0 moves data, 1 other, 2 sensitive
    size_t index;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < c.names.size(); ++i) {
    const std::string& n = c.names[i];
    auto g = e.by_node.find(n);  // its own (main graph, a measured body), else its main-graph node's
    if (g == e.by_node.end()) g = e.by_node.find(c.top.at(n));
    int tier = c.risky.count(n) ? 2 : c.movers.count(n) ? 0 : 1;
    items.push_back({g == e.by_node.end() ? INFINITY : g->second, tier, i});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.growth != b.growth) return a.growth < b.growth;
    return a.tier < b.tier;
  });
  Ranked r;
  for (const auto& it : items) {
    r.names.push_back(c.names[it.index]);
    r.growth.push_back(it.growth);
  }
  return r;
}

std::string ranking_summary(const Ranked& r) {
  size_t none = static_cast<size_t>(std::count(r.growth.begin(), r.growth.end(), 0.0));
  std::string most;
  int shown = 0;
  for (size_t i = r.names.size(); i-- > 0 && shown < 5;) {
    if (!std::isfinite(r.growth[i])) continue;
    most += fmt::format("{}'{}' {:.3g}", shown++ ? ", " : "", r.names[i], r.growth[i]);
  }
  return fmt::format(
      "ranking by estimated error growth (relative error each node adds in float16, from 2 instrumented "
      "runs): {} of {} candidates add none; the most: {}",
      none, r.names.size(), most.empty() ? "none" : most);
}

// The longest prefix of the ranking that passes in float16. Invariant: the first `lo` nodes in float16
// pass (the state kept), the first `hi` fail. Independent rounding errors add up as variances, so the
// squared error is interpolated over the running sum of squared estimates (a little for every node, so
// runs of nodes adding none still count); where interpolation stalls on one side it bisects.
struct PrefixSearch {
  Searcher& s;
  const Ranked& r;
  Report& report;
  size_t lo, hi;
  double e_lo, e_hi;
  Outcome last_failure;  // the run of the first `hi` nodes

  std::vector<std::string> blocked(size_t k) const {
    return {r.names.begin() + static_cast<ptrdiff_t>(k), r.names.end()};
  }

  size_t next(const std::vector<double>& cum, int same_side) const {
    size_t mid = lo + (hi - lo) / 2;
    if (!std::isfinite(e_hi) || e_hi <= e_lo || same_side >= 2) return mid;
    double a = e_lo * e_lo, b = e_hi * e_hi;
    double aim = 0.9 * s.limit() * s.limit();  // a little under the limit
    double target = cum[lo] + (aim - a) / (b - a) * (cum[hi] - cum[lo]);
    size_t k = static_cast<size_t>(std::upper_bound(cum.begin(), cum.end(), target) - cum.begin());
    return std::clamp(k == 0 ? size_t{0} : k - 1, lo + 1, hi - 1);
  }

  void run(int last_run) {
    size_t n = r.names.size();
    double total = 0, worst = 0;
    for (double g : r.growth)
      if (std::isfinite(g)) total += g * g, worst = std::max(worst, g);
    double floor = std::max(total / static_cast<double>(std::max<size_t>(n, 1)) * 1e-2, 1e-30);
    std::vector<double> cum(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      double g = std::isfinite(r.growth[i]) ? r.growth[i] : worst;
      cum[i + 1] = cum[i] + g * g + floor;
    }
    int same_side = 0;
    bool last_ok = false;
    while (hi - lo > 1 && s.spent() < last_run) {
      size_t k = next(cum, same_side);
      Outcome t = s.test(blocked(k));
      report.details.push_back(fmt::format(
          "run {}: the first {} of {} ranked candidates in float16 (up to '{}', estimate {:.3g}): {}",
          s.runs(), k, n, r.names[k - 1], r.growth[k - 1], verdict(t)));
      same_side = t.ok == last_ok ? same_side + 1 : 1;
      last_ok = t.ok;
      if (t.ok) {
        lo = k;
        e_lo = t.worst;
      } else {
        hi = k;
        e_hi = t.worst;
        last_failure = t;
      }
    }
  }
};

// After the prefix: the remaining candidates as groups of neighbours (file order), each tried on top of the
// state kept; one that passes is kept, one that fails is split (in as many parts as it is times over the
// tolerance, 2 to 8), breadth first, but only while the budget can still try every part and every group
// already queued. So no group is left untried while
// runs are left: one that cannot be split further stays float32, proven by its own run.
struct Fill {
  Searcher& s;
  std::set<std::string>& keep;
  Report& report;
  int max_runs;
  int64_t alone = 0, given_up = 0, untried = 0;
  double cost = 0;  // of the trials so far (whole-model runs)
  int trials = 0;
  // Candidate positions in file order: a trial runs from about its group's first node to the end, so a
  // group's cost is predicted from where it starts, scaled by what the trials so far cost against that.
  const std::unordered_map<std::string, size_t>* position = nullptr;
  size_t total = 0;
  double predicted = 0;  // the unscaled predictions of the trials so far

  double share(const std::vector<std::string>& g) const {
    if (!position || total == 0 || g.empty()) return 1.0;
    size_t first = total;
    for (const auto& name : g) first = std::min(first, position->at(name));
    return std::clamp(1.0 - static_cast<double>(first) / static_cast<double>(total), 0.05, 1.0);
  }
  double predict(const std::vector<std::string>& g) const {
    double scale = trials && predicted > 0 ? std::clamp(cost / predicted, 0.5, 2.0) : 1.0;
    return share(g) * scale;
  }

  // How many more trials the budget pays for, at this stage's mean cost so far (a whole run before any).
  double left() const {
    double per_trial = trials ? std::max(cost / trials, 1e-3) : 1.0;
    return std::max(0.0, (max_runs - s.spent()) / per_trial);
  }

  void run(const std::vector<std::string>& rest) {
    std::deque<std::vector<std::string>> queue;
    // A quarter of the runs left for the first groups (up to 8, of 8 nodes at least), the rest for
    // splitting them.
    size_t first =
        std::min(static_cast<size_t>(std::clamp(static_cast<int>(left() / 4), 1, 8)), (rest.size() + 7) / 8);
    split_into(rest, first, queue);
    while (!queue.empty()) {
      std::vector<std::string> g = std::move(queue.front());
      queue.pop_front();
      if (s.spent() >= max_runs) {
        untried += static_cast<int64_t>(g.size());
        for (const auto& name : g)
          report.details.push_back(
              fmt::format("node '{}' stays float32: not tried (run budget spent)", name));
        continue;
      }
      step(std::move(g), queue);
    }
  }

  static void split_into(const std::vector<std::string>& g, size_t parts,
                         std::deque<std::vector<std::string>>& queue) {
    parts = std::max<size_t>(1, std::min(parts, g.size()));
    for (size_t i = 0; i < parts; ++i) {
      size_t a = g.size() * i / parts, b = g.size() * (i + 1) / parts;
      if (a < b)
        queue.emplace_back(g.begin() + static_cast<ptrdiff_t>(a), g.begin() + static_cast<ptrdiff_t>(b));
    }
  }

  void step(std::vector<std::string> g, std::deque<std::vector<std::string>>& queue) {
    std::set<std::string> trial = keep;
    for (const auto& name : g) trial.erase(name);
    double before = s.spent();
    predicted += share(g);
    Outcome t = s.test({trial.begin(), trial.end()});
    cost += s.spent() - before;
    ++trials;
    report.details.push_back(fmt::format("run {}: {} node{} ('{}'{}) to float16: {}", s.runs(), g.size(),
                                         g.size() == 1 ? "" : "s", g.front(),
                                         g.size() == 1 ? "" : fmt::format(" .. '{}'", g.back()), verdict(t)));
    if (t.ok) {
      keep = std::move(trial);
      return;
    }
    if (g.size() == 1) {
      ++alone;
      report.details.push_back(fmt::format("node '{}' stays float32: in float16 {} ({:.3g}x the tolerance)",
                                           g[0], t.where, t.worst));
      return;
    }
    // The further over the tolerance, the finer the split (a group 5x over it is cut in 5, not halved
    // again and again), as far as the budget can try every part and every group already queued.
    double queued = 0;
    for (const auto& q : queue) queued += predict(q);
    int left = static_cast<int>((max_runs - s.spent() - queued) / predict(g));
    double over = std::isfinite(t.worst) ? t.worst / s.limit() : 8.0;
    int parts = std::min({static_cast<int>(std::ceil(over)), 8, left});
    if (parts >= 2) {
      split_into(g, static_cast<size_t>(parts), queue);
      return;
    }
    given_up += static_cast<int64_t>(g.size());
    for (const auto& name : g)
      report.details.push_back(
          fmt::format("node '{}' stays float32: with its group of {} in float16 (run {}) {:.3g}x the "
                      "tolerance; no runs left "
                      "to split the group",
                      name, g.size(), s.runs(), t.worst));
  }
};

}  // namespace

namespace {

bool zeros_and_ones(const rt::Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.to_double(i);
    if (v != 0 && v != 1) return false;
  }
  return true;
}

rt::Tensor shuffled(const rt::Tensor& t, std::mt19937_64& rng) {
  std::vector<int64_t> order(static_cast<size_t>(t.numel()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  rt::Tensor out = rt::Tensor::zeros(t.dtype(), t.shape());
  size_t size = t.nbytes() / static_cast<size_t>(t.numel());
  const auto* from = static_cast<const std::byte*>(t.raw());
  auto* to = static_cast<std::byte*>(out.raw());
  for (size_t i = 0; i < order.size(); ++i)
    std::memcpy(to + i * size, from + static_cast<size_t>(order[i]) * size, size);
  return out;
}

}  // namespace

std::vector<Feeds> shuffled_feeds(const Feeds& feeds, int sets, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Feeds> out;
  for (int k = 0; k < sets; ++k) {
    Feeds f;
    for (const auto& [name, v] : feeds) {
      const rt::Tensor* t = v.is_tensor() ? &v.tensor() : nullptr;
      bool keep = !t || t->dtype() == ir::DataType::kString || t->numel() < 2 ||
                  t->device().kind != rt::DeviceKind::kCpu ||
                  t->nbytes() % static_cast<size_t>(t->numel()) != 0 ||
                  t->nbytes() < static_cast<size_t>(t->numel()) || zeros_and_ones(*t);
      f.emplace_back(name, keep ? v : rt::Value(shuffled(v.tensor(), rng)));
    }
    out.push_back(std::move(f));
  }
  return out;
}

Report convert_amp(ir::History& h, const AmpOptions& given, const std::vector<Feeds>& feeds) {
  // Every session of the search stops building once a cancel is asked (a large model's takes a second).
  AmpOptions o = given;
  if (const Observer* observer = current_observer(); observer && !o.session.cancel)
    o.session.cancel = observer->cancel_flag();
  if (feeds.empty()) throw TransformError("convert amp needs at least one set of inputs");
  // Its progress is its own (AmpOptions::progress): the float16 conversion of each trial reports none.
  QuietProgress quiet;
  // A function called with different input types (or attribute values) has no one typing for its body:
  // a copy per call signature, so each copy's nodes are candidates of their own.
  ir::Model m = h.model();
  int copies = specialise_functions(m, main_value_types(m), true);
  Candidates c = candidates(m);
  Report report;
  if (copies) report.add("functions copied per call signature", copies);
  report.add("candidate nodes", static_cast<int64_t>(c.seen.size()));
  report.add("candidates inside subgraphs", c.in_subgraphs - c.in_functions);
  report.add("candidates inside local functions", c.in_functions);
  std::optional<Searcher> found;
  check_cancel();  // between the steps that take time on a large model (a cancel waits for the step)
  try {
    found.emplace(m, o, feeds);
  } catch (const std::exception& e) {
    throw TransformError(fmt::format("the float32 model does not run on these inputs: {}", e.what()));
  }
  Searcher& s = *found;
  Outcome whole = s.test({});
  report.details.push_back(fmt::format("run 1: the whole model in float16: {}", verdict(whole)));
  if (whole.ok) return finish(h, m, o, {}, s, report);
  Outcome everything = s.test(c.names);
  if (!everything.ok) {
    throw TransformError(fmt::format(
        "even with every named node in float32 the model breaks the tolerance: {}", everything.where));
  }
  // Every state kept from here on was run, so the result is within tolerance. The candidates are ranked
  // by the error they add in float16, from two instrumented runs (the float32 model and the whole model
  // in float16, every value fetched); then the longest prefix of the ranking that passes, then the rest
  // in groups on top of it.
  Ranked ranked;
  try {
    ranked = rank(c, s.estimate());
    report.add("instrumented runs", 2);
  } catch (const std::exception& e) {
    report.details.push_back(fmt::format("no error estimate ({}): candidates in file order", e.what()));
    ranked = rank(c, {});
  }
  report.details.push_back(ranking_summary(ranked));
  PrefixSearch p{s, ranked, report, 0, ranked.names.size(), everything.worst, whole.worst, whole};
  p.run(o.max_runs - 1);  // a run left at least for the rest
  report.add("nodes float16 by the ranking's prefix", static_cast<int64_t>(p.lo));
  std::set<std::string> keep(ranked.names.begin() + static_cast<ptrdiff_t>(p.lo), ranked.names.end());
  std::vector<std::string> rest(ranked.names.begin() + static_cast<ptrdiff_t>(p.lo), ranked.names.end());
  Fill f{s, keep, report, o.max_runs};
  if (p.hi == p.lo + 1) {
    // The next node on top of the prefix was run: it breaks the tolerance.
    ++f.alone;
    report.details.push_back(fmt::format("node '{}' stays float32: in float16 {} ({:.3g}x the tolerance)",
                                         rest.front(), p.last_failure.where, p.last_failure.worst));
    rest.erase(rest.begin());
  }
  // The rest in file order, last first: a group of neighbours shares its Casts (one rounding into and out
  // of the group, where scattered nodes would each round their inputs and outputs); the last layers'
  // errors pass through fewer layers and their trials run only from a late checkpoint, so the room left
  // goes first to what costs least.
  std::unordered_map<std::string, size_t> position;
  for (size_t i = 0; i < c.names.size(); ++i) position.emplace(c.names[i], i);
  f.position = &position;
  f.total = c.names.size();
  std::sort(rest.begin(), rest.end(),
            [&](const std::string& a, const std::string& b) { return position.at(a) > position.at(b); });
  f.run(rest);
  report.add("nodes kept float32, each proven alone", f.alone);
  if (f.given_up) report.add("nodes kept float32 with a group proven to break the tolerance", f.given_up);
  if (f.untried) report.add("nodes not tried (run budget spent)", f.untried);
  return finish(h, m, o, {keep.begin(), keep.end()}, s, report);
}

}  // namespace tessera::transforms
