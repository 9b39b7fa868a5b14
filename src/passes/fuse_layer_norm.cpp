// fuse_layer_norm (extended): layer normalisation over the last axis as exporters decompose it,
//   d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) * gamma + beta
// (d^2 as Pow(d, 2) or Mul(d, d); beta optional) becomes one LayerNormalization: ai.onnx from opset 17,
// else ONNX Runtime's com.microsoft one. The match starts at the Sub, whose output has exactly the two
// readers the pattern needs (the square and the division).
#include <algorithm>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

struct Match {
  std::string x, gamma, beta;
  float epsilon = 0;
  std::vector<ir::NodeId> nodes;
  size_t last = 0;
};

// ReduceMean over the last axis only, keeping it.
bool is_last_axis_mean(const RuleContext& ctx, const ir::Node& n, std::optional<int64_t> rank) {
  if (!is_op(n, "ReduceMean") || attr_int(n, "keepdims", 1) != 1) return false;
  auto axes = onnx_opset(ctx.model) < 18
                  ? attr_ints(n, "axes")
                  : (n.inputs.size() > 1 ? constant_ints(ctx.graph, n.inputs[1]) : std::nullopt);
  if (!axes || axes->size() != 1) return false;
  return (*axes)[0] == -1 || (rank && (*axes)[0] == *rank - 1);
}

// The sole reader of `value` when it is an ai.onnx `op`.
std::optional<size_t> reader(const ir::Graph& g, const std::string& value, std::string_view op) {
  auto c = sole_consumer(g, value);
  return c && is_op(g.nodes[*c], op) ? c : std::nullopt;
}

// The square of d: Pow(d, 2) or Mul(d, d).
bool is_square(const ir::Graph& g, const ir::Node& n, const std::string& d) {
  if (is_op(n, "Mul")) return n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d;
  return is_op(n, "Pow") && n.inputs.size() == 2 && n.inputs[0] == d && is_constant_near(g, n.inputs[1], 2.0);
}

// From the variance on: + eps, Sqrt, d / that, * gamma, + beta (optional).
bool match_tail(const RuleContext& ctx, size_t var, const std::string& d, size_t div, Match& m) {
  const ir::Graph& g = ctx.graph;
  auto add_eps = reader(g, g.nodes[var].outputs[0], "Add");
  if (!add_eps) return false;
  auto eps_value = other_input(g.nodes[*add_eps], "Add", g.nodes[var].outputs[0]);
  auto eps = eps_value ? constant_scalar(g, *eps_value) : std::nullopt;
  auto sqrt = reader(g, g.nodes[*add_eps].outputs[0], "Sqrt");
  if (!eps || !sqrt || g.nodes[div].inputs[1] != g.nodes[*sqrt].outputs[0] || g.nodes[div].inputs[0] != d)
    return false;
  auto mul = reader(g, g.nodes[div].outputs[0], "Mul");
  if (!mul) return false;
  auto gamma = other_input(g.nodes[*mul], "Mul", g.nodes[div].outputs[0]);
  if (!gamma || !constant_value(g, *gamma)) return false;
  m.epsilon = static_cast<float>(*eps);
  m.gamma = *gamma;
  m.nodes.insert(m.nodes.end(), {g.nodes[var].id, g.nodes[*add_eps].id, g.nodes[*sqrt].id, g.nodes[div].id,
                                 g.nodes[*mul].id});
  m.last = *mul;
  auto add_beta = reader(g, g.nodes[*mul].outputs[0], "Add");
  auto beta = add_beta ? other_input(g.nodes[*add_beta], "Add", g.nodes[*mul].outputs[0]) : std::nullopt;
  if (beta && constant_value(g, *beta)) {
    m.beta = *beta;
    m.nodes.push_back(g.nodes[*add_beta].id);
    m.last = *add_beta;
  }
  return true;
}

// Each 1-D parameter must have the last dimension's length, so that it cannot enlarge the result.
bool params_fit(const RuleContext& ctx, const Match& m, int64_t hidden) {
  for (const std::string* p : {&m.gamma, &m.beta}) {
    if (p->empty()) continue;
    const ir::Tensor* t = constant_value(ctx.graph, *p);
    if (!t || t->dims != std::vector<int64_t>{hidden} || t->dtype != elem_type(ctx, m.x)) return false;
  }
  return true;
}

std::optional<Match> match(const RuleContext& ctx, size_t i) {
  const ir::Graph& g = ctx.graph;
  const ir::Node& sub = g.nodes[i];
  if (!is_op(sub, "Sub") || sub.inputs.size() != 2) return std::nullopt;
  auto xt = value_type(ctx, sub.inputs[0]);
  if (!xt || !xt->is_tensor() || !xt->shape || xt->shape->empty() || !xt->shape->back().is_static())
    return std::nullopt;
  auto rank = static_cast<int64_t>(xt->shape->size());
  auto r1 = producer(g, sub.inputs[1]);
  if (!r1 || sole_consumer(g, sub.inputs[1]) != i || !is_last_axis_mean(ctx, g.nodes[*r1], rank))
    return std::nullopt;
  if (g.nodes[*r1].inputs[0] != sub.inputs[0]) return std::nullopt;
  // d is read by the square and by the division, and by nothing else.
  const std::string& d = sub.outputs[0];
  std::vector<size_t> readers;
  for (const Use& u : uses(g, d)) {
    if (u.input == Use::kInSubgraph) return std::nullopt;
    if (std::find(readers.begin(), readers.end(), u.node) == readers.end()) readers.push_back(u.node);
  }
  if (readers.size() != 2 || is_graph_output(g, d)) return std::nullopt;
  size_t sq = readers[0], div = readers[1];
  if (!is_square(g, g.nodes[sq], d)) std::swap(sq, div);
  if (!is_square(g, g.nodes[sq], d) || !is_op(g.nodes[div], "Div")) return std::nullopt;
  auto var = reader(g, g.nodes[sq].outputs[0], "ReduceMean");
  if (!var || !is_last_axis_mean(ctx, g.nodes[*var], rank)) return std::nullopt;
  Match m{sub.inputs[0], {}, {}, 0, {g.nodes[*r1].id, sub.id, g.nodes[sq].id}, 0};
  if (!match_tail(ctx, *var, d, div, m) || !params_fit(ctx, m, xt->shape->back().value)) return std::nullopt;
  return m;
}

bool fuse_layer_norm(RuleContext& ctx, size_t i) {
  auto m = match(ctx, i);
  if (!m || !is_compute_float(elem_type(ctx, m->x))) return false;
  ir::Node ln;
  ln.op_type = "LayerNormalization";
  ln.name = ctx.graph.nodes[m->last].name;
  ln.inputs = {m->x, m->gamma};
  if (!m->beta.empty()) ln.inputs.push_back(m->beta);
  ln.outputs = ctx.graph.nodes[m->last].outputs;
  ln.attributes = {ir::Attribute::of_int("axis", -1), ir::Attribute::of_float("epsilon", m->epsilon)};
  bool standard = onnx_opset(ctx.model) >= 17 && kernel_available(ctx, ln);
  if (!standard) {
    ln.domain = "com.microsoft";
    if (!kernel_available(ctx, ln)) return false;
    ensure_opset_import(ctx.model, "com.microsoft", 1);
  }
  replace_with(ctx.graph, m->last, std::move(ln), m->nodes);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_layer_norm) {
  reg.add({"fuse_layer_norm", tessera::passes::OptLevel::kExtended, 20, tessera::passes::fuse_layer_norm});
}
