// fuse_matmul_scale_transpose (extended): MatMul (or an earlier FusedMatMul) absorbs what exporters put
// around attention products into ONNX Runtime's com.microsoft FusedMatMul:
//   - a Transpose swapping the last two axes of an input   -> transA / transB,
//   - a scalar constant multiplying an input               -> alpha,
//   - a scalar constant multiplying or dividing the result -> alpha.
// Both inputs must have rank 2 or more, so that a scalar [1] constant cannot change the result's rank.
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

struct State {
  std::string a, b;
  float alpha = 1;
  int64_t trans_a = 0, trans_b = 0;
  std::vector<ir::NodeId> gone;  // absorbed nodes
  size_t at = 0;                 // where the fused node goes
  std::vector<std::string> outputs;
};

bool swaps_last_two(const std::vector<int64_t>& perm) {
  size_t r = perm.size();
  if (r < 2) return false;
  for (size_t k = 0; k + 2 < r; ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
}

// Absorbs a Transpose or a scalar Mul producing `operand`, read only by the matmul at `mm`.
bool absorb_input(const ir::Graph& g, size_t mm, std::string& operand, int64_t& trans, State& s) {
  auto p = producer(g, operand);
  if (!p || sole_consumer(g, operand) != mm) return false;
  const ir::Node& n = g.nodes[*p];
  if (is_op(n, "Transpose") && n.inputs.size() == 1) {
    auto perm = attr_ints(n, "perm");
    if (!perm || !swaps_last_two(*perm)) return false;
    operand = n.inputs[0];
    trans ^= 1;
    s.gone.push_back(n.id);
    return true;
  }
  if (!is_op(n, "Mul") || n.inputs.size() != 2) return false;
  for (size_t k = 0; k < 2; ++k) {
    auto c = constant_scalar(g, n.inputs[1 - k]);
    if (!c || constant_value(g, n.inputs[k])) continue;
    operand = n.inputs[k];
    s.alpha *= static_cast<float>(*c);
    s.gone.push_back(n.id);
    return true;
  }
  return false;
}

// Absorbs Mul(result, c) or Div(result, c) of a scalar constant c.
bool absorb_output(const ir::Graph& g, size_t mm, State& s) {
  auto c = sole_consumer(g, g.nodes[mm].outputs[0]);
  if (!c) return false;
  const ir::Node& n = g.nodes[*c];
  bool div = is_op(n, "Div");
  if ((!div && !is_op(n, "Mul")) || n.inputs.size() != 2) return false;
  const std::string& result = g.nodes[mm].outputs[0];
  auto other = other_input(n, n.op_type, result);
  if (!other || (div && n.inputs[0] != result)) return false;
  auto v = constant_scalar(g, *other);
  if (!v || (div && *v == 0)) return false;
  s.alpha = div ? s.alpha / static_cast<float>(*v) : s.alpha * static_cast<float>(*v);
  s.gone.push_back(n.id);
  s.at = *c;
  s.outputs = n.outputs;
  return true;
}

bool rank_at_least_2(const RuleContext& ctx, const std::string& v) {
  auto t = value_type(ctx, v);
  return t && t->is_tensor() && t->shape && t->shape->size() >= 2 && is_compute_float(t->elem);
}

// The matmul at `i` as a State: a MatMul, or a FusedMatMul without batch transposes.
std::optional<State> start(const ir::Node& n, size_t i) {
  bool fused = n.op_type == "FusedMatMul" && n.domain == "com.microsoft";
  if ((!is_op(n, "MatMul") && !fused) || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  if (attr_int(n, "transBatchA", 0) != 0 || attr_int(n, "transBatchB", 0) != 0) return std::nullopt;
  State s{n.inputs[0],
          n.inputs[1],
          attr_float(n, "alpha", 1.0f),
          attr_int(n, "transA", 0),
          attr_int(n, "transB", 0),
          {n.id},
          i,
          n.outputs};
  return s;
}

bool fuse_matmul_scale_transpose(RuleContext& ctx, size_t i) {
  auto s = start(ctx.graph.nodes[i], i);
  if (!s || !rank_at_least_2(ctx, s->a) || !rank_at_least_2(ctx, s->b)) return false;
  bool changed = absorb_input(ctx.graph, i, s->a, s->trans_a, *s);
  changed |= absorb_input(ctx.graph, i, s->b, s->trans_b, *s);
  changed |= absorb_output(ctx.graph, i, *s);
  if (!changed) return false;

  ir::Node fused;
  fused.op_type = "FusedMatMul";
  fused.domain = "com.microsoft";
  fused.name = ctx.graph.nodes[i].name;
  fused.inputs = {s->a, s->b};
  fused.outputs = s->outputs;
  fused.attributes = {ir::Attribute::of_float("alpha", s->alpha), ir::Attribute::of_int("transA", s->trans_a),
                      ir::Attribute::of_int("transB", s->trans_b)};
  if (!kernel_available(ctx, fused)) return false;
  ensure_opset_import(ctx.model, "com.microsoft", 1);
  replace_with(ctx.graph, s->at, std::move(fused), s->gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_matmul_scale_transpose) {
  reg.add({"fuse_matmul_scale_transpose", tessera::passes::OptLevel::kExtended, 40,
           tessera::passes::fuse_matmul_scale_transpose});
}
