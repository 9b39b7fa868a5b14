// The per-node part of the checker: operator resolution, arity, attributes, type constraints, shape
// inference and the definition of the node's outputs.
#include <fmt/format.h>

#include "check/check_util.h"
#include "check/graph_checker.h"
#include "check/node_context.h"

namespace tessera::check {

using ir::Type;

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
