#include "check/graph_checker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory_resource>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "check/node_context.h"

namespace tessera::check {

using ir::Type;

namespace {

// Subgraph nesting beyond this is not followed (the loader already refuses deeper files); it only
// guards the checker's own recursion against models built in memory.
constexpr int kMaxDepth = 256;

std::string node_name(const ir::Node& n) {
  return n.name.empty() ? "<unnamed " + n.op_type + ">" : n.name;
}

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

// Materialises the value of a Constant node so later nodes can use it (Reshape targets, Slice starts).
std::optional<ir::Tensor> constant_value(const ir::Node& node) {
  for (const ir::Attribute& a : node.attributes) {
    if (a.is_reference()) continue;
    if (a.name == "value" && a.type == ir::AttrType::kTensor && !a.tensors.empty()) return a.tensors[0];
    if (a.name == "value_int" && a.type == ir::AttrType::kInt)
      return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {}, {a.i});
    if (a.name == "value_ints" && a.type == ir::AttrType::kInts)
      return ir::make_tensor<int64_t>("", ir::DataType::kInt64, {static_cast<int64_t>(a.ints.size())},
                                      a.ints);
    if (a.name == "value_float" && a.type == ir::AttrType::kFloat)
      return ir::make_tensor<float>("", ir::DataType::kFloat, {}, {a.f});
    if (a.name == "value_floats" && a.type == ir::AttrType::kFloats)
      return ir::make_tensor<float>("", ir::DataType::kFloat, {static_cast<int64_t>(a.floats.size())},
                                    a.floats);
  }
  return std::nullopt;
}

bool tensor_data_usable(const ir::Tensor& t) {
  if (t.dtype == ir::DataType::kString)
    return t.numel() && static_cast<size_t>(*t.numel()) == t.strings.size();
  auto need = t.expected_bytes();
  return need && static_cast<int64_t>(t.bytes().size()) == *need;
}

// Domains whose operators Tessera knows completely: an unknown operator there is an error. In other
// domains it is a custom operator, which runtimes may provide; it is only warned about.
bool is_standard_domain(std::string_view d) {
  return d.empty() || d == "ai.onnx.ml" || d == "ai.onnx.preview.training" || d == "ai.onnx.preview";
}

std::optional<int64_t> imported_version(const std::vector<ir::OpsetImport>& opsets, std::string_view domain) {
  for (const auto& o : opsets) {
    if (ir::canonical_domain(o.domain) == ir::canonical_domain(domain)) return o.version;
  }
  return std::nullopt;
}

}  // namespace

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

  // Graph inputs.
  if (input_types && input_types->size() != g.inputs.size() && env.function == nullptr) {
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

  for (size_t k : order) {
    if (full()) break;
    const ir::Node& node = g.nodes[k];
    check_node(node, path, scope, env);
    // Apply declared types of node outputs (value_info, graph outputs).
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const std::string& out = node.outputs[o];
      auto it = declared.find(out);
      ValueFacts* f = out.empty() ? nullptr : scope.find_here(out);
      if (it == declared.end() || !f) continue;
      std::string conflict;
      f->type = merge_types(f->type, it->second->type, &conflict);
      if (!conflict.empty()) {
        report(Severity::kError, path, &node, -1, static_cast<int>(o),
               fmt::format("output {} ('{}') of node '{}' ({}) is {}", o, out, node_name(node), node.op_type,
                           conflict));
      }
    }
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

void Checker::check_node(const ir::Node& node_in, const std::string& path, Scope& scope,
                         const GraphEnv& env) {
  // Inside a function body, attribute references take the caller's values (or the defaults).
  std::optional<ir::Node> resolved;
  bool unresolved_refs = false;
  for (const auto& a : node_in.attributes) {
    if (!a.is_reference()) continue;
    if (!env.function) {
      report(
          Severity::kError, path, &node_in, -1, -1,
          fmt::format("attribute '{}' refers to '{}', but attribute references are only allowed in function "
                      "bodies",
                      a.name, a.ref_attr_name));
      continue;
    }
    if (!resolved) resolved = node_in;
    const ir::Attribute* value = env.caller ? env.caller->attr(a.ref_attr_name) : nullptr;
    if (!value) {
      for (const auto& d : env.function->attribute_defaults) {
        if (d.name == a.ref_attr_name) value = &d;
      }
    }
    ir::Attribute* slot = resolved->attr(a.name);
    if (value) {
      std::string name = slot->name;
      *slot = *value;
      slot->name = std::move(name);
    } else {
      unresolved_refs |= env.caller == nullptr;
      resolved->attributes.erase(resolved->attributes.begin() + (slot - resolved->attributes.data()));
    }
  }
  const ir::Node& node = resolved ? *resolved : node_in;

  // Scope keys view the model's own strings, so outputs are always defined from node_in, never
  // from the resolved copy, which dies with this call.
  auto define_unknown_outputs = [&] {
    for (const auto& out : node_in.outputs) {
      if (!out.empty() && !scope.defined_here(out)) scope.define(out).producer = node.name;
    }
  };

  // Inputs must be defined by now.
  bool inputs_ok = true;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& in = node.inputs[i];
    if (in.empty() || scope.find(in)) continue;
    inputs_ok = false;
    report(Severity::kError, path, &node, static_cast<int>(i), -1,
           fmt::format("input {} of node '{}' ({}) refers to '{}', which no node, graph input or initializer "
                       "produces",
                       i, node_name(node), node.op_type, in));
  }

  std::string_view domain = ir::canonical_domain(node.domain);
  if (const ir::Function* fn = model_.find_function(node.domain, node.op_type, node.overload)) {
    check_function_call(node_in, *fn, path, scope, env);
    return;
  }
  std::optional<int64_t> version = imported_version(*env.opsets, domain);
  if (!version) {
    report(Severity::kError, path, &node, -1, -1,
           fmt::format("node '{}' ({}) uses domain '{}', which the model does not import", node_name(node),
                       node.op_type, domain.empty() ? "ai.onnx" : domain));
    define_unknown_outputs();
    check_unvisited_subgraphs(node, path, scope, env, {});
    return;
  }
  const ops::OpSchema* schema = registry_.find(domain, node.op_type, static_cast<int>(*version));
  if (!schema) {
    auto versions = registry_.versions(domain, node.op_type);
    std::string dom = domain.empty() ? "ai.onnx" : std::string(domain);
    if (!versions.empty()) {
      report(Severity::kError, path, &node, -1, -1,
             fmt::format("operator {} first appears in opset {} of {}, but the model imports opset {}",
                         node.op_type, versions.front()->since_version(), dom, *version));
    } else {
      report(
          is_standard_domain(domain) ? Severity::kError : Severity::kWarning, path, &node, -1, -1,
          fmt::format("unknown operator '{}' in domain '{}'{}", node.op_type, dom,
                      is_standard_domain(domain) ? "" : " (a custom operator; its outputs are not checked)"));
    }
    define_unknown_outputs();
    check_unvisited_subgraphs(node, path, scope, env, {});
    return;
  }
  if (schema->is_deprecated()) {
    report(Severity::kWarning, path, &node, -1, -1,
           fmt::format("operator {} is deprecated in opset {}", node.op_type, *version));
  }

  // Arity.
  bool arity_ok = true;
  const auto& formal_in = schema->inputs();
  for (size_t i = 0; i < formal_in.size(); ++i) {
    const ops::FormalParam& p = formal_in[i];
    if (p.option != ops::FormalParam::Option::kSingle) continue;
    if (i < node.inputs.size() && !node.inputs[i].empty()) continue;
    arity_ok = false;
    report(Severity::kError, path, &node, static_cast<int>(i), -1,
           fmt::format("mandatory input {} ('{}') of node '{}' ({}) is not connected", i, p.name,
                       node_name(node), node.op_type));
  }
  auto count_error = [&](const char* what, size_t have, int min, int max) {
    if (static_cast<int64_t>(have) >= min && static_cast<int64_t>(have) <= max) return;
    arity_ok = false;
    std::string range = max == INT32_MAX ? fmt::format("at least {}", min)
                        : min == max     ? fmt::format("exactly {}", min)
                                         : fmt::format("{} to {}", min, max);
    report(Severity::kError, path, &node, -1, -1,
           fmt::format("node '{}' has {} {}, but {} (opset {}) takes {}", node_name(node), have, what,
                       node.op_type, schema->since_version(), range));
  };
  if (arity_ok || node.inputs.size() > static_cast<size_t>(schema->max_inputs()))
    count_error("inputs", node.inputs.size(), schema->min_inputs(), schema->max_inputs());
  count_error("outputs", node.outputs.size(), schema->min_outputs(), schema->max_outputs());

  size_t errors_before = diags_.count(Severity::kError);
  check_attributes(node, *schema, path, env);

  // Type constraints. Buffers come from this nesting level's scratch, reused node after node.
  if (scratch_depth_ == scratch_.size()) scratch_.emplace_back();
  NodeScratch& scratch = scratch_[scratch_depth_];
  struct DepthGuard {
    size_t& depth;
    ~DepthGuard() { --depth; }
  } guard{++scratch_depth_};
  auto& in_types = scratch.in_types;
  in_types.assign(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueFacts* f = node.inputs[i].empty() ? nullptr : scope.find(node.inputs[i]);
    if (f && !f->type.is_none()) in_types[i] = &f->type;
  }
  std::vector<std::pair<int, std::string>> type_errors;
  TypeBinding& binding = scratch.binding;
  bind_type_params(*schema, in_types, type_errors, binding);
  for (auto& [idx, msg] : type_errors) report(Severity::kError, path, &node, idx, -1, std::move(msg));

  NodeContext ctx(*this, node, *schema, static_cast<int>(*version), scope, path, env, scratch);
  bool clean = arity_ok && inputs_ok && !unresolved_refs && diags_.count(Severity::kError) == errors_before;
  if (clean && schema->infer_fn()) {
    try {
      schema->infer_fn()(ctx);
    } catch (const ops::InferenceError& e) {
      report(Severity::kError, path, &node, e.input_index, e.output_index, e.what());
    } catch (const std::exception& e) {
      report(Severity::kError, path, &node, -1, -1, fmt::format("shape inference failed: {}", e.what()));
    }
  }

  // Outputs: what inference found, else what the type constraints imply.
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const std::string& out = node.outputs[o];
    if (out.empty()) continue;
    Type t;
    const ops::FormalParam* p = schema->output_param(o);
    if (ctx.outputs()[o]) {
      t = std::move(*ctx.outputs()[o]);
      if (p && !type_allowed(*schema, p->type, t)) {
        report(Severity::kError, path, &node, -1, static_cast<int>(o),
               fmt::format("output {} ('{}') would be {}, which {} does not allow for '{}'", o, out,
                           t.type_string(), node.op_type, p->name));
      }
    } else if (p) {
      if (const Type* b = binding.find(p->type)) {
        t = *b;
      } else if (auto lit = ir::parse_type_string(p->type)) {
        t = *lit;
      }
    }
    define_output(node_in, o, std::move(t), ctx.shape_values()[o] ? &*ctx.shape_values()[o] : nullptr, path,
                  scope, *current_graph_);
  }
  check_unvisited_subgraphs(node, path, scope, env, ctx.visited_subgraphs());
}

void Checker::define_output(const ir::Node& node, size_t i, Type inferred,
                            const std::vector<ir::Dim>* shape_value, const std::string& path, Scope& scope,
                            const ir::Graph& g) {
  const std::string& out = node.outputs[i];
  if (scope.defined_here(out)) return;  // reported as a duplicate producer already
  ValueFacts& f = scope.define(out);
  f.type = std::move(inferred);
  f.producer = node.name;
  if (shape_value) f.shape_value = scope.keep(*shape_value);
  if (i == 0 && node.op_type == "Constant" && ir::canonical_domain(node.domain).empty()) {
    if (auto c = constant_value(node); c && tensor_data_usable(*c)) f.constant = scope.keep(std::move(*c));
  }
}

void Checker::check_attributes(const ir::Node& node, const ops::OpSchema& schema, const std::string& path,
                               const GraphEnv& env) {
  for (size_t k = 0; k < node.attributes.size(); ++k) {
    const ir::Attribute& a = node.attributes[k];
    // Nodes have few attributes: a quadratic scan beats building a set per node.
    bool repeated = false;
    for (size_t j = 0; j < k; ++j) repeated |= node.attributes[j].name == a.name;
    if (repeated) {
      report(Severity::kError, path, &node, -1, -1,
             fmt::format("attribute '{}' of node '{}' is given twice", a.name, node_name(node)));
      continue;
    }
    const ops::AttrSchema* as = schema.find_attr(a.name);
    if (!as) {
      report(Severity::kError, path, &node, -1, -1,
             fmt::format("attribute '{}' of node '{}' is not defined for {} (opset {})", a.name,
                         node_name(node), node.op_type, schema.since_version()));
      continue;
    }
    if (a.type != as->type) {
      report(Severity::kError, path, &node, -1, -1,
             fmt::format("attribute '{}' of node '{}' expects {}, got {}", a.name, node_name(node),
                         ir::attr_type_name(as->type), ir::attr_type_name(a.type)));
    }
  }
  for (const ops::AttrSchema& as : schema.attributes()) {
    if (as.required && !node.attr(as.name)) {
      report(Severity::kError, path, &node, -1, -1,
             fmt::format("required attribute '{}' of node '{}' ({}) is missing", as.name, node_name(node),
                         node.op_type));
    }
  }
}

void Checker::check_unvisited_subgraphs(const ir::Node& node, const std::string& path, Scope& scope,
                                        const GraphEnv& env, const std::vector<const ir::Graph*>& visited) {
  GraphEnv sub = env;
  sub.depth = env.depth + 1;
  for (const ir::Attribute& a : node.attributes) {
    for (const auto& g : a.graphs) {
      if (std::find(visited.begin(), visited.end(), g.get()) != visited.end()) continue;
      check_graph(*g, subgraph_path(path, node, *g), &scope, nullptr, sub);
    }
  }
}

void Checker::check_function_call(const ir::Node& node, const ir::Function& fn, const std::string& path,
                                  Scope& scope, const GraphEnv& env) {
  if (node.inputs.size() > fn.body.inputs.size() || node.outputs.size() > fn.body.outputs.size()) {
    report(
        Severity::kError, path, &node, -1, -1,
        fmt::format("node '{}' calls function {} with {} inputs and {} outputs; it takes at most {} and {}",
                    node_name(node), fn.name, node.inputs.size(), node.outputs.size(), fn.body.inputs.size(),
                    fn.body.outputs.size()));
  }
  std::vector<Type> types;
  for (size_t i = 0; i < fn.body.inputs.size(); ++i) {
    const ValueFacts* f =
        i < node.inputs.size() && !node.inputs[i].empty() ? scope.find(node.inputs[i]) : nullptr;
    types.push_back(f ? f->type : Type{});
  }
  std::vector<Type> outs;
  if (env.depth < kMaxDepth) {
    GraphEnv fenv;
    fenv.opsets = fn.opset_imports.empty() ? &model_.opset_imports : &fn.opset_imports;
    fenv.function = &fn;
    fenv.caller = &node;
    fenv.depth = env.depth + 1;
    // The body was checked on its own already; here it only carries types through, quietly.
    Diagnostics scratch;
    Checker quiet(model_, options_, scratch);
    quiet.symbol_counter_ = symbol_counter_;
    outs = quiet.check_graph(fn.body, path, nullptr, &types, fenv);
    symbol_counter_ = quiet.symbol_counter_;
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    define_output(node, o, o < outs.size() ? outs[o] : Type{}, nullptr, path, scope, *current_graph_);
  }
}

}  // namespace tessera::check
