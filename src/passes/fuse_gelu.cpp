// fuse_gelu (extended): the erf form of GELU as exporters decompose it,
//   x * 0.5 * (1 + erf(x / sqrt(2)))   (x / sqrt(2) also as x * 0.7071; the 0.5 on either side)
// becomes one Gelu node: ai.onnx Gelu when the model imports opset 20 or later, else ONNX Runtime's
// com.microsoft Gelu. The match starts at the Erf, the one op that only occurs once in the pattern.
#include <cmath>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

struct Match {
  std::string x;
  std::vector<ir::NodeId> nodes;
  size_t last = 0;  // the node whose output is the GELU
};

// x / sqrt(2) or x * (1 / sqrt(2)): returns x.
std::optional<std::string> scaled_input(const ir::Graph& g, const ir::Node& n) {
  if (is_op(n, "Div") && n.inputs.size() == 2 && is_constant_near(g, n.inputs[1], kSqrt2)) return n.inputs[0];
  if (!is_op(n, "Mul") || n.inputs.size() != 2) return std::nullopt;
  for (size_t k = 0; k < 2; ++k)
    if (is_constant_near(g, n.inputs[1 - k], 1 / kSqrt2)) return n.inputs[k];
  return std::nullopt;
}

// The node reading `value` when it is the only reader and is a two-input `op` whose other input is
// `other` (a value name) or, with `other` empty, a constant near `constant`.
std::optional<size_t> next(const ir::Graph& g, const std::string& value, std::string_view op,
                           const std::string& other, double constant = 0) {
  auto c = sole_consumer(g, value);
  if (!c) return std::nullopt;
  auto o = other_input(g.nodes[*c], op, value);
  if (!o) return std::nullopt;
  bool ok = other.empty() ? is_constant_near(g, *o, constant) : *o == other;
  return ok ? c : std::nullopt;
}

// (1 + erf) * x, then * 0.5; or (1 + erf) * 0.5, then * x; or (1 + erf) * (x * 0.5).
std::optional<size_t> finish(const ir::Graph& g, const std::string& x, size_t add,
                             std::vector<ir::NodeId>& nodes) {
  const std::string& sum = g.nodes[add].outputs[0];
  if (auto m1 = next(g, sum, "Mul", x)) {
    auto m2 = next(g, g.nodes[*m1].outputs[0], "Mul", "", 0.5);
    if (!m2) return std::nullopt;
    nodes.insert(nodes.end(), {g.nodes[*m1].id, g.nodes[*m2].id});
    return m2;
  }
  if (auto m1 = next(g, sum, "Mul", "", 0.5)) {
    auto m2 = next(g, g.nodes[*m1].outputs[0], "Mul", x);
    if (!m2) return std::nullopt;
    nodes.insert(nodes.end(), {g.nodes[*m1].id, g.nodes[*m2].id});
    return m2;
  }
  auto m1 = sole_consumer(g, sum);
  if (!m1) return std::nullopt;
  auto half = other_input(g.nodes[*m1], "Mul", sum);
  auto h = half ? producer(g, *half) : std::nullopt;
  if (!h || sole_consumer(g, *half) != m1) return std::nullopt;
  auto c = other_input(g.nodes[*h], "Mul", x);
  if (!c || !is_constant_near(g, *c, 0.5)) return std::nullopt;
  nodes.insert(nodes.end(), {g.nodes[*h].id, g.nodes[*m1].id});
  return m1;
}

std::optional<Match> match(const ir::Graph& g, size_t erf_index) {
  const ir::Node& erf = g.nodes[erf_index];
  if (!is_op(erf, "Erf") || erf.inputs.size() != 1 || erf.outputs.size() != 1) return std::nullopt;
  auto d = producer(g, erf.inputs[0]);
  if (!d || sole_consumer(g, erf.inputs[0]) != erf_index) return std::nullopt;
  auto x = scaled_input(g, g.nodes[*d]);
  if (!x) return std::nullopt;
  auto add = next(g, erf.outputs[0], "Add", "", 1.0);
  if (!add) return std::nullopt;
  Match m{*x, {g.nodes[*d].id, erf.id, g.nodes[*add].id}, 0};
  auto last = finish(g, *x, *add, m.nodes);
  if (!last) return std::nullopt;
  m.last = *last;
  return m;
}

bool fuse_gelu(RuleContext& ctx, size_t i) {
  auto m = match(ctx.graph, i);
  if (!m || !is_compute_float(elem_type(ctx, m->x))) return false;
  ir::Node gelu;
  gelu.op_type = "Gelu";
  gelu.name = ctx.graph.nodes[m->last].name;
  gelu.inputs = {m->x};
  gelu.outputs = ctx.graph.nodes[m->last].outputs;
  bool standard = onnx_opset(ctx.model) >= 20 && kernel_available(ctx, gelu);
  if (!standard) {
    gelu.domain = "com.microsoft";
    if (!kernel_available(ctx, gelu)) return false;
    ensure_opset_import(ctx.model, "com.microsoft", 1);
  }
  replace_with(ctx.graph, m->last, std::move(gelu), m->nodes);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_gelu) {
  reg.add({"fuse_gelu", tessera::passes::OptLevel::kExtended, 10, tessera::passes::fuse_gelu});
}
