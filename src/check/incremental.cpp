#include "check/incremental.h"

#include <fmt/format.h>

#include <chrono>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "check/graph_checker.h"

namespace tessera::check {

namespace {

// What a check knows about one value of the main graph, owned (a Scope only points into the model).
struct Facts {
  ir::Type type;
  std::optional<ir::Tensor> constant;  // keeps its buffer alive: the buffer's address identifies its bytes
  std::optional<std::vector<ir::Dim>> shape_value;
  std::string producer;

  static Facts of(const ValueFacts& f) {
    return {f.type, f.constant ? std::optional<ir::Tensor>(*f.constant) : std::nullopt,
            f.shape_value ? std::optional<std::vector<ir::Dim>>(*f.shape_value) : std::nullopt, f.producer};
  }
  bool operator==(const Facts& o) const {
    if (type != o.type || producer != o.producer || shape_value != o.shape_value) return false;
    if (constant.has_value() != o.constant.has_value()) return false;
    if (!constant) return true;
    return constant->dtype == o.constant->dtype && constant->dims == o.constant->dims &&
           constant->data == o.constant->data && constant->strings == o.constant->strings &&
           constant->external.has_value() == o.constant->external.has_value();
  }
};

struct NodeRecord {
  std::string name;
  std::vector<std::string> outputs;
  std::vector<Diagnostic> diagnostics;  // node_index: the node's position when recorded
  int64_t symbols_before = 0, symbols_after = 0;
};

bool holds_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(),
                     [](const ir::Attribute& a) { return !a.graphs.empty(); });
}

bool is_graph_value(const ir::Graph& g, const std::string& name) {
  if (g.find_input(name) || g.find_initializer(name)) return true;
  return std::any_of(g.sparse_initializers.begin(), g.sparse_initializers.end(),
                     [&](const ir::SparseTensor& t) { return t.values.name == name; });
}

}  // namespace

struct IncrementalChecker::State : MainGraphObserver {
  bool valid = false;
  const Diagnostics* diags = nullptr;
  std::vector<Diagnostic> prefix;  // everything reported before the main graph's nodes
  int64_t loop_symbols = 0;
  std::unordered_map<ir::NodeId, NodeRecord> nodes;
  std::unordered_map<std::string, Facts> facts;
  std::unordered_map<std::string, ir::NodeId> producer;
  std::unordered_map<std::string, int> names;

  void before_nodes(size_t count, int64_t symbols) override {
    prefix.assign(diags->items.begin(), diags->items.begin() + static_cast<ptrdiff_t>(count));
    loop_symbols = symbols;
  }
  void after_node(const ir::Node& node, size_t, size_t diag_start, int64_t symbols_before,
                  int64_t symbols_after) override {
    NodeRecord& r = nodes[node.id];
    r.name = node.name;
    r.outputs = node.outputs;
    r.diagnostics.assign(diags->items.begin() + static_cast<ptrdiff_t>(diag_start), diags->items.end());
    r.symbols_before = symbols_before;
    r.symbols_after = symbols_after;
  }
  void after_check(const Scope& scope) override {
    for (const auto& [name, f] : scope.values()) facts.emplace(std::string(name), Facts::of(f));
  }

  // After a full check: whether the shortcut may start from this state (see incremental.h).
  bool usable(const ir::Model& m, const CheckResult& r) {
    const ir::Graph& g = m.graph;
    if (r.diagnostics.items.size() >= CheckOptions{}.max_diagnostics || nodes.size() != g.nodes.size())
      return false;
    for (const ir::Node& n : g.nodes) {
      if (holds_subgraph(n)) return false;
      if (!n.name.empty() && ++names[n.name] > 1) return false;
      for (const std::string& out : n.outputs) {
        if (out.empty()) continue;
        if (!producer.emplace(out, n.id).second || is_graph_value(g, out)) return false;
      }
    }
    std::unordered_map<ir::NodeId, size_t> pos;
    for (size_t k = 0; k < g.nodes.size(); ++k) pos[g.nodes[k].id] = k;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      for (const std::string& in : g.nodes[k].inputs) {
        auto p = in.empty() ? producer.end() : producer.find(in);
        if (p != producer.end() && pos[p->second] >= k) return false;
      }
    }
    return true;
  }
};

IncrementalChecker::IncrementalChecker() = default;
IncrementalChecker::~IncrementalChecker() = default;

void IncrementalChecker::reset(const ir::Model& m) {
  auto start = std::chrono::steady_clock::now();
  full(m);
  last_incremental_ = false;
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void IncrementalChecker::update(const ir::Model& m, const std::vector<ir::Change>& changes) {
  auto start = std::chrono::steady_clock::now();
  last_checked_ = 0;
  last_incremental_ = incremental(m, changes);
  if (!last_incremental_) full(m);
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void IncrementalChecker::full(const ir::Model& m) {
  state_ = std::make_unique<State>();
  state_->diags = &result_.diagnostics;
  check_model_observed(m, result_, *state_);
  state_->valid = state_->usable(m, result_);
  last_checked_ = m.graph.nodes.size();
}

// The shortcut; false (with the state left for full() to rebuild) when it may not be taken.
bool IncrementalChecker::incremental(const ir::Model& m, const std::vector<ir::Change>& changes) {
  if (!state_ || !state_->valid) return false;
  State& st = *state_;
  const ir::Graph& g = m.graph;
  std::unordered_set<ir::NodeId> changed;
  for (const ir::Change& c : changes) {
    bool node_change = c.kind == ir::Change::Kind::kNodeAdded || c.kind == ir::Change::Kind::kNodeRemoved ||
                       c.kind == ir::Change::Kind::kNodeChanged;
    if (!node_change || c.path != ir::GraphPath::main_graph()) return false;
    changed.insert(c.node);
  }
  std::unordered_map<ir::NodeId, size_t> pos;
  pos.reserve(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) pos.emplace(g.nodes[k].id, k);

  // Take the changed nodes' old versions out, then put their new versions in.
  std::unordered_set<std::string> dirty;  // values whose facts may differ now
  for (ir::NodeId id : changed) {
    auto it = st.nodes.find(id);
    if (it == st.nodes.end()) continue;
    const NodeRecord& old = it->second;
    if (old.symbols_after != old.symbols_before) return false;  // later fresh symbols would be renumbered
    if (!old.name.empty()) --st.names[old.name];
    for (const std::string& out : old.outputs) {
      if (out.empty()) continue;
      auto p = st.producer.find(out);
      if (p != st.producer.end() && p->second == id) st.producer.erase(p);
      st.facts.erase(out);
      dirty.insert(out);
    }
    st.nodes.erase(it);
  }
  using Item = std::pair<size_t, ir::NodeId>;  // position first: checked in graph order
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  std::unordered_set<ir::NodeId> queued;
  auto enqueue = [&](size_t k) {
    if (queued.insert(g.nodes[k].id).second) queue.emplace(k, g.nodes[k].id);
  };
  for (ir::NodeId id : changed) {
    auto p = pos.find(id);
    if (p == pos.end()) continue;  // removed
    const ir::Node& n = g.nodes[p->second];
    if (holds_subgraph(n)) return false;
    if (!n.name.empty() && ++st.names[n.name] > 1) return false;
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      if (!st.producer.emplace(out, id).second || is_graph_value(g, out)) return false;
      dirty.insert(out);
    }
    for (const std::string& in : n.inputs) {
      auto q = in.empty() ? st.producer.end() : st.producer.find(in);
      if (q != st.producer.end() && pos.at(q->second) >= p->second) return false;
    }
    enqueue(p->second);
  }
  // Consumers of the values that changed hands; each must still come after its producer.
  auto consumers_of = [&](const std::unordered_set<std::string>& values, size_t after) -> bool {
    for (size_t k = after; k < g.nodes.size(); ++k) {
      for (const std::string& in : g.nodes[k].inputs) {
        if (in.empty() || !values.count(in)) continue;
        auto q = st.producer.find(in);
        if (q != st.producer.end() && pos.at(q->second) >= k) return false;
        enqueue(k);
        break;
      }
    }
    return true;
  };
  if (!dirty.empty() && !consumers_of(dirty, 0)) return false;

  // Check the queue in graph order; a node whose output facts changed queues its consumers.
  static const CheckOptions kOptions;
  std::unordered_set<std::string> touched = dirty;
  while (!queue.empty()) {
    auto [k, id] = queue.top();
    queue.pop();
    const ir::Node& n = g.nodes[k];
    auto rec = st.nodes.find(id);
    int64_t before = rec != st.nodes.end() ? rec->second.symbols_before
                     : k == 0              ? st.loop_symbols
                                           : st.nodes.at(g.nodes[k - 1].id).symbols_after;
    Scope scope;
    for (const std::string& in : n.inputs) {
      auto f = in.empty() ? st.facts.end() : st.facts.find(in);
      if (f == st.facts.end() || scope.defined_here(in)) continue;
      ValueFacts& v = scope.define(in);
      v.type = f->second.type;
      v.producer = f->second.producer;
      if (f->second.constant) v.constant = &*f->second.constant;
      if (f->second.shape_value) v.shape_value = &*f->second.shape_value;
    }
    Diagnostics found;
    Checker checker(m, kOptions, found);
    int64_t after = checker.check_main_node(g, n, scope, before);
    int64_t drawn_before = rec != st.nodes.end() ? rec->second.symbols_after - rec->second.symbols_before : 0;
    if (after - before != drawn_before) return false;  // would renumber later fresh symbols
    ++last_checked_;
    std::unordered_set<std::string> moved;
    for (const std::string& out : n.outputs) {
      const ValueFacts* f = out.empty() ? nullptr : scope.find_here(out);
      if (!f) continue;
      Facts now = Facts::of(*f);
      auto old = st.facts.find(out);
      if (old != st.facts.end() && old->second == now) continue;
      st.facts[out] = std::move(now);
      moved.insert(out);
      touched.insert(out);
    }
    NodeRecord& r = st.nodes[id];
    r.name = n.name;
    r.outputs = n.outputs;
    r.diagnostics = std::move(found.items);
    r.symbols_before = before;
    r.symbols_after = after;
    if (!moved.empty() && !consumers_of(moved, k + 1)) return false;
  }

  // The list in a full check's order: what comes before the nodes, each node's findings, the outputs.
  Diagnostics out;
  out.items = st.prefix;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    for (Diagnostic d : st.nodes.at(g.nodes[k].id).diagnostics) {
      if (d.graph == "main" && d.node_index >= 0) d.node_index = static_cast<int>(k);
      out.items.push_back(std::move(d));
    }
  }
  auto report = [&](Severity sev, int output, std::string msg) {
    Diagnostic d;
    d.severity = sev;
    d.graph = "main";
    d.output_index = output;
    d.message = std::move(msg);
    out.items.push_back(std::move(d));
  };
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const ir::ValueInfo& vi = g.outputs[i];
    auto f = st.facts.find(vi.name);
    if (f == st.facts.end()) {
      report(
          Severity::kError, static_cast<int>(i),
          fmt::format("graph output '{}' is not produced by any node, graph input or initializer", vi.name));
      continue;
    }
    std::string conflict;
    merge_types(f->second.type, vi.type, &conflict);
    if (!conflict.empty() && !st.producer.count(vi.name)) {
      report(Severity::kError, static_cast<int>(i),
             fmt::format("graph output '{}' is {}", vi.name, conflict));
    }
  }
  for (const ir::ValueInfo& vi : g.value_info) {
    if (!st.facts.count(vi.name)) {
      report(Severity::kWarning, -1,
             fmt::format("value_info describes '{}', which no node, input or initializer produces", vi.name));
    }
  }
  if (out.items.size() >= kOptions.max_diagnostics) return false;  // a full check would cut the list
  result_.diagnostics = std::move(out);
  for (const std::string& name : touched) {
    auto f = st.facts.find(name);
    if (f == st.facts.end() || f->second.type.is_none()) {
      result_.value_types.erase(name);
    } else {
      result_.value_types[name] = f->second.type;
    }
  }
  return true;
}

}  // namespace tessera::check
