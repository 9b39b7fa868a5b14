#include "transforms/cast_cleanup.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "check/checker.h"
#include "ir/commands/rename_value.h"
#include "transforms/standalone.h"

namespace tessera::transforms {

namespace {

using ir::DataType;

bool is_float_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kDouble;
}

bool is_onnx(const ir::Node& n, std::string_view op) {
  return ir::canonical_domain(n.domain).empty() && n.op_type == op;
}

// The target of a plain Cast (one input, one output, a literal `to`), or nothing.
std::optional<DataType> cast_target(const ir::Node& n) {
  if (!is_onnx(n, "Cast") || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0].empty())
    return std::nullopt;
  const ir::Attribute* to = n.attr("to");
  if (!to || to->is_reference() || to->type != ir::AttrType::kInt) return std::nullopt;
  return static_cast<DataType>(to->i);
}

std::string label(const ir::Node& n) {
  return n.name.empty() ? fmt::format("#{}", n.id) : n.name;
}

// One graph of the model: its value types and the Casts it holds, for the rules to ask about.
struct Scope {
  ir::Graph* g = nullptr;
  const Scope* parent = nullptr;
  std::string where;
  std::unordered_map<std::string, ir::Type> types;
  std::unordered_set<std::string> defined;
  std::unordered_map<std::string, const ir::Node*> cast_of;  // Cast output -> the Cast

  std::optional<ir::Type> type_of(const std::string& v) const {
    if (defined.count(v) || !parent) {
      auto it = types.find(v);
      return it == types.end() ? std::nullopt : std::optional<ir::Type>(it->second);
    }
    return parent->type_of(v);
  }
  std::optional<DataType> elem(const std::string& v) const {
    auto t = type_of(v);
    if (!t || !t->is_tensor()) return std::nullopt;
    return t->elem;
  }
  const Scope* owner(const std::string& v) const {
    if (defined.count(v)) return this;
    return parent ? parent->owner(v) : nullptr;
  }
};

// What one round decides; applied after every graph has been looked at.
struct BodyOutput {
  ir::Graph* body;
  size_t index;
  std::string value;  // the body output becomes this value (the Cast's input)
  DataType type;
};

struct Actions {
  std::map<ir::Graph*, std::set<ir::NodeId>> remove;
  std::vector<std::tuple<ir::Graph*, std::string, std::string>> alias;  // graph, from, to (in order)
  std::vector<BodyOutput> body_outputs;
  std::vector<std::tuple<ir::Graph*, std::string, DataType>> retype;            // parent value_info
  std::vector<std::tuple<ir::Graph*, size_t, DataType>> body_inputs;            // body, input index, new type
  std::vector<std::tuple<ir::Graph*, ir::NodeId, size_t, std::string>> rewire;  // node input k reads v
  std::set<std::pair<const ir::Graph*, ir::NodeId>> removing, sources;          // Casts removed / relied on
  std::map<ir::Graph*, std::set<ir::NodeId>> maybe_dead;  // Casts that may lose every reader

  bool empty() const { return remove.empty() && body_outputs.empty() && rewire.empty(); }
  // A Cast may go when nothing goes through it this round, and be gone through when it stays.
  bool removable(const ir::Graph* g, ir::NodeId id) const {
    return !removing.count({g, id}) && !sources.count({g, id});
  }
  bool stays(const ir::Graph* g, ir::NodeId id) const { return !removing.count({g, id}); }
};

class Cleanup {
 public:
  Cleanup(ir::Model& m, Report& report) : m_(m), report_(report) {}

  int run() {
    for (int round = 0; round < 8; ++round) {
      scopes_.clear();
      Actions a;
      Scope& main = scopes_.emplace_back();
      main.g = &m_.graph;
      main.where = "main";
      main.types = main_types();
      visit(main, a);
      if (a.empty()) break;
      apply(a);
    }
    return removed_;
  }

 private:
  std::unordered_map<std::string, ir::Type> main_types() const {
    auto types = check::check_model(m_).value_types;
    for (const auto& vi : m_.graph.inputs)
      if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
    for (const auto& t : m_.graph.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
    return types;
  }

  void index(Scope& s) {
    for (const auto& vi : s.g->inputs) s.defined.insert(vi.name);
    for (const auto& t : s.g->initializers) s.defined.insert(t.name);
    for (const auto& t : s.g->sparse_initializers) s.defined.insert(t.values.name);
    for (const auto& n : s.g->nodes) {
      for (const auto& o : n.outputs) s.defined.insert(o);
      if (cast_target(n)) s.cast_of[n.outputs[0]] = &n;
    }
  }

  void visit(Scope& s, Actions& a) {
    index(s);
    for (const auto& n : s.g->nodes) rule_cast(s, n, a);
    for (auto& n : s.g->nodes) rule_boundary(s, n, a);
    for (auto& n : s.g->nodes) rule_carried(s, n, a);
    for (auto& n : s.g->nodes) {
      for (auto& attr : n.attributes) {
        for (size_t k = 0; k < attr.graphs.size(); ++k) {
          Scope& child = scopes_.emplace_back();
          child.g = attr.graphs[k].get();
          child.parent = &s;
          child.where = fmt::format("{}/{}.{}", s.where, label(n), attr.name);
          child.types = graph_value_types(m_, *child.g, [&s](const std::string& v) { return s.type_of(v); });
          visit(child, a);
        }
      }
    }
  }

  // A no-op Cast, or a Cast undoing another Cast (here or in an enclosing graph).
  void rule_cast(const Scope& s, const ir::Node& n, Actions& a) {
    auto to = cast_target(n);
    if (!to || !a.removable(s.g, n.id) || s.g->find_output(n.outputs[0])) return;
    const std::string& in = n.inputs[0];
    auto in_elem = s.elem(in);
    if (in_elem == *to) {
      drop(s, n, in, a, "its input is already " + std::string(ir::dtype_name(*to)));
      return;
    }
    const Scope* home = s.owner(in);
    if (!home) return;
    auto it = home->cast_of.find(in);
    if (it == home->cast_of.end()) return;
    const ir::Node& first = *it->second;
    const std::string& origin = first.inputs[0];
    auto mid = cast_target(first);
    if (!a.stays(home->g, first.id) || home->elem(origin) != *to || !is_float_type(*to) ||
        !is_float_type(*mid))
      return;
    a.sources.insert({home->g, first.id});
    a.maybe_dead[home->g].insert(first.id);
    drop(s, n, origin, a, fmt::format("it undoes Cast '{}' in {}", label(first), home->where));
  }

  void drop(const Scope& s, const ir::Node& n, const std::string& reads, Actions& a, const std::string& why) {
    a.removing.insert({s.g, n.id});
    a.remove[s.g].insert(n.id);
    a.alias.emplace_back(s.g, n.outputs[0], reads);
    report_.details.push_back(fmt::format("{}: Cast '{}' removed: {}", s.where, label(n), why));
    ++removed_;
  }

  // The control-flow output `k` of `n` whose every body makes it with a Cast from one type T and whose
  // readers in `s` are all Casts back to T: the bodies hand on T, the readers go.
  void rule_boundary(const Scope& s, ir::Node& n, Actions& a) {
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      auto first_body = body_output_index(n, k);
      if (!first_body || n.outputs[k].empty()) continue;
      try_boundary(s, n, k, *first_body, a);
    }
  }

  // Where a node's output k comes from in its bodies; nothing for outputs whose type the node's inputs
  // fix (Loop's and Scan's carried values) and for other operators.
  static std::optional<size_t> body_output_index(const ir::Node& n, size_t k) {
    if (is_onnx(n, "If")) return k;
    if (is_onnx(n, "Loop")) {
      size_t carried = n.inputs.size() >= 2 ? n.inputs.size() - 2 : 0;
      return k >= carried ? std::optional<size_t>(k + 1) : std::nullopt;
    }
    if (is_onnx(n, "Scan")) {
      const ir::Attribute* scans = n.attr("num_scan_inputs");
      if (!scans || scans->is_reference()) return std::nullopt;
      size_t states = n.inputs.size() - std::min<size_t>(n.inputs.size(), static_cast<size_t>(scans->i));
      return k >= states ? std::optional<size_t>(k) : std::nullopt;
    }
    return std::nullopt;
  }

  void try_boundary(const Scope& s, ir::Node& n, size_t k, size_t kb, Actions& a) {
    const std::string& y = n.outputs[k];
    if (s.g->find_output(y)) return;
    // Every reader of y in this graph a free Cast to one float type T; no nested graph reading y.
    std::vector<const ir::Node*> readers;
    std::optional<DataType> t;
    for (const auto& r : s.g->nodes) {
      for (const auto& attr : r.attributes)
        for (const auto& sub : attr.graphs)
          if (reads_outer(*sub, y)) return;
      if (std::find(r.inputs.begin(), r.inputs.end(), y) == r.inputs.end()) continue;
      auto to = cast_target(r);
      if (!to || (t && *t != *to) || !a.removable(s.g, r.id)) return;
      t = to;
      readers.push_back(&r);
    }
    if (!t || !is_float_type(*t)) return;
    int graph_outputs = 0;
    for (const auto* r : readers) graph_outputs += s.g->find_output(r->outputs[0]) != nullptr;
    if (graph_outputs > 1) return;
    // Every body: output kb made by a Cast (to y's current type) of a T value the body computes.
    std::vector<std::pair<ir::Graph*, const ir::Node*>> casts;
    for (auto& attr : n.attributes) {
      for (auto& sub : attr.graphs) {
        if (kb >= sub->outputs.size()) return;
        const ir::Node* c = producer_cast(*sub, sub->outputs[kb].name);
        if (!c || !a.removable(sub.get(), c->id)) return;
        const std::string& x = c->inputs[0];
        if (!made_by_node(*sub, x) || sub->find_output(x) || !is_float_type(*cast_target(*c))) return;
        auto x_type = graph_value_type(s, *sub, x);
        if (x_type != *t) return;
        casts.emplace_back(sub.get(), c);
      }
    }
    if (casts.empty()) return;
    for (auto& [body, c] : casts) {
      a.sources.insert({body, c->id});
      a.maybe_dead[body].insert(c->id);
      a.body_outputs.push_back({body, kb, c->inputs[0], *t});
    }
    const ir::Node* to_output = nullptr;
    for (const auto* r : readers) {
      a.removing.insert({s.g, r->id});
      a.remove[s.g].insert(r->id);
      if (s.g->find_output(r->outputs[0])) to_output = r;
      report_.details.push_back(fmt::format("{}: Cast '{}' removed: {} '{}' now hands on {} itself", s.where,
                                            label(*r), n.op_type, label(n), ir::dtype_name(*t)));
      ++removed_;
    }
    // A reader that writes a graph output: y takes the output's name, the other readers read it.
    std::string keep = to_output ? to_output->outputs[0] : y;
    if (to_output) a.alias.emplace_back(s.g, y, keep);
    for (const auto* r : readers)
      if (r != to_output) a.alias.emplace_back(s.g, r->outputs[0], keep);
    a.retype.emplace_back(s.g, keep, *t);
  }

  // A loop-carried value (a state of Loop or Scan) whose initial value is a Cast from T, which the body
  // only casts back to T on entry and makes with a Cast from T on exit, and which the parent only casts
  // back to T after the loop: it is carried in T instead. The loop reads the first Cast's input, the
  // body's Casts go, and the parent's readers read the loop's output. No Cast is added.
  struct Carried {
    size_t in, body_in, body_out, out;  // node input, body input, body output, node output
  };
  static std::vector<Carried> carried_values(const ir::Node& n) {
    std::vector<Carried> v;
    if (is_onnx(n, "Loop")) {
      for (size_t j = 2; j < n.inputs.size(); ++j) v.push_back({j, j, j - 1, j - 2});
    } else if (is_onnx(n, "Scan")) {
      const ir::Attribute* scans = n.attr("num_scan_inputs");
      if (!scans || scans->is_reference() || scans->i < 0) return v;
      size_t states = n.inputs.size() - std::min<size_t>(n.inputs.size(), static_cast<size_t>(scans->i));
      for (size_t j = 0; j < states; ++j) v.push_back({j, j, j, j});
    }
    return v;
  }

  void rule_carried(const Scope& s, ir::Node& n, Actions& a) {
    std::vector<Carried> states = carried_values(n);
    for (auto& attr : n.attributes) {
      if (attr.name != "body" || attr.graphs.size() != 1) continue;
      for (const Carried& c : states) try_carried(s, n, *attr.graphs[0], c, a);
    }
  }

  void try_carried(const Scope& s, ir::Node& n, ir::Graph& body, const Carried& c, Actions& a) {
    if (c.in >= n.inputs.size() || c.body_in >= body.inputs.size() || c.body_out >= body.outputs.size() ||
        c.out >= n.outputs.size() || n.inputs[c.in].empty())
      return;
    // The initial value: a Cast to L (here or in an enclosing graph) of a value of float type T.
    const Scope* home = s.owner(n.inputs[c.in]);
    if (!home) return;
    auto it = home->cast_of.find(n.inputs[c.in]);
    if (it == home->cast_of.end()) return;
    const ir::Node& first = *it->second;
    auto low = cast_target(first);
    auto t = home->elem(first.inputs[0]);
    if (!low || !t || *t == *low || !is_float_type(*t) || !is_float_type(*low) || !a.stays(home->g, first.id))
      return;
    // The body reads the state only through Casts to T (and does not hand it on unchanged).
    const std::string& state = body.inputs[c.body_in].name;
    if (body.find_output(state)) return;
    std::vector<const ir::Node*> entry;
    for (const auto& r : body.nodes) {
      for (const auto& attr : r.attributes)
        for (const auto& sub : attr.graphs)
          if (reads_outer(*sub, state)) return;
      if (std::find(r.inputs.begin(), r.inputs.end(), state) == r.inputs.end()) continue;
      if (cast_target(r) != t || !a.removable(&body, r.id) || body.find_output(r.outputs[0])) return;
      entry.push_back(&r);
    }
    // The body makes the next state with a Cast to L of a T value it computes.
    const ir::Node* exit = producer_cast(body, body.outputs[c.body_out].name);
    if (!exit || cast_target(*exit) != low || !a.removable(&body, exit->id)) return;
    const std::string& next = exit->inputs[0];
    if (!made_by_node(body, next) || body.find_output(next) || graph_value_type(s, body, next) != t) return;
    // The parent reads the final state only through Casts to T (at most one of them a graph output).
    const std::string& y = n.outputs[c.out];
    std::vector<const ir::Node*> readers;
    if (!y.empty()) {
      if (s.g->find_output(y)) return;
      for (const auto& r : s.g->nodes) {
        for (const auto& attr : r.attributes)
          for (const auto& sub : attr.graphs)
            if (reads_outer(*sub, y)) return;
        if (std::find(r.inputs.begin(), r.inputs.end(), y) == r.inputs.end()) continue;
        if (cast_target(r) != t || !a.removable(s.g, r.id)) return;
        readers.push_back(&r);
      }
    }
    int graph_outputs = 0;
    for (const auto* r : readers) graph_outputs += s.g->find_output(r->outputs[0]) != nullptr;
    if (graph_outputs > 1) return;

    std::string why =
        fmt::format("{} '{}' carries state {} in {} itself", n.op_type, label(n), c.out, ir::dtype_name(*t));
    a.sources.insert({home->g, first.id});
    a.maybe_dead[home->g].insert(first.id);
    a.rewire.emplace_back(s.g, n.id, c.in, first.inputs[0]);
    a.body_inputs.emplace_back(&body, c.body_in, *t);
    Scope inner;  // only for drop()'s bookkeeping and message
    inner.g = &body;
    inner.where = fmt::format("{}/{}.body", s.where, label(n));
    for (const auto* r : entry) drop(inner, *r, state, a, why);
    a.sources.insert({&body, exit->id});
    a.maybe_dead[&body].insert(exit->id);
    a.body_outputs.push_back({&body, c.body_out, next, *t});
    const ir::Node* to_output = nullptr;
    for (const auto* r : readers) {
      if (s.g->find_output(r->outputs[0])) to_output = r;
      a.removing.insert({s.g, r->id});
      a.remove[s.g].insert(r->id);
      report_.details.push_back(fmt::format("{}: Cast '{}' removed: {}", s.where, label(*r), why));
      ++removed_;
    }
    std::string keep = to_output ? to_output->outputs[0] : y;
    if (to_output) a.alias.emplace_back(s.g, y, keep);
    for (const auto* r : readers)
      if (r != to_output) a.alias.emplace_back(s.g, r->outputs[0], keep);
    if (!keep.empty()) a.retype.emplace_back(s.g, keep, *t);
  }

  static bool reads_outer(const ir::Graph& g, const std::string& v) {
    auto outer = outer_values(g);
    return std::find(outer.begin(), outer.end(), v) != outer.end();
  }
  static const ir::Node* producer_cast(const ir::Graph& g, const std::string& v) {
    for (const auto& n : g.nodes)
      if (cast_target(n) && n.outputs[0] == v) return &n;
    return nullptr;
  }
  static bool made_by_node(const ir::Graph& g, const std::string& v) {
    for (const auto& n : g.nodes)
      if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return true;
    return false;
  }
  // The element type of `v` in `body` (a graph of a node of `s`), from the scope visit() builds for it.
  std::optional<DataType> graph_value_type(const Scope& s, const ir::Graph& body, const std::string& v) {
    auto types = graph_value_types(m_, body, [&s](const std::string& name) { return s.type_of(name); });
    auto it = types.find(v);
    if (it == types.end() || !it->second.is_tensor()) return std::nullopt;
    return it->second.elem;
  }

  void apply(const Actions& a) {
    for (const auto& b : a.body_outputs) {
      ir::ValueInfo& out = b.body->outputs[b.index];
      out.name = b.value;
      if (out.type.is_tensor()) out.type.elem = b.type;
    }
    for (const auto& [body, index, type] : a.body_inputs) {
      ir::ValueInfo& in = body->inputs[index];
      if (in.type.is_tensor()) in.type.elem = type;
      std::erase_if(body->value_info, [&in](const ir::ValueInfo& vi) { return vi.name == in.name; });
    }
    for (const auto& [graph, id, k, value] : a.rewire) {
      for (auto& n : graph->nodes)
        if (n.id == id) n.inputs[k] = value;
    }
    for (const auto& [graph, ids] : a.remove) {
      const auto& gone = ids;
      std::erase_if(graph->nodes, [&gone](const ir::Node& n) { return gone.count(n.id) != 0; });
    }
    // A Cast removed this round may read one removed before it: follow the renames already made.
    std::unordered_map<std::string, std::string> renamed;
    for (const auto& [graph, from, to] : a.alias) {
      std::string target = to;
      for (auto it = renamed.find(target); it != renamed.end(); it = renamed.find(target))
        target = it->second;
      const std::string& old_name = from;
      std::erase_if(graph->value_info, [&old_name](const ir::ValueInfo& vi) { return vi.name == old_name; });
      ir::rename_value_in_scope(*graph, from, target);
      renamed[from] = target;
    }
    for (const auto& [graph, value, type] : a.retype) {
      for (auto& vi : graph->value_info)
        if (vi.name == value && vi.type.is_tensor()) vi.type.elem = type;
    }
    for (const auto& [graph, ids] : a.maybe_dead) remove_unread(*graph, ids);
  }

  void remove_unread(ir::Graph& g, const std::set<ir::NodeId>& ids) {
    std::unordered_set<std::string> read;
    for (const auto& n : g.nodes) {
      read.insert(n.inputs.begin(), n.inputs.end());
      for (const auto& attr : n.attributes)
        for (const auto& sub : attr.graphs)
          for (auto& v : outer_values(*sub)) read.insert(std::move(v));
    }
    for (const auto& o : g.outputs) read.insert(o.name);
    std::erase_if(g.nodes, [&](const ir::Node& n) {
      if (!ids.count(n.id) || read.count(n.outputs[0])) return false;
      ++removed_;
      std::erase_if(g.value_info, [&](const ir::ValueInfo& vi) { return vi.name == n.outputs[0]; });
      return true;
    });
  }

  ir::Model& m_;
  Report& report_;
  std::deque<Scope> scopes_;
  int removed_ = 0;
};

}  // namespace

int remove_redundant_casts(ir::Model& m, Report& report) {
  int removed = Cleanup(m, report).run();
  if (removed) report.add("redundant Casts removed", removed);
  return removed;
}

}  // namespace tessera::transforms
