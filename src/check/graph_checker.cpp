#include "check/graph_checker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory_resource>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "check/check_util.h"
#include "check/node_context.h"

namespace tessera::check {

using ir::Type;

namespace {

// Names a subgraph reads that it does not define itself: its dependencies on the enclosing graph.
void collect_free_inputs(const ir::Graph& g, std::vector<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& v : g.inputs) defined.insert(v.name);
  for (const auto& t : g.initializers) defined.insert(t.name);
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs) defined.insert(o);
  }
  for (const auto& n : g.nodes) {
    for (const auto& i : n.inputs) {
      if (!i.empty() && !defined.count(i)) out.push_back(i);
    }
    for (const auto& a : n.attributes) {
      for (const auto& sub : a.graphs) collect_free_inputs(*sub, out);
    }
  }
  for (const auto& o : g.outputs) {
    if (!defined.count(o.name)) out.push_back(o.name);
  }
}

// Everything a node reads: its inputs and the outer values its subgraphs read.
std::vector<std::string> node_dependencies(const ir::Node& n) {
  std::vector<std::string> deps;
  for (const auto& i : n.inputs) {
    if (!i.empty()) deps.push_back(i);
  }
  for (const auto& a : n.attributes) {
    for (const auto& sub : a.graphs) collect_free_inputs(*sub, deps);
  }
  return deps;
}

// Order in which to visit the nodes: file order when it is topological, else a topological order
// (ties broken by file position). Nodes on a cycle are left out and returned in `cyclic`.
std::vector<size_t> visit_order(const ir::Graph& g,
                                const std::pmr::unordered_map<std::string_view, size_t>& producer,
                                bool& sorted, std::vector<size_t>& cyclic) {
  size_t n = g.nodes.size();
  auto deps_of = [&](size_t k, auto&& visit) {
    bool has_subgraph = false;
    for (const auto& a : g.nodes[k].attributes) has_subgraph |= !a.graphs.empty();
    auto names = has_subgraph ? node_dependencies(g.nodes[k]) : std::vector<std::string>{};
    for (const auto& name : has_subgraph ? names : g.nodes[k].inputs) {
      if (name.empty()) continue;
      auto it = producer.find(name);
      if (it != producer.end() && it->second != k) visit(it->second);
    }
  };
  // The common case, a file already in order, is confirmed without building the dependency lists.
  sorted = true;
  for (size_t k = 0; k < n && sorted; ++k) deps_of(k, [&](size_t d) { sorted &= d < k; });
  std::vector<size_t> order;
  if (sorted) {
    order.resize(n);
    for (size_t k = 0; k < n; ++k) order[k] = k;
    return order;
  }
  std::vector<std::vector<size_t>> users(n);
  std::vector<size_t> pending(n, 0);
  for (size_t k = 0; k < n; ++k) {
    deps_of(k, [&](size_t d) {
      users[d].push_back(k);
      ++pending[k];
    });
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t k = 0; k < n; ++k) {
    if (pending[k] == 0) ready.push(k);
  }
  while (!ready.empty()) {
    size_t k = ready.top();
    ready.pop();
    order.push_back(k);
    for (size_t u : users[k]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (pending[k] > 0) cyclic.push_back(k);
  }
  return order;
}

}  // namespace

std::vector<std::string> subgraph_reads(const ir::Node& node) {
  std::vector<std::string> out;
  for (const auto& a : node.attributes) {
    for (const auto& sub : a.graphs) collect_free_inputs(*sub, out);
  }
  return out;
}

Checker::Checker(const ir::Model& model, const CheckOptions& options, Diagnostics& diags)
    : model_(model), options_(options), diags_(diags), registry_(ops::OpRegistry::global()) {}

void Checker::report(Severity sev, const std::string& graph, const ir::Node* node, int input, int output,
                     std::string msg) {
  if (full()) return;
  Diagnostic d;
  d.severity = sev;
  d.graph = graph;
  if (node) {
    d.node = node->name;
    d.op_type = node->op_type;
    if (current_graph_) {
      const auto& nodes = current_graph_->nodes;
      if (!nodes.empty() && node >= nodes.data() && node < nodes.data() + nodes.size()) {
        d.node_index = static_cast<int>(node - nodes.data());
      }
    }
  }
  d.input_index = input;
  d.output_index = output;
  d.message = std::move(msg);
  diags_.items.push_back(std::move(d));
}

void Checker::define_graph_values(const ir::Graph& g, const std::string& path, Scope& scope,
                                  const std::vector<Type>* input_types, bool top_level, bool in_function) {
  // Graph inputs.
  if (input_types && input_types->size() != g.inputs.size() && !in_function) {
    report(Severity::kError, path, nullptr, -1, -1,
           fmt::format("the graph declares {} inputs but its operator passes {}", g.inputs.size(),
                       input_types->size()));
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::ValueInfo& vi = g.inputs[i];
    if (scope.defined_here(vi.name)) {
      report(Severity::kError, path, nullptr, static_cast<int>(i), -1,
             fmt::format("graph input '{}' is declared twice", vi.name));
      continue;
    }
    Type t = vi.type;
    if (input_types && i < input_types->size()) {
      std::string conflict;
      t = merge_types((*input_types)[i], vi.type, &conflict);
      if (!conflict.empty()) {
        report(Severity::kError, path, nullptr, static_cast<int>(i), -1,
               fmt::format("graph input {} ('{}') is {}", i, vi.name, conflict));
      }
    }
    if (top_level && vi.type.is_none()) {
      report(Severity::kError, path, nullptr, static_cast<int>(i), -1,
             fmt::format("graph input '{}' has no type; inputs of the main graph must declare one", vi.name));
    }
    scope.define(vi.name).type = std::move(t);
  }

  // Initializers: constants, unless a graph input of the same name lets the caller override them.
  std::unordered_set<std::string_view> init_names;
  auto define_initializer = [&](const ir::Tensor& t, bool sparse) {
    if (!init_names.insert(t.name).second) {
      report(Severity::kError, path, nullptr, -1, -1,
             fmt::format("initializer '{}' is defined twice", t.name));
      return;
    }
    if (t.dtype == ir::DataType::kUndefined) {
      report(Severity::kError, path, nullptr, -1, -1,
             fmt::format("initializer '{}' has no data type", t.name));
    }
    if (!t.numel()) {
      report(
          Severity::kError, path, nullptr, -1, -1,
          fmt::format("initializer '{}' has dimensions {} that are negative or whose product overflows int64",
                      t.name, fmt::join(t.dims, "x")));
    }
    Type t_type = Type::tensor(t.dtype, ir::Shape{});
    for (int64_t d : t.dims) t_type.shape->push_back(ir::Dim::of(d));
    if (ValueFacts* f = scope.find_here(t.name)) {
      std::string conflict;
      f->type = merge_types(f->type, t_type, &conflict);
      if (!conflict.empty()) {
        report(Severity::kError, path, nullptr, -1, -1,
               fmt::format("initializer '{}' does not match the graph input of that name: the input is {}",
                           t.name, conflict));
      }
      return;
    }
    ValueFacts& f = scope.define(t.name);
    f.type = std::move(t_type);
    if (!sparse && tensor_data_usable(t)) f.constant = &t;
  };
  for (const ir::Tensor& t : g.initializers) define_initializer(t, false);
  for (const ir::SparseTensor& s : g.sparse_initializers) {
    ir::Tensor dense_view = s.values;
    dense_view.dims = s.dims;
    dense_view.data = nullptr;
    define_initializer(*scope.keep(dense_view), true);
  }
}

void Checker::check_main_graph_values(const ir::Graph& g, Scope& scope) {
  const ir::Graph* saved = current_graph_;
  current_graph_ = &g;
  define_graph_values(g, "main", scope, nullptr, true, false);
  current_graph_ = saved;
}

std::vector<Type> Checker::check_graph(const ir::Graph& g, const std::string& path, const Scope* outer,
                                       const std::vector<Type>* input_types, const GraphEnv& env,
                                       Scope* keep_scope) {
  std::vector<Type> result(g.outputs.size());
  if (env.depth > kMaxDepth) {
    report(Severity::kError, path, nullptr, -1, -1,
           fmt::format("subgraphs are nested more than {} deep; not checked further", kMaxDepth));
    return result;
  }
  Scope local(outer);
  Scope& scope = keep_scope ? *keep_scope : local;
  const ir::Graph* saved_graph = current_graph_;
  current_graph_ = &g;
  bool top_level = env.depth == 0 && env.function == nullptr;

  define_graph_values(g, path, scope, input_types, top_level, env.function != nullptr);

  // Declared types of values, looked up as each is produced.
  std::unordered_map<std::string_view, const ir::ValueInfo*> declared;
  for (const auto& vi : g.value_info) declared.emplace(vi.name, &vi);
  for (const auto& vi : g.outputs) declared[vi.name] = &vi;

  // Producers, node names, visiting order.
  std::pmr::monotonic_buffer_resource producer_arena;
  std::pmr::unordered_map<std::string_view, size_t> producer(&producer_arena);
  producer.reserve(g.nodes.size() * 2);
  scope.reserve(g.inputs.size() + g.initializers.size() + g.nodes.size() * 2);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const ir::Node& n = g.nodes[k];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const std::string& out = n.outputs[o];
      if (out.empty()) continue;
      auto [it, fresh] = producer.emplace(out, k);
      if (!fresh) {
        report(Severity::kError, path, &n, -1, static_cast<int>(o),
               fmt::format("value '{}' is produced twice, by node '{}' and node '{}'", out,
                           node_name(g.nodes[it->second]), node_name(n)));
      }
      if (scope.defined_here(out)) {
        report(Severity::kError, path, &n, -1, static_cast<int>(o),
               fmt::format("output {} ('{}') of node '{}' has the name of a graph input or initializer", o,
                           out, node_name(n)));
      }
    }
  }
  // Duplicate node names: sort (hash, index) pairs, compare names only where hashes collide. Cheaper
  // than a hash set or sorting the strings, which matters on graphs of tens of thousands of nodes.
  std::vector<std::pair<size_t, size_t>> hashed;
  hashed.reserve(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (!g.nodes[k].name.empty()) hashed.emplace_back(std::hash<std::string_view>{}(g.nodes[k].name), k);
  }
  std::sort(hashed.begin(), hashed.end());
  for (size_t k = 1; k < hashed.size(); ++k) {
    for (size_t j = k; j-- > 0 && hashed[j].first == hashed[k].first;) {
      const std::string& name = g.nodes[hashed[k].second].name;
      if (g.nodes[hashed[j].second].name != name) continue;
      report(Severity::kError, path, &g.nodes[std::max(hashed[j].second, hashed[k].second)], -1, -1,
             fmt::format("duplicate node name '{}': node names must be unique within a graph", name));
      break;
    }
  }
  bool sorted = true;
  std::vector<size_t> cyclic;
  std::vector<size_t> order = visit_order(g, producer, sorted, cyclic);
  if (!cyclic.empty()) {
    std::vector<std::string> names;
    for (size_t k : cyclic)
      names.push_back(fmt::format("'{}' ({})", node_name(g.nodes[k]), g.nodes[k].op_type));
    report(Severity::kError, path, &g.nodes[cyclic[0]], -1, -1,
           fmt::format("the graph has a cycle through nodes {}", fmt::join(names, ", ")));
  } else if (!sorted) {
    report(Severity::kError, path, nullptr, -1, -1,
           "nodes are not in topological order (a node uses a value produced by a later node); checked in "
           "dependency order instead");
  }

  bool observed = observer_ && top_level && keep_scope;
  if (observed) observer_->before_nodes(diags_.items.size(), symbol_counter_);
  auto declared_type = [&](const std::string& out) -> const ir::Type* {
    auto it = declared.find(out);
    return it == declared.end() ? nullptr : &it->second->type;
  };
  for (size_t k : order) {
    if (full()) break;
    const ir::Node& node = g.nodes[k];
    size_t diag_start = diags_.items.size();
    int64_t symbols_before = symbol_counter_;
    check_node(node, path, scope, env);
    apply_declared(node, path, scope, declared_type);
    if (observed) observer_->after_node(node, k, diag_start, symbols_before, symbol_counter_);
  }
  for (size_t k : cyclic) {
    for (const auto& out : g.nodes[k].outputs) {
      if (!out.empty() && !scope.defined_here(out)) scope.define(out);
    }
  }

  // Graph outputs.
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const ir::ValueInfo& vi = g.outputs[i];
    const ValueFacts* f = scope.find(vi.name);
    if (!f) {
      report(
          Severity::kError, path, nullptr, -1, static_cast<int>(i),
          fmt::format("graph output '{}' is not produced by any node, graph input or initializer", vi.name));
      continue;
    }
    std::string conflict;
    result[i] = merge_types(f->type, vi.type, &conflict);
    if (!conflict.empty() && !producer.count(vi.name)) {
      report(Severity::kError, path, nullptr, -1, static_cast<int>(i),
             fmt::format("graph output '{}' is {}", vi.name, conflict));
    }
  }
  for (const auto& vi : g.value_info) {
    if (!scope.find(vi.name)) {
      report(Severity::kWarning, path, nullptr, -1, -1,
             fmt::format("value_info describes '{}', which no node, input or initializer produces", vi.name));
    }
  }
  if (options_.check_identifiers) {
    for (const auto& n : g.nodes) {
      if (!is_c_identifier(n.name)) {
        report(Severity::kInfo, path, &n, -1, -1,
               fmt::format("node name '{}' is not a valid C identifier (code exporters will rename it)",
                           n.name));
      }
      for (const auto& o : n.outputs) {
        if (!o.empty() && !is_c_identifier(o)) {
          report(
              Severity::kInfo, path, &n, -1, -1,
              fmt::format("value name '{}' is not a valid C identifier (code exporters will rename it)", o));
        }
      }
    }
  }
  current_graph_ = saved_graph;
  return result;
}

template <class Lookup>
void Checker::apply_declared(const ir::Node& node, const std::string& path, Scope& scope,
                             Lookup&& declared_type) {
  // Apply declared types of node outputs (value_info, graph outputs).
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const std::string& out = node.outputs[o];
    const ir::Type* declared = out.empty() ? nullptr : declared_type(out);
    ValueFacts* f = out.empty() ? nullptr : scope.find_here(out);
    if (!declared || !f) continue;
    std::string conflict;
    f->type = merge_types(f->type, *declared, &conflict);
    if (!conflict.empty()) {
      report(Severity::kError, path, &node, -1, static_cast<int>(o),
             fmt::format("output {} ('{}') of node '{}' ({}) is {}", o, out, node_name(node), node.op_type,
                         conflict));
    }
  }
}

int64_t Checker::check_main_node(const ir::Graph& g, const ir::Node& node, Scope& scope, int64_t symbols,
                                 const std::unordered_map<std::string, ir::Type>* declared) {
  const ir::Graph* saved = current_graph_;
  current_graph_ = &g;
  symbol_counter_ = symbols;
  GraphEnv env;
  env.opsets = &model_.opset_imports;
  check_node(node, "main", scope, env);
  // Graph outputs' declared types win over value_info's, as in check_graph.
  apply_declared(node, "main", scope, [&](const std::string& out) -> const ir::Type* {
    if (declared) {
      auto it = declared->find(out);
      return it == declared->end() ? nullptr : &it->second;
    }
    if (const ir::ValueInfo* v = g.find_output(out)) return &v->type;
    if (const ir::ValueInfo* v = g.find_value_info(out)) return &v->type;
    return nullptr;
  });
  current_graph_ = saved;
  return symbol_counter_;
}

}  // namespace tessera::check
