#include "transforms/amp_suffix.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <unordered_set>

#include "check/checker.h"
#include "transforms/observed_run.h"
#include "transforms/transform.h"

namespace tessera::transforms {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::unordered_map<std::string, size_t> positions(const ir::Graph& g) {
  std::unordered_map<std::string, size_t> p;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].name.empty()) p.emplace(g.nodes[i].name, i);
  return p;
}

// Every value node `n` reads: its inputs and what its subgraphs read from outside.
template <typename F>
void for_each_read(const ir::Node& n, F&& f) {
  for (const auto& v : n.inputs)
    if (!v.empty()) f(v);
  for (const auto& a : n.attributes)
    for (const auto& sub : a.graphs)
      for (const auto& v : outer_values(*sub)) f(v);
}

// Values made by nodes [0, p) that nodes [p, end) read or that are graph outputs.
std::vector<std::string> crossing(const ir::Graph& g, size_t p) {
  std::unordered_set<std::string> made;
  for (size_t i = 0; i < p; ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) made.insert(o);
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  auto need = [&](const std::string& v) {
    if (made.count(v) && seen.insert(v).second) out.push_back(v);
  };
  for (size_t i = p; i < g.nodes.size(); ++i) for_each_read(g.nodes[i], need);
  for (const auto& o : g.outputs) need(o.name);
  return out;
}

bool same_tensor(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.dtype != b.dtype || a.dims != b.dims) return false;
  if (a.data && b.data && a.bytes().data() == b.bytes().data() && a.bytes().size() == b.bytes().size())
    return true;
  return a == b;
}

// Whether `n` (or a node of its subgraphs) calls a local function whose body differs between a and b.
bool calls_changed_function(const ir::Model& a, const ir::Model& b, const ir::Node& n) {
  if (const ir::Function* f = a.find_function(n.domain, n.op_type, n.overload)) {
    const ir::Function* g = b.find_function(n.domain, n.op_type, n.overload);
    if (!g || !(*f == *g)) return true;
  }
  for (const auto& attr : n.attributes)
    for (const auto& sub : attr.graphs)
      for (const auto& inner : sub->nodes)
        if (calls_changed_function(a, b, inner)) return true;
  return false;
}

// Nodes [0, p) of both graphs equal, with the initializers they read and the function bodies they call.
bool same_prefix(const ir::Model& a, const ir::Model& b, size_t p) {
  if (p > a.graph.nodes.size() || p > b.graph.nodes.size()) return false;
  for (size_t i = 0; i < p; ++i)
    if (!(a.graph.nodes[i] == b.graph.nodes[i])) return false;
  if (a.functions != b.functions) {
    for (size_t i = 0; i < p; ++i)
      if (calls_changed_function(a, b, a.graph.nodes[i])) return false;
  }
  bool same = true;
  for (size_t i = 0; i < p && same; ++i) {
    for_each_read(a.graph.nodes[i], [&](const std::string& v) {
      const ir::Tensor* x = a.graph.find_initializer(v);
      const ir::Tensor* y = b.graph.find_initializer(v);
      if ((x == nullptr) != (y == nullptr) || (x && !same_tensor(*x, *y))) same = false;
    });
  }
  return same;
}

ir::Type type_of(const rt::Value& v) {
  if (!v.is_tensor()) return {};
  ir::Shape s;
  for (int64_t d : v.tensor().shape()) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(v.tensor().dtype(), s);
}

constexpr const char* kFedSuffix = "__amp_fed_float";

bool narrow(const ir::Type& t) {
  return t.is_tensor() && (t.elem == ir::DataType::kFloat16 || t.elem == ir::DataType::kBFloat16);
}

rt::Tensor widen(const rt::Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<float>(t.to_double(i));
  return rt::Tensor::from_vector<float>(ir::DataType::kFloat, t.shape(), v);
}

}  // namespace

SuffixRunner::SuffixRunner(const ir::Model& original, rt::SessionOptions options,
                           const std::vector<Feeds>& feeds, int checkpoints)
    : options_(std::move(options)), feeds_(feeds) {
  std::vector<std::string> named;
  for (const auto& n : original.graph.nodes)
    if (!n.name.empty()) named.push_back(n.name);
  size_t k = checkpoints > 0 ? static_cast<size_t>(checkpoints) : 0;
  for (size_t i = 1; i <= k && !named.empty(); ++i) {
    size_t at = named.size() * i / (k + 1);
    if (at > 0 && (checkpoints_.empty() || checkpoints_.back() != named[at]))
      checkpoints_.push_back(named[at]);
  }
}

// The latest checkpoint before which `model` equals the kept state, with every crossing value cached.
SuffixRunner::Start SuffixRunner::start_for(const ir::Model& model) const {
  if (!kept_) return {};
  auto here = positions(model.graph), there = positions(kept_->graph);
  for (auto it = checkpoints_.rbegin(); it != checkpoints_.rend(); ++it) {
    auto a = here.find(*it), b = there.find(*it);
    if (a == here.end() || b == there.end() || a->second != b->second || a->second == 0) continue;
    if (!same_prefix(model, *kept_, a->second)) continue;
    std::vector<std::string> cross = crossing(model.graph, a->second);
    bool cached = true;
    for (const auto& v : cross) cached = cached && kept_values_[0].count(v);
    if (cached) return {a->second, std::move(cross)};
  }
  return {};
}

std::vector<std::vector<rt::Value>> SuffixRunner::run(const ir::Model& model, const Stop& stop) {
  Start start = start_for(model);
  if (start.position > 0) {
    try {
      return run_from(model, start, stop);
    } catch (const std::exception& e) {
      // A suffix the session cannot run is run whole, which decides.
      if (fallbacks_++ == 0) first_fallback_ = e.what();
    }
  }
  return run_from(model, {}, stop);
}

std::vector<std::vector<rt::Value>> SuffixRunner::run_from(const ir::Model& model, const Start& start,
                                                           const Stop& stop) {
  // The values crossing every later checkpoint, to keep if this state is kept.
  auto here = positions(model.graph);
  std::vector<std::string> capture;
  std::unordered_set<std::string> captured;
  for (const auto& name : checkpoints_) {
    auto p = here.find(name);
    if (p == here.end() || p->second <= start.position) continue;
    for (auto& v : crossing(model.graph, p->second))
      if (captured.insert(v).second) capture.push_back(v);
  }
  std::unordered_set<std::string> crossing_set(start.crossing.begin(), start.crossing.end());

  ir::Model cut = model;
  ir::Graph& g = cut.graph;
  g.nodes.erase(g.nodes.begin(), g.nodes.begin() + static_cast<ptrdiff_t>(start.position));
  // Narrow float values go in as float32 (exact) through a Cast back: the CPU session ran cuts fed
  // float16 graph inputs into kernel type errors.
  std::vector<ir::Node> widened;
  for (const auto& v : start.crossing) {
    ir::Type t = type_of(kept_values_[0].at(v));
    if (!narrow(t)) {
      g.inputs.push_back({v, t, "", {}});
      continue;
    }
    ir::Node c;
    c.name = v + kFedSuffix;
    c.op_type = "Cast";
    c.inputs = {v + kFedSuffix};
    c.outputs = {v};
    c.attributes.push_back(ir::Attribute::of_int("to", static_cast<int64_t>(t.elem)));
    widened.push_back(std::move(c));
    t.elem = ir::DataType::kFloat;
    g.inputs.push_back({v + kFedSuffix, t, "", {}});
  }
  for (auto it = widened.rbegin(); it != widened.rend(); ++it) g.add_node(std::move(*it), 0);
  // Outputs made before the start come from the cache; the captured values are outputs too.
  std::vector<std::string> wanted;
  for (const auto& o : model.graph.outputs) wanted.push_back(o.name);
  std::erase_if(g.outputs, [&](const ir::ValueInfo& o) { return crossing_set.count(o.name) != 0; });
  std::unordered_set<std::string> outputs;
  for (const auto& o : g.outputs) outputs.insert(o.name);
  if (!capture.empty()) {
    auto types = check::check_model(cut).value_types;
    for (const auto& v : capture) {
      if (outputs.count(v) || crossing_set.count(v)) continue;
      auto t = types.find(v);
      g.outputs.push_back({v, t == types.end() ? ir::Type{} : t->second, "", {}});
      outputs.insert(v);
    }
  }
  nodes_run_ += static_cast<int64_t>(g.nodes.size());
  nodes_skipped_ += static_cast<int64_t>(start.position);

  auto t0 = Clock::now();
  rt::Session s(std::move(cut), options_);
  session_s_ += seconds_since(t0);
  t0 = Clock::now();
  std::vector<std::vector<rt::Value>> results;
  last_values_.assign(feeds_.size(), {});
  last_complete_ = false;
  bool stopped = false;
  for (size_t k = 0; k < feeds_.size() && !stopped; ++k) {
    Feeds feeds = feeds_[k];
    for (const auto& v : start.crossing) {
      const rt::Value& value = kept_values_[k].at(v);
      if (narrow(type_of(value))) {
        feeds.emplace_back(v + kFedSuffix, widen(value.tensor()));
      } else {
        feeds.emplace_back(v, value);
      }
    }
    std::vector<rt::Value> got = observed_run(s, feeds);
    std::unordered_map<std::string, rt::Value> by_name;
    for (size_t i = 0; i < got.size() && i < s.outputs().size(); ++i)
      by_name.emplace(s.outputs()[i].name, got[i]);
    for (const auto& v : start.crossing) by_name.emplace(v, kept_values_[k].at(v));
    std::vector<rt::Value> out;
    for (const auto& name : wanted) out.push_back(by_name.at(name));
    results.push_back(std::move(out));
    stopped = stop && stop(k, results.back());
    // What the next runs may start from: the values crossing the checkpoints after the start, and the
    // cached ones before it (the nodes before the start are the kept state's).
    auto& next = last_values_[k];
    for (const auto& v : capture)
      if (by_name.count(v)) next.emplace(v, by_name.at(v));
    if (start.position > 0) {
      std::unordered_set<std::string> made_before;
      for (size_t i = 0; i < start.position; ++i)
        for (const auto& o : model.graph.nodes[i].outputs) made_before.insert(o);
      for (const auto& [v, value] : kept_values_[k])
        if (made_before.count(v)) next.emplace(v, value);
    }
  }
  run_s_ += seconds_since(t0);
  last_ = model;
  last_complete_ = !stopped;
  return results;
}

void SuffixRunner::keep() {
  if (!last_ || !last_complete_) return;
  kept_ = std::move(last_);
  last_.reset();
  kept_values_ = std::move(last_values_);
  last_values_.clear();
}

}  // namespace tessera::transforms
