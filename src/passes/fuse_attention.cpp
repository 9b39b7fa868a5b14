// fuse_attention (layout, CUDA): the attention subgraph PyTorch's exporters write, after the extended
// level has folded what it could into FusedMatMul,
//
//   Q' = Transpose*(Q)   K' = Transpose*(K)   V' = Transpose*(V)        (head splits: [B,S,H,D] -> ...)
//   s  = MatMul(Q', K'^T) | FusedMatMul(Q', K', alpha, transB)          (Mul/Div by scalars: the scale)
//   s  = Where(keep, s, fill)?  s = Add(s, bias)?                        (Casts anywhere on the way)
//   Y' = MatMul(Softmax(s, last axis), V')   Y = Transpose*(Y')
//
// becomes one com.tessera FusedAttention reading Q, K and V where the Transposes found them (their
// permutations go into q_axes / k_axes / v_axes / y_axes), so the flash kernel runs in place of the two
// products, the Softmax, the mask and every Transpose. Transposes that something else also reads stay.
// A constant bias that is exactly a causal mask (0 on and below the diagonal, <= -1e4 above) becomes
// causal = 1, which lets the kernel skip the masked half.
//
// torch.nn.MultiheadAttention's export (ViT) multiplies 3-D [B*H, S, D] tensors made by Reshape(X [S, B,
// H*D]) -> [S, B*H, D] and a Transpose: the node then reads X through a new Reshape to [S, B, H, D] (a
// view), and its 4-D output goes back to the 3-D shape through another. The shape computations of the
// Reshapes it replaces go too.
#include "passes/fuse_attention_match.h"

namespace tessera::passes {
namespace {

std::string int_constant(ir::Graph& g, std::vector<int64_t> v, std::string_view base) {
  const int64_t n = static_cast<int64_t>(v.size());
  return add_initializer(g, ir::make_tensor("", ir::DataType::kInt64, {n}, v), base);
}

ir::Node reshape(ir::Graph& g, const std::string& x, std::vector<int64_t> shape, std::string y,
                 std::string name) {
  ir::Node r;
  r.op_type = "Reshape";
  r.name = std::move(name);
  r.inputs = {x, int_constant(g, std::move(shape), "attention_shape")};
  r.outputs = {std::move(y)};
  return r;
}

// Removes the nodes that produced `values` (and so on upstream) once nothing reads their outputs: the
// shape computations of Reshapes the fusion removed.
void remove_dead_producers(ir::Graph& g, std::vector<std::string> values) {
  while (!values.empty()) {
    const std::string v = std::move(values.back());
    values.pop_back();
    if (v.empty() || is_used(g, v)) continue;
    auto p = producer(g, v);
    if (!p || has_subgraph(g.nodes[*p])) continue;
    const ir::Node& n = g.nodes[*p];
    bool dead = true;
    for (const auto& o : n.outputs) dead = dead && !is_used(g, o);
    if (!dead) continue;
    values.insert(values.end(), n.inputs.begin(), n.inputs.end());
    remove_nodes(g, {n.id});
  }
}

bool fuse_attention(RuleContext& ctx, size_t i) {
  auto m = attn::match_attention(ctx, i);
  if (!m) return false;
  ir::Graph& g = ctx.graph;
  // Checked on a node of the final types first: nothing changes when no kernel takes it.
  const std::string y4 = m->y_shape.empty() ? m->y : fresh_name(g, m->y + "_heads");
  if (!kernel_available(ctx, attn::fused_node(*m, {m->q.value, m->k.value, m->v.value}, y4))) return false;

  std::vector<std::string> upstream;
  for (ir::NodeId id : m->gone)
    if (const ir::Node* n = g.find_node(id))
      upstream.insert(upstream.end(), n->inputs.begin(), n->inputs.end());
  size_t at = m->last;
  std::vector<std::string> inputs;
  for (attn::Operand* op : {&m->q, &m->k, &m->v}) {
    if (!op->heads) {
      inputs.push_back(op->value);
      continue;
    }
    const std::string split = fresh_name(g, op->value + "_heads");
    g.add_node(reshape(g, op->value, {0, 0, op->heads, op->size}, split, fresh_name(g, "split_heads")), at++);
    inputs.push_back(split);
  }
  ensure_opset_import(ctx.model, "com.tessera", 1);
  replace_with(g, at, attn::fused_node(*m, std::move(inputs), y4), m->gone);
  if (!m->y_shape.empty()) {
    const size_t fused = *producer(g, y4);
    g.add_node(reshape(g, y4, m->y_shape, m->y, fresh_name(g, "merge_heads")), fused + 1);
  }
  remove_dead_producers(g, std::move(upstream));
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_attention) {
  reg.add(
      {"fuse_attention", tessera::passes::OptLevel::kLayout, 20, tessera::passes::fuse_attention, {"cuda"}});
}
