#include "transforms/amp_estimate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_set>
#include <vector>

#include "check/checker.h"
#include "passes/inline_functions.h"
#include "transforms/observed_run.h"
#include "transforms/standalone.h"

namespace tessera::transforms {

namespace {

bool is_float(ir::DataType t) {
  return t == ir::DataType::kFloat || t == ir::DataType::kFloat16 || t == ir::DataType::kBFloat16;
}

// Every float value the main graph's nodes make, fetched as well as the outputs.
std::unordered_map<std::string, rt::Value> run_fetching_all(const ir::Model& m, const rt::SessionOptions& o,
                                                            const Feeds& feeds) {
  ir::Model probe = m;
  auto types = check::check_model(probe).value_types;
  std::unordered_set<std::string> fetched;
  for (const auto& out : probe.graph.outputs) fetched.insert(out.name);
  for (const auto& n : m.graph.nodes) {
    for (const auto& v : n.outputs) {
      auto t = types.find(v);
      if (v.empty() || t == types.end() || !t->second.is_tensor() || !is_float(t->second.elem)) continue;
      if (fetched.insert(v).second) probe.graph.outputs.push_back({v, t->second, "", {}});
    }
  }
  rt::Session s(std::move(probe), o);
  std::vector<rt::Value> got = observed_run(s, feeds);
  std::unordered_map<std::string, rt::Value> by_name;
  for (size_t i = 0; i < got.size() && i < s.outputs().size(); ++i)
    by_name.emplace(s.outputs()[i].name, got[i]);
  return by_name;
}

// The name under which a body value is fetched from its control-flow node in the main graph.
std::string probe_name(const std::string& v) {
  return "amp_probe:" + v;
}

// What a body hands out is measured through a copy: the control-flow node's own output is another value
// (an If's is the branch that ran, a Loop's the last iteration's state).
std::string copy_name(const std::string& v) {
  return "amp_probe_out:" + v;
}

void copy_outputs(ir::Graph& body) {
  std::unordered_set<std::string> made;
  for (const auto& n : body.nodes)
    for (const auto& o : n.outputs) made.insert(o);
  for (const auto& o : body.outputs) {
    if (!made.count(o.name)) continue;  // an input or outer value handed on: measured where it is made
    ir::Node copy;
    copy.op_type = "Identity";
    copy.name = copy_name(o.name);
    copy.inputs = {o.name};
    copy.outputs = {copy_name(o.name)};
    body.add_node(std::move(copy));
  }
}

// The float values a body's own nodes make that it does not already hand out, with their types.
std::vector<std::pair<std::string, ir::Type>> body_floats(const ir::Model& m, const ir::Graph& body,
                                                          const TypeLookup& outer) {
  auto types = graph_value_types(m, body, outer);
  std::unordered_set<std::string> outs;
  for (const auto& o : body.outputs) outs.insert(o.name);
  std::vector<std::pair<std::string, ir::Type>> got;
  for (const auto& n : body.nodes) {
    for (const auto& v : n.outputs) {
      auto t = types.find(v);
      if (v.empty() || outs.count(v) || t == types.end() || !t->second.is_tensor() ||
          !is_float(t->second.elem))
        continue;
      got.emplace_back(v, ir::Type::tensor(t->second.elem));  // the shape may change between iterations
    }
  }
  return got;
}

// Adds `values` as outputs of `body` (after its own).
void hand_out(ir::Graph& body, const std::vector<std::pair<std::string, ir::Type>>& values) {
  for (const auto& [v, t] : values) body.outputs.push_back({v, t, "", {}});
}

// An empty tensor of t's element type as `name`: what an If branch hands out for the other branch's value.
void add_empty(ir::Graph& branch, const std::string& name, const ir::Type& t) {
  ir::Tensor empty;
  empty.dtype = t.elem;
  empty.dims = {0};
  ir::Node k;
  k.op_type = "Constant";
  k.name = name;
  k.outputs = {name};
  k.attributes = {ir::Attribute::of_tensor("value", std::move(empty))};
  branch.add_node(std::move(k));
  branch.outputs.push_back({name, t, "", {}});
}

ir::Graph* body_of(ir::Node& n, const char* attr) {
  ir::Attribute* a = n.attr(attr);
  return a && a->graphs.size() == 1 ? &*a->graphs[0] : nullptr;
}

// Makes g's Loop, Scan and If nodes hand their bodies' float values out under probe_name(): a Loop or Scan
// stacks them over the iterations (scan outputs), an If hands out both branches' values, the branch that
// did not run an empty tensor for each. Bodies' own control-flow nodes first, so their values travel up
// level by level (named probe_name(probe_name(v)) one level further up). `outer`: g's enclosing types.
void hand_out_bodies(const ir::Model& m, ir::Graph& g, const TypeLookup& outer) {
  for (auto& n : g.nodes) {
    if (!n.domain.empty()) continue;
    for (auto& a : n.attributes) {
      for (auto& sub : a.graphs) {
        auto types =
            std::make_shared<std::unordered_map<std::string, ir::Type>>(graph_value_types(m, *sub, outer));
        TypeLookup inner = [types, &outer](const std::string& v) -> std::optional<ir::Type> {
          auto it = types->find(v);
          if (it != types->end()) return it->second;
          return outer(v);
        };
        hand_out_bodies(m, *sub, inner);
      }
    }
    if (n.op_type == "Loop" || n.op_type == "Scan") {
      ir::Graph* body = body_of(n, "body");
      if (!body) continue;
      copy_outputs(*body);
      auto values = body_floats(m, *body, outer);
      hand_out(*body, values);
      for (const auto& [v, t] : values) n.outputs.push_back(probe_name(v));
      for (const char* list : {"scan_output_axes", "scan_output_directions"})
        if (ir::Attribute* a = n.attr(list)) a->ints.resize(a->ints.size() + values.size(), 0);
    } else if (n.op_type == "If") {
      ir::Graph* then_g = body_of(n, "then_branch");
      ir::Graph* else_g = body_of(n, "else_branch");
      if (!then_g || !else_g) continue;
      copy_outputs(*then_g);
      copy_outputs(*else_g);
      auto from_then = body_floats(m, *then_g, outer), from_else = body_floats(m, *else_g, outer);
      hand_out(*then_g, from_then);
      for (const auto& [v, t] : from_then) add_empty(*else_g, "amp_probe_empty:" + v, t);
      for (const auto& [v, t] : from_else) add_empty(*then_g, "amp_probe_empty:" + v, t);
      hand_out(*else_g, from_else);
      for (const auto& [v, t] : from_then) n.outputs.push_back(probe_name(v));
      for (const auto& [v, t] : from_else) n.outputs.push_back(probe_name(v));
    }
  }
}

// The model with the float values of its Loop, Scan and If bodies, at any depth, handed out to the main
// graph.
ir::Model with_body_values(const ir::Model& m, const std::unordered_map<std::string, ir::Type>& main_types) {
  TypeLookup outer = [&](const std::string& v) -> std::optional<ir::Type> {
    auto it = main_types.find(v);
    if (it == main_types.end()) return std::nullopt;
    return it->second;
  };
  ir::Model probe = m;
  hand_out_bodies(m, probe.graph, outer);
  return probe;
}

// Root mean square of (b - a) over that of a; a non-finite b where a is finite counts as a huge error.
double relative_error(const rt::Tensor& a, const rt::Tensor& b) {
  if (a.numel() != b.numel() || a.numel() == 0) return 0;
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.to_double(i), y = b.to_double(i);
    if (!std::isfinite(x)) continue;
    if (!std::isfinite(y)) return 1e30;
    num += (y - x) * (y - x);
    den += x * x;
  }
  if (num == 0) return 0;
  return std::sqrt(num / std::max(den, std::numeric_limits<double>::min()));
}

// The model's main-graph value types (inputs and initializers too), for typing its bodies' outer values.
std::unordered_map<std::string, ir::Type> main_types(const ir::Model& m) {
  auto types = check::check_model(m).value_types;
  for (const auto& vi : m.graph.inputs) types.emplace(vi.name, vi.type);
  for (const auto& t : m.graph.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
  return types;
}

// Every fetched value, the bodies' too where the model runs with them handed out (a Loop whose body value
// changes shape between iterations cannot stack it: then the main graph's only).
std::unordered_map<std::string, rt::Value> run_with_bodies(const ir::Model& m, const rt::SessionOptions& o,
                                                           const Feeds& feeds, bool& bodies) {
  if (bodies) {
    try {
      return run_fetching_all(with_body_values(m, main_types(m)), o, feeds);
    } catch (const std::exception&) {
      bodies = false;
    }
  }
  return run_fetching_all(m, o, feeds);
}

// The growth of the nodes of g's Loop, Scan and If bodies, at any depth. A body's formal inputs carry
// what feeds them: a loop-carried state the larger error of its initial value and of what the body hands
// on; a Scan's slices their whole input's; the iteration count and condition none.
void body_growth(const ir::Graph& g, const std::function<double(const std::string&)>& rel, ErrorGrowth& e) {
  for (const auto& n : g.nodes) {
    if (!n.domain.empty()) continue;
    for (const auto& a : n.attributes) {
      for (const auto& sub : a.graphs) {
        const ir::Graph& body = *sub;
        std::unordered_map<std::string, double> formal;
        bool loop = n.op_type == "Loop", scan = n.op_type == "Scan";
        size_t first_state = loop ? 2 : 0;  // Loop: iteration count and condition first
        size_t states = 0;                  // then the states; a Scan's slices after them
        if (loop && body.inputs.size() >= 2) states = body.inputs.size() - 2;
        if (scan) {
          const ir::Attribute* k = n.attr("num_scan_inputs");
          auto scans = static_cast<size_t>(k ? std::max<int64_t>(k->i, 0) : 0);
          states = body.inputs.size() >= scans ? body.inputs.size() - scans : 0;
        }
        for (size_t j = 0; (loop || scan) && first_state + j < body.inputs.size(); ++j) {
          size_t outer = loop ? 2 + j : j;  // the node input feeding it
          double r = outer < n.inputs.size() ? rel(n.inputs[outer]) : 0;
          size_t back = loop ? 1 + j : j;  // the body output handed on to the next iteration
          if (j < states && back < body.outputs.size()) r = std::max(r, rel(body.outputs[back].name));
          formal[body.inputs[first_state + j].name] = r;
        }
        auto rel_in = [&](const std::string& v) {
          auto f = formal.find(v);
          return f == formal.end() ? rel(v) : f->second;
        };
        for (const auto& b : body.nodes) {
          if (b.name.empty()) continue;
          double in = 0, out = 0;
          for (const auto& v : b.inputs) in = std::max(in, rel_in(v));
          for (const auto& v : b.outputs) out = std::max(out, rel(v));
          e.by_node.emplace(b.name, std::max(0.0, out - in));
        }
        body_growth(body, rel, e);
      }
    }
  }
}

// The name a node inlined from a local function had in its body: the engine's inliner names it
// "CALL__FUNCTION_SERIAL/NAME" (passes/inline_functions.cpp); the innermost function's for nested calls.
std::optional<std::string> body_node_name(const std::string& inlined, const std::vector<std::string>& fns) {
  std::optional<std::string> found;
  size_t best = 0;
  for (const auto& f : fns) {
    std::string mark = "__" + f + "_";
    for (size_t at = inlined.find(mark); at != std::string::npos; at = inlined.find(mark, at + 1)) {
      size_t k = at + mark.size();
      size_t digits = k;
      while (digits < inlined.size() && std::isdigit(static_cast<unsigned char>(inlined[digits]))) ++digits;
      if (digits == k || digits >= inlined.size() || inlined[digits] != '/' || digits + 1 < best) continue;
      best = digits + 1;
      found = inlined.substr(best);
    }
  }
  return found;
}

}  // namespace

ErrorGrowth estimate_error_growth(const ir::Model& original, const ir::Model& low,
                                  const rt::SessionOptions& options, const Feeds& feeds) {
  // Local functions inlined first (the session would inline them anyway), so their bodies' values can be
  // fetched: both models' calls are in the same order, so the inlined names match.
  ir::Model ref_model = original, low_model = low;
  passes::inline_functions(ref_model);
  passes::inline_functions(low_model);
  std::vector<std::string> functions;
  for (const auto& f : original.functions) functions.push_back(f.name);
  bool bodies = true;
  auto ref = run_with_bodies(ref_model, options, feeds, bodies);
  auto got = run_with_bodies(low_model, options, feeds, bodies);
  ErrorGrowth e;
  e.bodies_measured = bodies;
  const std::string prefix = probe_name("");
  for (const auto& [name, a] : ref) {
    auto b = got.find(name);
    if (b == got.end() || !a.is_tensor() || !b->second.is_tensor()) continue;
    std::string value = name;
    while (value.rfind(prefix, 0) == 0) value = value.substr(prefix.size());  // one prefix per level
    if (value.rfind(copy_name(""), 0) == 0) value = value.substr(copy_name("").size());
    e.relative.emplace(value, relative_error(a.tensor(), b->second.tensor()));
  }
  auto rel = [&](const std::string& v) {
    auto it = e.relative.find(v);
    return it == e.relative.end() ? 0.0 : it->second;  // graph inputs, initializers: exact
  };
  std::unordered_set<std::string> main_names;
  for (const auto& n : original.graph.nodes) main_names.insert(n.name);
  for (const auto& n : ref_model.graph.nodes) {
    if (n.name.empty()) continue;
    double in = 0, out = 0;
    for (const auto& v : n.inputs) in = std::max(in, rel(v));
    for (const auto& v : n.outputs) out = std::max(out, rel(v));
    double growth = std::max(0.0, out - in);
    auto body_name = main_names.count(n.name) ? std::nullopt : body_node_name(n.name, functions);
    if (!body_name) {
      e.by_node.emplace(n.name, growth);
      continue;
    }
    double& g = e.by_node[*body_name];  // a function's node: the most it adds in any call
    g = std::max(g, growth);
  }
  if (bodies) body_growth(ref_model.graph, rel, e);
  return e;
}

}  // namespace tessera::transforms
