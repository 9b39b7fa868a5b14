// FlexAttention (ai.onnx.preview 1): 4-D scaled dot-product attention whose scores and probabilities
// may be rewritten by user subgraphs (score_mod after Q K^T, prob_mod after the softmax).
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kQ, kK, kV };

// A modifier subgraph maps the (batch, q_heads, q_seq, kv_seq) tensor to one of the same type; its
// inner diagnostics are reported by inferring it with that input.
void check_modifier(InferenceContext& ctx, const char* attr, const ir::Type& scores) {
  const ir::Attribute* a = ctx.node().attr(attr);
  if (!a || a->type != ir::AttrType::kGraph || a->graphs.empty()) return;
  const ir::Graph& g = *a->graphs[0];
  if (g.inputs.size() != 1 || g.outputs.size() != 1) {
    ctx.fail(
        fmt::format("subgraph '{}' must take one input (the scores) and give one output, it has {} and {}",
                    attr, g.inputs.size(), g.outputs.size()));
  }
  std::vector<ir::Type> out = ctx.infer_subgraph(g, {scores});
  if (out.empty() || !out[0].is_tensor() || scores.elem == ir::DataType::kUndefined) return;
  if (out[0].elem != ir::DataType::kUndefined && out[0].elem != scores.elem) {
    ctx.fail(fmt::format("subgraph '{}' turns {} scores into {}; it must keep their type", attr,
                         ir::dtype_name(scores.elem), ir::dtype_name(out[0].elem)));
  }
}

void infer_flex_attention(InferenceContext& ctx) {
  for (size_t i : {kQ, kK, kV}) require_rank(ctx, i, 4, attn::input_label(ctx, i));
  const Shape* q = input_shape(ctx, kQ);
  const Shape* k = input_shape(ctx, kK);
  const Shape* v = input_shape(ctx, kV);
  ir::DataType t = input_elem(ctx, kQ);
  Shape scores{Dim::unknown(), Dim::unknown(), Dim::unknown(), Dim::unknown()};
  Shape y = scores;
  if (q) {
    scores[0] = y[0] = (*q)[0];
    scores[1] = y[1] = (*q)[1];
    scores[2] = y[2] = (*q)[2];
  }
  if (q && k) {
    scores[0] = y[0] = attn::same_dim(ctx, kQ, *q, 0, kK, *k, 0, "batch size");
    attn::same_dim(ctx, kQ, *q, 3, kK, *k, 3, "head size of Q and K");
    if ((*q)[1].is_static() && (*k)[1].is_static()) {
      attn::check_head_groups(ctx, (*q)[1].value, (*k)[1].value, "query heads", "key/value heads");
    }
  }
  if (k && v) {
    attn::same_dim(ctx, kK, *k, 1, kV, *v, 1, "number of key/value heads");
    attn::same_dim(ctx, kK, *k, 2, kV, *v, 2, "key/value sequence length");
  }
  if (k) scores[3] = (*k)[2];
  if (v) y[3] = (*v)[3];
  set_output(ctx, 0, t, q || v ? std::optional<Shape>(y) : std::nullopt);
  ir::Type st = ir::Type::tensor(t, scores);
  check_modifier(ctx, "score_mod", st);
  check_modifier(ctx, "prob_mod", st);
}

}  // namespace

TESSERA_REGISTER_OPS(training_flex_attention) {
  reg.add(
      OpSchema("FlexAttention", 1, "ai.onnx.preview")
          .category(Category::kAttention)
          .doc("Scaled dot-product attention on 4-D Q, K, V with optional subgraphs that modify the scores "
               "before the softmax (score_mod) and the probabilities after it (prob_mod); K/V heads may be "
               "shared by groups of query heads.")
          .input("Q", "T")
          .input("K", "T")
          .input("V", "T")
          .output("Y", "T")
          .types("T", types::tensors({"bfloat16", "float16", "float", "double"}))
          .attr_optional("prob_mod", ir::AttrType::kGraph)
          .attr_optional("scale", ir::AttrType::kFloat)
          .attr_optional("score_mod", ir::AttrType::kGraph)
          .infer(infer_flex_attention));
}
