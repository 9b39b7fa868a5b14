// MultiHeadAttention (com.microsoft 1): attention after the projections, for self and cross attention,
// with Q/K/V unpacked, packed QKV (batch, seq, heads, 3, head_size) or packed KV, and a per-head cache.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kQuery, kKey, kValue, kBias, kKeyPaddingMask, kAttentionBias, kPastKey, kPastValue };
enum Out { kOutput, kPresentKey, kPresentValue, kQk };

struct Layout {
  Dim batch, q_seq, kv_seq, head, v_head;
  bool kv_is_bnsh = false;  // key/value already (batch, heads, kv_seq, head_size): no cache append
};

Layout read_layout(const InferenceContext& ctx, int64_t heads) {
  Layout l;
  const Shape* q = input_shape(ctx, kQuery);
  const Shape* k = ctx.has_input(kKey) ? input_shape(ctx, kKey) : nullptr;
  const Shape* v = ctx.has_input(kValue) ? input_shape(ctx, kValue) : nullptr;
  if (q && q->size() != 3 && q->size() != 5) {
    ctx.fail_input(kQuery,
                   fmt::format("query must be 3-D (batch, seq, hidden) or packed 5-D (batch, seq, heads, 3, "
                               "head_size), got {}",
                               ir::shape_to_string(*q)));
  }
  if (q) l.batch = (*q)[0], l.q_seq = (*q)[1];
  if (q && q->size() == 5) {
    unify_dims(ctx, (*q)[2], Dim::of(heads), "packed query heads vs num_heads");
    unify_dims(ctx, (*q)[3], Dim::of(3), "packed query axis 3 stacks Q, K and V");
    l.kv_seq = l.q_seq;
    l.head = l.v_head = (*q)[4];
    return l;
  }
  if (q) l.head = attn::split_dim(ctx, kQuery, (*q)[2], heads, "hidden size", "num_heads");
  if (!k) return l;
  if (k->size() == 5) {  // packed KV: (batch, kv_seq, heads, 2, head_size)
    unify_dims(ctx, (*k)[2], Dim::of(heads), "packed key/value heads vs num_heads");
    unify_dims(ctx, (*k)[3], Dim::of(2), "packed key/value axis 3 stacks K and V");
    l.kv_seq = (*k)[1];
    l.head = unify_dims(ctx, l.head, (*k)[4], "head size of query and packed key/value");
    l.v_head = (*k)[4];
    return l;
  }
  if (k->size() == 4) {
    l.kv_is_bnsh = true;
    unify_dims(ctx, (*k)[1], Dim::of(heads), "key heads vs num_heads");
    l.kv_seq = (*k)[2];
    l.head = unify_dims(ctx, l.head, (*k)[3], "head size of query and key");
    if (v && v->size() == 4) l.v_head = (*v)[3];
    return l;
  }
  if (k->size() != 3) {
    ctx.fail_input(kKey, fmt::format("key must be 3-D, 4-D or packed 5-D, got {}", ir::shape_to_string(*k)));
  }
  l.kv_seq = (*k)[1];
  l.head = unify_dims(ctx, l.head, attn::split_dim(ctx, kKey, (*k)[2], heads, "hidden size", "num_heads"),
                      "head size of query and key");
  if (v && v->size() == 3)
    l.v_head = attn::split_dim(ctx, kValue, (*v)[2], heads, "hidden size", "num_heads");
  return l;
}

void infer_mha(InferenceContext& ctx) {
  int64_t heads = attn::required_positive_attr(ctx, "num_heads");
  ir::DataType t = input_elem(ctx, kQuery);
  Layout l = read_layout(ctx, heads);
  if (ctx.has_input(kKey) != ctx.has_input(kValue) && input_shape(ctx, kKey) &&
      input_shape(ctx, kKey)->size() != 5) {
    ctx.fail("key and value must be given together unless key holds packed key/value");
  }
  const Shape* q = input_shape(ctx, kQuery);
  Dim heads_dim = Dim::of(heads);
  set_output(ctx, kOutput, t,
             q ? std::optional<Shape>(Shape{l.batch, l.q_seq, dim_mul(heads_dim, l.v_head)}) : std::nullopt);
  Dim past = Dim::of(0);
  if (ctx.has_input(kPastKey)) {
    const Shape* p = input_shape(ctx, kPastKey);
    require_rank(ctx, kPastKey, 4, "past_key (batch, num_heads, past_seq, head_size)");
    past = p ? (*p)[2] : Dim::unknown();
  }
  Dim total = l.kv_is_bnsh ? l.kv_seq : dim_add(past, l.kv_seq);
  set_output(ctx, kPresentKey, t, Shape{l.batch, heads_dim, total, l.head});
  set_output(ctx, kPresentValue, t, Shape{l.batch, heads_dim, total, l.v_head});
  set_output(ctx, kQk, t, Shape{l.batch, heads_dim, l.q_seq, total});
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_multi_head_attention) {
  reg.add(
      OpSchema("MultiHeadAttention", 1, "com.microsoft")
          .category(Category::kAttention)
          .doc("Multi-head attention on already projected query, key and value (optionally packed, with a "
               "bias to add), masks, and a key/value cache.")
          .input("query", "T")
          .optional_input("key", "T")
          .optional_input("value", "T")
          .optional_input("bias", "T")
          .optional_input("key_padding_mask", "M")
          .optional_input("attention_bias", "T")
          .optional_input("past_key", "T")
          .optional_input("past_value", "T")
          .optional_input("past_sequence_length", "M")
          .optional_input("cache_indirection", "M")
          .output("output", "T")
          .optional_output("present_key", "T")
          .optional_output("present_value", "T")
          .optional_output("qk", "QK")
          .types("T", types::tensors({"float", "float16", "bfloat16"}))
          .types("M", {"tensor(int32)"})
          .types("QK", types::tensors({"float", "float16", "bfloat16"}))
          .attr("mask_filter_value", -10000.0f)
          .attr("num_heads", ir::AttrType::kInt)
          .attr_optional("scale", ir::AttrType::kFloat)
          .attr("unidirectional", int64_t{0})
          .infer(infer_mha));
}
