#include "check/incremental.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
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

// Facts::of(f) == a, without building the copy (most re-checked values keep their facts).
bool same_facts(const Facts& a, const ValueFacts& f) {
  if (a.type != f.type || a.producer != f.producer) return false;
  if (a.shape_value.has_value() != (f.shape_value != nullptr)) return false;
  if (f.shape_value && *a.shape_value != *f.shape_value) return false;
  if (a.constant.has_value() != (f.constant != nullptr)) return false;
  if (!f.constant) return true;
  const ir::Tensor& x = *a.constant;
  const ir::Tensor& y = *f.constant;
  return x.dtype == y.dtype && x.dims == y.dims && x.data == y.data && x.strings == y.strings &&
         x.external.has_value() == y.external.has_value();
}

// a = Facts::of(f), into a's own storage (no allocation when the shape and names fit).
void assign_facts(Facts& a, const ValueFacts& f) {
  a.type = f.type;
  a.producer = f.producer;
  if (f.constant) {
    a.constant = *f.constant;
  } else {
    a.constant.reset();
  }
  if (f.shape_value) {
    a.shape_value = *f.shape_value;
  } else {
    a.shape_value.reset();
  }
}

// A value's number in the checker's table (State::values): given once, when the name is first met, and
// kept while the checker lives, so that the hot path indexes vectors instead of hashing names.
using ValueId = uint32_t;
constexpr ValueId kNoValue = UINT32_MAX;

struct NodeRecord {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> outer;  // what its subgraphs read from around them (subgraph_reads)
  // The numbers of `inputs`, `outputs` and `outer` (kNoValue for an empty name): valid while those are.
  std::vector<ValueId> input_ids, output_ids, outer_ids;
  std::vector<Diagnostic> diagnostics;  // node_index: the node's position when recorded
  int64_t symbols_before = 0, symbols_after = 0;
  bool flagged = false;  // in State::flagged
};

// What the checker knows about one value name of the main graph.
struct Value {
  std::string name;
  Facts facts;
  bool known = false;     // `facts` hold (a full check's scope would define the value)
  bool produced = false;  // `producer` holds: a main-graph node makes it
  bool declared = false;  // a graph output or value_info declares its type
  bool dirty = false;     // in the pass's dirty list
  ir::NodeId producer = 0;
  // The nodes reading it (inputs and subgraph reads, as recorded): what an edit that changes its facts
  // looks up instead of scanning every node of the graph.
  std::vector<ir::NodeId> readers;
};

// The value table: names to numbers, numbers to values.
class Values {
 public:
  ValueId find(std::string_view name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? kNoValue : it->second;
  }
  ValueId intern(std::string_view name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<ValueId>(at_.size());
    at_.emplace_back().name = std::string(name);
    ids_.emplace(std::string(name), id);
    return id;
  }
  // The numbers of `names` (kNoValue for an empty one), into `out`.
  void intern_all(const std::vector<std::string>& names, std::vector<ValueId>& out) {
    out.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) out[i] = names[i].empty() ? kNoValue : intern(names[i]);
  }
  Value& operator[](ValueId id) { return at_[id]; }
  const Value& operator[](ValueId id) const { return at_[id]; }
  // The value named `name` when its facts are known, else nullptr.
  const Value* known(std::string_view name) const {
    ValueId id = find(name);
    return id != kNoValue && at_[id].known ? &at_[id] : nullptr;
  }

 private:
  std::unordered_map<std::string, ValueId, NameHash, std::equal_to<>> ids_;
  std::deque<Value> at_;  // a deque: a value's address stays while others are added
};

bool holds_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(),
                     [](const ir::Attribute& a) { return !a.graphs.empty(); });
}

// Whether `n` calls a local function, itself or in a subgraph at any depth: its check then depends on
// the functions' bodies.
bool calls_function(const ir::Model& m, const ir::Node& n) {
  if (m.find_function(n.domain, n.op_type, n.overload)) return true;
  for (const ir::Attribute& a : n.attributes) {
    for (const auto& g : a.graphs) {
      for (const ir::Node& x : g->nodes) {
        if (calls_function(m, x)) return true;
      }
    }
  }
  return false;
}

using FunctionName = std::pair<std::string, std::string>;  // (domain, name): any overload

// Whether `n` calls one of `names`, itself or in a subgraph at any depth (whether the function exists
// or not: a node calling a function just removed changes too).
bool calls_any(const std::set<FunctionName>& names, const ir::Node& n) {
  if (names.count({n.domain, n.op_type})) return true;
  for (const ir::Attribute& a : n.attributes) {
    for (const auto& g : a.graphs) {
      for (const ir::Node& x : g->nodes) {
        if (calls_any(names, x)) return true;
      }
    }
  }
  return false;
}

std::set<FunctionName> function_names(const ir::Model& m) {
  std::set<FunctionName> out;
  for (const ir::Function& f : m.functions) out.emplace(f.domain, f.name);
  return out;
}

// The type each value of `g` is declared to have: graph outputs win over value_info, whose first entry
// counts (as the checker looks them up).
std::unordered_map<std::string, ir::Type> declared_types(const ir::Graph& g) {
  std::unordered_map<std::string, ir::Type> out;
  for (const ir::ValueInfo& vi : g.value_info) out.emplace(vi.name, vi.type);
  for (const ir::ValueInfo& vi : g.outputs) out[vi.name] = vi.type;
  return out;
}

// The position of each node id in a graph's node list: a vector indexed by id where ids are dense (they
// come from the graph's counter), else a hash map. Built on every edit of a 50,000-node graph, where a
// hash map's inserts alone took a few ms.
class Positions {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  explicit Positions(const ir::Graph& g) {
    size_t n = g.nodes.size();
    ir::NodeId top = 0;
    for (const ir::Node& x : g.nodes) top = std::max(top, x.id);
    if (top <= 4 * n + 1024) {
      dense_.assign(static_cast<size_t>(top) + 1, kNone);
      for (size_t k = 0; k < n; ++k) dense_[static_cast<size_t>(g.nodes[k].id)] = k;
      return;
    }
    sparse_.reserve(n);
    for (size_t k = 0; k < n; ++k) sparse_.emplace(g.nodes[k].id, k);
  }
  // kNone when the graph has no node `id`.
  size_t find(ir::NodeId id) const {
    if (sparse_.empty()) return id < dense_.size() ? dense_[static_cast<size_t>(id)] : kNone;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? kNone : it->second;
  }

 private:
  std::vector<size_t> dense_;
  std::unordered_map<ir::NodeId, size_t> sparse_;
};

bool is_graph_value(const ir::Graph& g, const std::string& name) {
  if (g.find_input(name) || g.find_initializer(name)) return true;
  return std::any_of(g.sparse_initializers.begin(), g.sparse_initializers.end(),
                     [&](const ir::SparseTensor& t) { return t.values.name == name; });
}

// A re-check under way (IncrementalChecker::update with a budget): the graph's positions, the nodes
// still to check (marked by position: every consumer queued while checking node k comes after it, so
// one pass upward checks them in graph order), and what the end of the pass needs.
struct Pass {
  explicit Pass(const ir::Graph& g) : pos(g), marked(g.nodes.size(), 0), next(g.nodes.size()) {}
  Positions pos;
  std::vector<char> marked;
  size_t pending = 0;
  size_t next;                                    // the lowest position that may be marked
  std::unordered_map<ir::NodeId, int64_t> drawn;  // fresh symbols each changed node drew last time
  std::vector<ValueId> dirty;                     // values whose facts may differ now (Value::dirty)
};

// The empty declared-types map handed to the checker for a node none of whose outputs is declared: its
// lookups are then a scan of nothing (no hash of the name).
const std::unordered_map<std::string, ir::Type>& no_declarations() {
  static const std::unordered_map<std::string, ir::Type> none;
  return none;
}

}  // namespace

struct IncrementalChecker::State : MainGraphObserver {
  bool valid = false;
  const Diagnostics* diags = nullptr;
  std::vector<Diagnostic> prefix;  // everything reported before the main graph's nodes
  size_t header_count = 0;         // of which the model-level checks and the function bodies
  int64_t header_symbols = 0;      // the symbol counter after those
  int64_t loop_symbols = 0;
  std::unordered_map<ir::NodeId, NodeRecord> nodes;
  Values values;  // facts, producer and readers of each value, by number
  std::unordered_map<std::string, int> names;
  std::unordered_set<ir::NodeId> flagged;  // nodes whose record has findings (the list is built from them)
  // What the shortcut compares an edit of the graph's values, declarations or model against.
  std::unordered_set<std::string> graph_values;  // graph inputs and initializers
  std::unordered_map<std::string, ir::Type> declared;
  std::vector<ir::OpsetImport> opsets;
  std::set<FunctionName> functions;
  std::optional<Pass> pass;

  void enqueue(size_t k) {
    if (pass->marked[k]) return;
    pass->marked[k] = 1;
    ++pass->pending;
    pass->next = std::min(pass->next, k);
  }
  void mark_dirty(ValueId v) {
    if (values[v].dirty) return;
    values[v].dirty = true;
    pass->dirty.push_back(v);
  }

  // Queues the consumers (at `after` or later) of a value that changed hands, from the readers' index;
  // false when one no longer comes after its producer. `made_at`: the producer's position when the
  // caller knows it (the node just checked), else looked up.
  bool consumers_of(ValueId v, size_t after, size_t made_at = Positions::kNone - 1) {
    const Value& value = values[v];
    if (value.readers.empty()) return true;
    const Positions& pos = pass->pos;
    if (made_at == Positions::kNone - 1)
      made_at = value.produced ? pos.find(value.producer) : Positions::kNone;
    for (ir::NodeId id : value.readers) {
      const size_t k = pos.find(id);
      if (k == Positions::kNone) return false;  // a reader no longer in the graph: not an edit we know
      if (k < after) continue;
      if (made_at != Positions::kNone && made_at >= k) return false;
      enqueue(k);
    }
    return true;
  }

  void before_main_graph(size_t count, int64_t symbols) override {
    header_count = count;
    header_symbols = symbols;
  }
  void before_nodes(size_t count, int64_t symbols) override {
    prefix.assign(diags->items.begin(), diags->items.begin() + static_cast<ptrdiff_t>(count));
    loop_symbols = symbols;
  }
  void after_node(const ir::Node& node, size_t, size_t diag_start, int64_t symbols_before,
                  int64_t symbols_after) override {
    NodeRecord& r = nodes[node.id];
    r.name = node.name;
    r.inputs = node.inputs;
    r.outputs = node.outputs;
    r.outer = subgraph_reads(node);
    values.intern_all(r.inputs, r.input_ids);
    values.intern_all(r.outputs, r.output_ids);
    values.intern_all(r.outer, r.outer_ids);
    add_reads(node.id, r);
    r.diagnostics.assign(diags->items.begin() + static_cast<ptrdiff_t>(diag_start), diags->items.end());
    r.flagged = !r.diagnostics.empty();
    if (r.flagged) flagged.insert(node.id);
    r.symbols_before = symbols_before;
    r.symbols_after = symbols_after;
  }
  void after_check(const Scope& scope) override {
    for (const auto& [name, f] : scope.values()) {
      Value& v = values[values.intern(name)];
      v.facts = Facts::of(f);
      v.known = true;
    }
  }

  // After a full check: whether the shortcut may start from this state (see incremental.h).
  bool usable(const ir::Model& m, const CheckResult& r) {
    const ir::Graph& g = m.graph;
    if (r.diagnostics.items.size() >= CheckOptions{}.max_diagnostics || nodes.size() != g.nodes.size())
      return false;
    for (const ir::Node& n : g.nodes) {
      if (!n.name.empty() && ++names[n.name] > 1) return false;
      for (ValueId out : nodes.at(n.id).output_ids) {
        if (out == kNoValue) continue;
        Value& v = values[out];
        if (v.produced || is_graph_value(g, v.name)) return false;
        v.produced = true;
        v.producer = n.id;
      }
    }
    Positions pos(g);
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const NodeRecord& r = nodes.at(g.nodes[k].id);
      if (!reads_before(r.input_ids, pos, k) || !reads_before(r.outer_ids, pos, k)) return false;
    }
    for (const ir::ValueInfo& vi : g.inputs) graph_values.insert(vi.name);
    for (const ir::Tensor& t : g.initializers) graph_values.insert(t.name);
    for (const ir::SparseTensor& t : g.sparse_initializers) graph_values.insert(t.values.name);
    declare(declared_types(g));
    opsets = m.opset_imports;
    functions = function_names(m);
    return true;
  }

  // Defines the main graph's inputs and initializers again and replaces their part of the prefix;
  // the values whose facts changed (or that came or went) are marked dirty. False when a node now
  // makes a value of the graph's name (a full check reports it among the producers).
  bool recheck_graph_values(const ir::Model& m, const CheckOptions& options) {
    Diagnostics found;
    Checker checker(m, options, found);
    Scope scope;
    checker.check_main_graph_values(m.graph, scope);
    std::unordered_set<std::string> now;
    for (const auto& [name, f] : scope.values()) {
      const ValueId id = values.intern(name);
      Value& v = values[id];
      if (v.produced) return false;
      Facts facts = Facts::of(f);
      const bool was = graph_values.count(v.name) && v.known;
      if (!was || !(v.facts == facts)) {
        v.facts = std::move(facts);
        v.known = true;
        mark_dirty(id);
      }
      now.insert(v.name);
    }
    for (const std::string& name : graph_values) {
      if (now.count(name)) continue;
      const ValueId id = values.find(name);
      values[id].known = false;
      mark_dirty(id);
    }
    graph_values = std::move(now);
    prefix.resize(header_count);
    prefix.insert(prefix.end(), found.items.begin(), found.items.end());
    return true;
  }

  // Replaces the declared types (and the values' flags that say they have one).
  void declare(std::unordered_map<std::string, ir::Type> now) {
    for (const auto& [name, type] : declared) values[values.find(name)].declared = false;
    declared = std::move(now);
    for (const auto& [name, type] : declared) values[values.intern(name)].declared = true;
  }

  // The producers of the values whose declared type (graph output, value_info) changed.
  void redeclared(const ir::Graph& g, std::unordered_set<ir::NodeId>& changed) {
    std::unordered_map<std::string, ir::Type> now = declared_types(g);
    auto note = [&](const std::string& name) {
      const ValueId id = values.find(name);
      if (id != kNoValue && values[id].produced) changed.insert(values[id].producer);
    };
    for (const auto& [name, type] : now) {
      auto old = declared.find(name);
      if (old == declared.end() || !(old->second == type)) note(name);
    }
    for (const auto& [name, type] : declared) {
      if (!now.count(name)) note(name);
    }
    declare(std::move(now));
  }

  // Indexes (or forgets) what a node's record says it reads.
  void add_reads(ir::NodeId id, const NodeRecord& r) {
    auto add = [&](ValueId v) {
      if (v == kNoValue) return;
      std::vector<ir::NodeId>& ids = values[v].readers;
      if (ids.empty() || ids.back() != id) ids.push_back(id);  // a value read twice by one node: once
    };
    for (ValueId v : r.input_ids) add(v);
    for (ValueId v : r.outer_ids) add(v);
  }
  void remove_reads(ir::NodeId id, const NodeRecord& r) {
    auto remove = [&](ValueId v) {
      if (v != kNoValue) std::erase(values[v].readers, id);
    };
    for (ValueId v : r.input_ids) remove(v);
    for (ValueId v : r.outer_ids) remove(v);
  }

  // Whether every value in `ids` that a main-graph node produces comes from before position `k`.
  bool reads_before(const std::vector<ValueId>& ids, const Positions& pos, size_t k) const {
    for (ValueId in : ids) {
      if (in != kNoValue && values[in].produced && pos.find(values[in].producer) >= k) return false;
    }
    return true;
  }

  // Re-runs the model-level checks and the function bodies, replacing their part of the prefix; false
  // when they drew a different number of fresh symbols (every later one would be renumbered).
  bool recheck_header(const ir::Model& m, const CheckOptions& options) {
    Diagnostics head;
    Checker checker(m, options, head);
    check_model_header(m, checker);
    if (checker.symbols() != header_symbols) return false;
    prefix.erase(prefix.begin(), prefix.begin() + static_cast<ptrdiff_t>(header_count));
    prefix.insert(prefix.begin(), head.items.begin(), head.items.end());
    header_count = head.items.size();
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

void IncrementalChecker::update(const ir::Model& m, const std::vector<ir::Change>& changes, size_t budget) {
  auto start = std::chrono::steady_clock::now();
  last_checked_ = 0;
  // A pass left unfinished refers to the graph before this edit: only a full check can follow it.
  last_incremental_ = complete_ && incremental(m, changes, budget);
  if (!last_incremental_) full(m);
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void IncrementalChecker::finish(const ir::Model& m) {
  if (complete_) return;
  auto start = std::chrono::steady_clock::now();
  if (!run_pass(m, SIZE_MAX)) {
    last_incremental_ = false;
    full(m);
  }
  last_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void IncrementalChecker::full(const ir::Model& m) {
  complete_ = true;
  state_ = std::make_unique<State>();
  state_->diags = &result_.diagnostics;
  check_model_observed(m, result_, *state_);
  state_->valid = state_->usable(m, result_);
  last_checked_ = m.graph.nodes.size();
}

// The shortcut; false (with the state left for full() to rebuild) when it may not be taken.
bool IncrementalChecker::incremental(const ir::Model& m, const std::vector<ir::Change>& changes,
                                     size_t budget) {
  if (!state_ || !state_->valid) return false;
  State& st = *state_;
  const ir::Graph& g = m.graph;
  static const CheckOptions kOptions;
  std::unordered_set<ir::NodeId> changed;
  bool functions_changed = false, values_changed = false, declarations_changed = false;
  bool model_changed = false;
  for (const ir::Change& c : changes) {
    if (c.path.function) {
      functions_changed = true;  // anything in a function body: the bodies and their callers
      continue;
    }
    if (!c.path.steps.empty()) {
      changed.insert(c.path.steps.front().node);  // anything in a subgraph: the main node holding it
      continue;
    }
    switch (c.kind) {
      case ir::Change::Kind::kNodeAdded:
      case ir::Change::Kind::kNodeRemoved:
      case ir::Change::Kind::kNodeChanged:
        changed.insert(c.node);
        break;
      case ir::Change::Kind::kGraphIoChanged:  // inputs define values, outputs declare types
        values_changed = declarations_changed = true;
        break;
      case ir::Change::Kind::kInitializersChanged:
        values_changed = true;
        break;
      case ir::Change::Kind::kValueInfoChanged:
        declarations_changed = true;
        break;
      case ir::Change::Kind::kModelChanged:
        model_changed = true;
        break;
    }
  }
  if (model_changed) {
    // Opset imports change what every node means: checked in full. Functions added, removed or
    // replaced (and metadata): the header, and every node calling a function that is or was there.
    if (m.opset_imports != st.opsets) return false;
    std::set<FunctionName> now = function_names(m);
    std::set<FunctionName> either = now;
    either.insert(st.functions.begin(), st.functions.end());
    st.functions = std::move(now);
    for (const ir::Node& n : g.nodes) {
      if (calls_any(either, n)) changed.insert(n.id);
    }
    functions_changed = true;
  }
  if (declarations_changed) st.redeclared(g, changed);
  if (functions_changed) {
    if (!st.recheck_header(m, kOptions)) return false;
    for (const ir::Node& n : g.nodes) {
      if (calls_function(m, n)) changed.insert(n.id);
    }
  }
  Pass& pass = st.pass.emplace(g);
  const Positions& pos = pass.pos;

  // Take the changed nodes' old versions out, then put their new versions in.
  if (values_changed && !st.recheck_graph_values(m, kOptions)) return false;
  std::unordered_map<ir::NodeId, int64_t>& drawn = pass.drawn;
  for (ir::NodeId id : changed) {
    auto it = st.nodes.find(id);
    if (it == st.nodes.end()) continue;
    const NodeRecord& old = it->second;
    // A removed node's fresh symbols would be missing from the numbering of every later one; a changed
    // node must draw as many again (checked below).
    if (old.symbols_after != old.symbols_before && pos.find(id) == Positions::kNone) return false;
    drawn[id] = old.symbols_after - old.symbols_before;
    if (!old.name.empty()) --st.names[old.name];
    st.remove_reads(id, old);
    for (ValueId out : old.output_ids) {
      if (out == kNoValue) continue;
      Value& v = st.values[out];
      if (v.produced && v.producer == id) v.produced = false;
      v.known = false;
      st.mark_dirty(out);
    }
    st.nodes.erase(it);
    st.flagged.erase(id);
  }
  for (ir::NodeId id : changed) {
    size_t p = pos.find(id);
    if (p == Positions::kNone) continue;  // removed
    const ir::Node& n = g.nodes[p];
    if (!n.name.empty() && ++st.names[n.name] > 1) return false;
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      const ValueId o = st.values.intern(out);
      Value& v = st.values[o];
      if (v.produced || is_graph_value(g, out)) return false;
      v.produced = true;
      v.producer = id;
      st.mark_dirty(o);
    }
    st.enqueue(p);
  }
  // Each changed node must still read only values produced before it (its subgraphs' reads included).
  std::vector<ValueId> reads;
  for (ir::NodeId id : changed) {
    size_t p = pos.find(id);
    if (p == Positions::kNone) continue;
    const ir::Node& n = g.nodes[p];
    st.values.intern_all(n.inputs, reads);
    if (!st.reads_before(reads, pos, p)) return false;
    if (!holds_subgraph(n)) continue;
    st.values.intern_all(subgraph_reads(n), reads);
    if (!st.reads_before(reads, pos, p)) return false;
  }
  // The consumers of the values that changed hands (the changed nodes' own reads are out of the index
  // until they are checked again, and they are queued anyway).
  for (ValueId v : pass.dirty) {
    if (!st.consumers_of(v, 0)) return false;
  }
  return run_pass(m, budget);
}

void IncrementalChecker::set_value_type(const std::string& name, const ir::Type& t) {
  if (t.is_none()) {
    result_.value_types.erase(name);
  } else {
    result_.value_types[name] = t;
  }
}

// Checks the marked nodes in graph order, at most `budget` of them; a node whose output facts changed
// queues its consumers. Then assembles the list: final when nothing is left to check, else provisional
// (the nodes not checked yet keep their findings from before the edit). False: check in full.
bool IncrementalChecker::run_pass(const ir::Model& m, size_t budget) {
  State& st = *state_;
  Pass& pass = *st.pass;
  const Positions& pos = pass.pos;
  const ir::Graph& g = m.graph;
  static const CheckOptions kOptions;

  // One checker for them all: its per-node buffers are reused. The result's value types are set as
  // facts change (a full check, if the shortcut ends up refused, builds them again).
  Diagnostics found;
  Checker checker(m, kOptions, found);
  std::vector<ValueId> moved, outer_ids;
  size_t k = pass.next, checked = 0;
  for (; pass.pending > 0 && checked < budget; ++k) {
    if (!pass.marked[k]) continue;
    pass.marked[k] = 0;
    --pass.pending;
    ++checked;
    const ir::Node& n = g.nodes[k];
    const ir::NodeId id = n.id;
    auto rec = st.nodes.find(id);
    const bool recorded = rec != st.nodes.end();  // false for a changed node: its record was taken out
    int64_t before = recorded ? rec->second.symbols_before
                     : k == 0 ? st.loop_symbols
                              : st.nodes.at(g.nodes[k - 1].id).symbols_after;
    NodeRecord& r = recorded ? rec->second : st.nodes[id];
    // The numbers of what it reads and makes: the record's while they name the same values (an
    // unchanged consumer, most of a long chain's pass), else given now. What its subgraphs read must
    // outlive `scope`, whose keys view these names.
    std::vector<std::string> outer = holds_subgraph(n) ? subgraph_reads(n) : std::vector<std::string>{};
    const bool same_reads = recorded && r.inputs == n.inputs && r.outer == outer;
    if (!same_reads) {
      if (recorded) st.remove_reads(id, r);
      r.inputs = n.inputs;
      r.outer = std::move(outer);
      st.values.intern_all(r.inputs, r.input_ids);
      st.values.intern_all(r.outer, r.outer_ids);
      st.add_reads(id, r);
    }
    if (!recorded || r.outputs != n.outputs) {
      r.outputs = n.outputs;
      st.values.intern_all(r.outputs, r.output_ids);
    }
    Scope scope;
    auto bring = [&](const std::string& name, ValueId in) {
      if (in == kNoValue || !st.values[in].known || scope.defined_here(name)) return;
      const Facts& f = st.values[in].facts;
      ValueFacts& v = scope.define(name);
      v.type = f.type;
      v.producer = f.producer;
      if (f.constant) v.constant = &*f.constant;
      if (f.shape_value) v.shape_value = &*f.shape_value;
    };
    for (size_t i = 0; i < r.inputs.size(); ++i) bring(r.inputs[i], r.input_ids[i]);
    for (size_t i = 0; i < r.outer.size(); ++i) bring(r.outer[i], r.outer_ids[i]);
    found.items.clear();
    const bool declares = std::any_of(r.output_ids.begin(), r.output_ids.end(),
                                      [&](ValueId o) { return o != kNoValue && st.values[o].declared; });
    int64_t after =
        checker.check_main_node(g, n, scope, before, declares ? &st.declared : &no_declarations());
    int64_t drawn_before = r.symbols_after - r.symbols_before;
    if (!recorded) {
      auto was = pass.drawn.find(id);
      drawn_before = was != pass.drawn.end() ? was->second : 0;
    }
    if (after - before != drawn_before) return false;  // would renumber later fresh symbols
    ++last_checked_;
    moved.clear();
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      const ValueId o = r.output_ids[i];
      const ValueFacts* f = o == kNoValue ? nullptr : scope.find_here(r.outputs[i]);
      if (!f) continue;
      Value& v = st.values[o];
      if (v.known && same_facts(v.facts, *f)) continue;
      assign_facts(v.facts, *f);
      v.known = true;
      set_value_type(v.name, v.facts.type);
      moved.push_back(o);
    }
    if (r.name != n.name) r.name = n.name;
    r.diagnostics.swap(found.items);
    const bool flag = !r.diagnostics.empty();
    if (flag != r.flagged) {
      if (flag) {
        st.flagged.insert(id);
      } else {
        st.flagged.erase(id);
      }
      r.flagged = flag;
    }
    r.symbols_before = before;
    r.symbols_after = after;
    for (ValueId v : moved) {
      if (!st.consumers_of(v, k + 1, k)) return false;
    }
  }
  pass.next = k;
  complete_ = pass.pending == 0;

  // The list in a full check's order: what comes before the nodes, each node's findings, the outputs.
  // Only the nodes with findings, in graph order (not a lookup per node of the graph).
  Diagnostics out;
  out.items = st.prefix;
  std::vector<std::pair<size_t, ir::NodeId>> flagged;
  flagged.reserve(st.flagged.size());
  for (ir::NodeId id : st.flagged) {
    size_t k = pos.find(id);
    if (k == Positions::kNone) return false;  // a record left for a node no longer there
    flagged.emplace_back(k, id);
  }
  std::sort(flagged.begin(), flagged.end());
  for (const auto& [k, id] : flagged) {
    for (Diagnostic d : st.nodes.at(id).diagnostics) {
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
    const Value* v = st.values.known(vi.name);
    if (!v) {
      report(
          Severity::kError, static_cast<int>(i),
          fmt::format("graph output '{}' is not produced by any node, graph input or initializer", vi.name));
      continue;
    }
    std::string conflict;
    merge_types(v->facts.type, vi.type, &conflict);
    if (!conflict.empty() && !v->produced) {
      report(Severity::kError, static_cast<int>(i),
             fmt::format("graph output '{}' is {}", vi.name, conflict));
    }
  }
  for (const ir::ValueInfo& vi : g.value_info) {
    if (!st.values.known(vi.name)) {
      report(Severity::kWarning, -1,
             fmt::format("value_info describes '{}', which no node, input or initializer produces", vi.name));
    }
  }
  if (out.items.size() >= kOptions.max_diagnostics) return false;  // a full check would cut the list
  result_.diagnostics = std::move(out);
  for (ValueId id : pass.dirty) {
    const Value& v = st.values[id];
    set_value_type(v.name, v.known ? v.facts.type : ir::Type{});
  }
  if (complete_) {
    for (ValueId id : pass.dirty) st.values[id].dirty = false;
    st.pass.reset();
  }
  return true;
}

}  // namespace tessera::check
