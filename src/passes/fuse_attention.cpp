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
// torch.nn.MultiheadAttention's export (ViT) multiplies 3-D [B*H, S, D] tensors: the node then takes 3-D
// operands (batch 1, B*H heads), read in place the same way. ViT's dynamo export multiplies 4-D ones
// made of the packed in-projection [S, B, 3E] through Reshape/Unsqueeze/Transpose/Squeeze/Gather and
// Reshape/Transpose: the node reads Q, K and V from a Reshape of that projection to [S, B, 3, H, D]
// (fuse_attention_view.h), and the whole chain goes.
#include <algorithm>

#include "passes/fuse_attention_match.h"

namespace tessera::passes {
namespace {

// The fused kernel's fast path computes in float16/bfloat16; a float32 graph that the session keeps in
// float32 (precision fp32 or tf32) would take its row kernel, slower than cuBLAS's products: left alone.
bool narrow_at_run_time(const RuleContext& ctx, ir::DataType t) {
  return t == ir::DataType::kFloat16 || t == ir::DataType::kBFloat16 ||
         ctx.target.precision == Precision::kFp16 || ctx.target.precision == Precision::kBf16;
}

// The Reshapes (free views) of the operands read from the top of a view chain, one per (tensor, shape):
// Q, K and V of one packed projection share theirs. Returns the values the fused node reads.
std::vector<std::string> add_operand_views(RuleContext& ctx, attn::Match& m) {
  std::vector<std::string> inputs;
  std::vector<std::pair<std::pair<std::string, std::vector<int64_t>>, std::string>> made;
  for (const attn::Operand* op : {&m.q, &m.k, &m.v}) {
    if (op->shape.empty()) {
      inputs.push_back(op->value);
      continue;
    }
    const auto key = std::pair{op->value, op->shape};
    auto it = std::find_if(made.begin(), made.end(), [&](const auto& e) { return e.first == key; });
    if (it != made.end()) {
      inputs.push_back(it->second);
      continue;
    }
    ir::Node r;
    r.op_type = "Reshape";
    r.name = fresh_name(ctx.graph, m.name + "_view");
    const auto dims = static_cast<int64_t>(op->shape.size());
    r.inputs = {op->value,
                add_initializer(ctx.graph, ir::make_tensor("", ir::DataType::kInt64, {dims}, op->shape),
                                m.name + "_view_shape")};
    r.outputs = {fresh_name(ctx.graph, m.name + "_view_out")};
    inputs.push_back(r.outputs[0]);
    made.push_back({key, r.outputs[0]});
    ctx.graph.add_node(std::move(r), m.last++);  // before the fused node, after what it reads
  }
  return inputs;
}

bool fuse_attention(RuleContext& ctx, size_t i) {
  auto m = attn::match_attention(ctx, i);
  if (!m || !narrow_at_run_time(ctx, elem_type(ctx, m->v.value))) return false;
  ir::Node probe = attn::fused_node(*m, {m->q.value, m->k.value, m->v.value}, m->y);
  if (!kernel_available(ctx, probe)) return false;
  ir::Node fused = attn::fused_node(*m, add_operand_views(ctx, *m), m->y);
  ensure_opset_import(ctx.model, "com.tessera", 1);
  replace_with(ctx.graph, m->last, std::move(fused), m->gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_attention) {
  reg.add(
      {"fuse_attention", tessera::passes::OptLevel::kLayout, 20, tessera::passes::fuse_attention, {"cuda"}});
}
