// LinearAttention (ai.onnx 27): recurrent linear attention over packed (batch, seq, heads*size) inputs,
// carrying a (batch, kv_heads, d_k, d_v) state between calls; decode (seq 1) and prefill alike.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

enum In { kQuery, kKey, kValue, kPastState, kDecay, kBeta };
enum Out { kOutput, kPresentState };

// Which gate inputs each recurrence reads: decay for the gated rules, beta for the delta rules.
void check_update_rule(const InferenceContext& ctx) {
  std::string rule = ctx.attr_string("update_rule", "gated_delta");
  bool gated = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  if (!gated && !delta && rule != "linear") {
    ctx.fail(fmt::format("update_rule '{}' is not one of linear, gated, delta, gated_delta", rule));
  }
  if (gated && !ctx.has_input(kDecay)) ctx.fail(fmt::format("update_rule '{}' needs the decay input", rule));
  if (delta && !ctx.has_input(kBeta)) ctx.fail(fmt::format("update_rule '{}' needs the beta input", rule));
}

// decay is (B, T, kv_heads*d_k) or per head (B, T, kv_heads); beta is (B, T, kv_heads) or (B, T, 1).
void check_gate(const InferenceContext& ctx, size_t i, const Dim& batch, const Dim& seq,
                std::initializer_list<Dim> allowed_last) {
  const Shape* g = input_shape(ctx, i);
  if (!g || !ctx.has_input(i)) return;
  require_rank(ctx, i, 3, attn::input_label(ctx, i));
  unify_dims(ctx, (*g)[0], batch, fmt::format("batch size of {}", attn::input_label(ctx, i)));
  unify_dims(ctx, (*g)[1], seq, fmt::format("sequence length of {}", attn::input_label(ctx, i)));
  const Dim& last = (*g)[2];
  if (!last.is_static()) return;
  std::string want;
  for (const Dim& d : allowed_last) {
    if (!d.is_static() || d.value == last.value) return;
    want += want.empty() ? fmt::format("{}", d.value) : fmt::format(" or {}", d.value);
  }
  ctx.fail_input(i, fmt::format("{} {} has last dimension {}, expected {}", attn::input_label(ctx, i),
                                ir::shape_to_string(*g), last.value, want));
}

void infer_linear_attention(InferenceContext& ctx) {
  check_update_rule(ctx);
  int64_t qn = attn::required_positive_attr(ctx, "q_num_heads");
  int64_t kvn = attn::required_positive_attr(ctx, "kv_num_heads");
  attn::check_head_groups(ctx, qn, kvn, "q_num_heads", "kv_num_heads");
  ir::DataType t = input_elem(ctx, kQuery);
  ir::DataType st = ctx.has_input(kPastState) && input_elem(ctx, kPastState) != ir::DataType::kUndefined
                        ? input_elem(ctx, kPastState)
                        : t;
  const Shape* q = input_shape(ctx, kQuery);
  const Shape* k = input_shape(ctx, kKey);
  const Shape* v = input_shape(ctx, kValue);
  for (size_t i : {kQuery, kKey, kValue}) require_rank(ctx, i, 3, attn::input_label(ctx, i));
  Dim batch, seq, dk, dv;
  if (q) {
    batch = (*q)[0];
    seq = (*q)[1];
    dk = attn::split_dim(ctx, kQuery, (*q)[2], qn, "hidden size", "q_num_heads");
  }
  if (k) {
    if (!q) batch = (*k)[0], seq = (*k)[1];
    if (q) batch = attn::same_dim(ctx, kQuery, *q, 0, kKey, *k, 0, "batch size");
    if (q) seq = attn::same_dim(ctx, kQuery, *q, 1, kKey, *k, 1, "sequence length");
    Dim kd = attn::split_dim(ctx, kKey, (*k)[2], kvn, "hidden size", "kv_num_heads");
    dk = unify_dims(ctx, dk, kd, "head size d_k of query and key");
  }
  if (v) {
    if (q) attn::same_dim(ctx, kQuery, *q, 0, kValue, *v, 0, "batch size");
    if (q) attn::same_dim(ctx, kQuery, *q, 1, kValue, *v, 1, "sequence length");
    if (!q) batch = (*v)[0], seq = (*v)[1];
    dv = attn::split_dim(ctx, kValue, (*v)[2], kvn, "hidden size", "kv_num_heads");
  }
  if (const Shape* p = ctx.has_input(kPastState) ? input_shape(ctx, kPastState) : nullptr) {
    require_rank(ctx, kPastState, 4, "past_state (batch, kv_heads, d_k, d_v)");
    batch = unify_dims(ctx, batch, (*p)[0], "batch size of past_state");
    unify_dims(ctx, Dim::of(kvn), (*p)[1], "past_state heads vs kv_num_heads");
    dk = unify_dims(ctx, dk, (*p)[2], "past_state d_k");
    dv = unify_dims(ctx, dv, (*p)[3], "past_state d_v");
  }
  check_gate(ctx, kDecay, batch, seq, {dim_mul(Dim::of(kvn), dk), Dim::of(kvn)});
  check_gate(ctx, kBeta, batch, seq, {Dim::of(kvn), Dim::of(1)});
  if (!q && !v) {
    set_output(ctx, kOutput, t, std::nullopt);
  } else {
    set_output(ctx, kOutput, t, Shape{batch, seq, dim_mul(Dim::of(qn), dv)});
  }
  set_output(ctx, kPresentState, st, Shape{batch, Dim::of(kvn), dk, dv});
}

}  // namespace

TESSERA_REGISTER_OPS(attention_linear_attention) {
  reg.add(
      OpSchema("LinearAttention", 27)
          .category(Category::kAttention)
          .doc("Linear attention with a recurrent state S: per step S is decayed and/or delta-corrected, the "
               "key "
               "(x) value outer product is added, and the output is scale * q^T S (update_rule picks linear, "
               "gated, delta or gated_delta).")
          .input("query", "T")
          .input("key", "T")
          .input("value", "T")
          .optional_input("past_state", "T")
          .optional_input("decay", "T")
          .optional_input("beta", "T")
          .output("output", "T")
          .optional_output("present_state", "T")
          .types("T", types::tensors({"float", "float16", "bfloat16"}))
          .attr("chunk_size", int64_t{64})
          .attr("kv_num_heads", tessera::ir::AttrType::kInt)
          .attr("q_num_heads", tessera::ir::AttrType::kInt)
          .attr("scale", 0.0f)
          .attr("update_rule", "gated_delta")
          .infer(infer_linear_attention));
}
