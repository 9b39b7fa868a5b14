#include "ir/commands/name_index.h"

#include <unordered_set>

#include "ir/commands/add_node_index.h"

namespace tessera::ir {

namespace {
thread_local const NameIndex* active_index = nullptr;
}  // namespace

NameIndex::Active::Active(NameIndex& index, const Model& m) : saved_(active_index) {
  if (index.model_ != &m || index.stale_ || index.node_count_ != m.graph.nodes.size()) index.rebuild(m);
  active_index = &index;
}
NameIndex::Active::~Active() {
  active_index = saved_;
}

NameIndex::Suspended::Suspended() : saved_(active_index) {
  active_index = nullptr;
}
NameIndex::Suspended::~Suspended() {
  active_index = saved_;
}

const NameIndex* NameIndex::active_for(const Graph& g) {
  const NameIndex* x = active_index;
  if (!x || !x->model_ || &x->model_->graph != &g || x->stale_) return nullptr;
  return x->node_count_ == g.nodes.size() ? x : nullptr;  // a change it was not told of
}

bool NameIndex::has_node_name(std::string_view name) const {
  auto it = node_names_.find(std::string(name));
  return it != node_names_.end() && it->second > 0;
}

bool NameIndex::has_value(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it != values_.end() && it->second > 0;
}

void NameIndex::count(std::unordered_map<std::string, int>& map, const std::string& key, int by) {
  if (key.empty()) return;
  auto it = map.try_emplace(key, 0).first;
  it->second += by;
  if (it->second <= 0) map.erase(it);
}

void NameIndex::add_node(const Node& n) {
  Entry e;
  e.name = n.name;
  for (const std::string& o : n.outputs) {
    if (!o.empty()) e.values.push_back(o);
  }
  for (const Attribute& a : n.attributes) {
    for (const auto& sub : a.graphs) {
      std::unordered_set<std::string> defined;
      collect_defined_values(*sub, defined);
      e.values.insert(e.values.end(), defined.begin(), defined.end());
    }
  }
  count(node_names_, e.name, 1);
  for (const std::string& v : e.values) count(values_, v, 1);
  nodes_[n.id] = std::move(e);
}

void NameIndex::remove_node(NodeId id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  count(node_names_, it->second.name, -1);
  for (const std::string& v : it->second.values) count(values_, v, -1);
  nodes_.erase(it);
}

void NameIndex::add_graph_values(const Graph& g) {
  for (const std::string& v : graph_values_) count(values_, v, -1);
  graph_values_.clear();
  for (const ValueInfo& v : g.inputs) graph_values_.push_back(v.name);
  for (const Tensor& t : g.initializers) graph_values_.push_back(t.name);
  for (const SparseTensor& t : g.sparse_initializers) graph_values_.push_back(t.values.name);
  for (const std::string& v : graph_values_) count(values_, v, 1);
}

void NameIndex::rebuild(const Model& m) {
  *this = NameIndex{};
  model_ = &m;
  for (const Node& n : m.graph.nodes) add_node(n);
  add_graph_values(m.graph);
  node_count_ = m.graph.nodes.size();
  stale_ = false;
}

void NameIndex::update(const Model& m, const std::vector<Change>& changes) {
  if (model_ != &m || stale_) return;  // rebuilt when next made active
  const Graph& g = m.graph;
  for (const Change& c : changes) {
    if (c.path.function) continue;  // a function body: not the main graph's names
    NodeId id = c.path.steps.empty() ? c.node : c.path.steps.front().node;
    if (!c.path.steps.empty() || c.kind == Change::Kind::kNodeAdded || c.kind == Change::Kind::kNodeChanged ||
        c.kind == Change::Kind::kNodeRemoved) {
      remove_node(id);
      // Added and changed nodes are most often the last: look there before scanning.
      const Node* n = !g.nodes.empty() && g.nodes.back().id == id ? &g.nodes.back() : g.find_node(id);
      if (n) add_node(*n);
      continue;
    }
    if (c.kind == Change::Kind::kGraphIoChanged || c.kind == Change::Kind::kInitializersChanged) {
      add_graph_values(g);
    } else if (c.kind == Change::Kind::kModelChanged) {
      stale_ = true;  // anything may have changed: rebuilt when next made active
      return;
    }
  }
  node_count_ = g.nodes.size();
}

}  // namespace tessera::ir
