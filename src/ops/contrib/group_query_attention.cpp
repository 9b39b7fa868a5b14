// GroupQueryAttention (com.microsoft 1): decoder attention with fewer key/value heads than query heads,
// a key/value cache that may be a preallocated shared buffer, optional rotary embedding and a local
// (sliding) window.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kQuery, kKey, kValue, kPastKey, kPastValue, kSeqlensK, kTotalSeqLen, kCos, kSin, kPositionIds };
enum Out { kOutput, kPresentKey, kPresentValue, kOutputQk };

void infer_gqa(InferenceContext& ctx) {
  int64_t heads = attn::required_positive_attr(ctx, "num_heads");
  int64_t kv_heads = attn::required_positive_attr(ctx, "kv_num_heads");
  attn::check_head_groups(ctx, heads, kv_heads, "num_heads", "kv_num_heads");
  if (ctx.has_input(kKey) != ctx.has_input(kValue)) ctx.fail("key and value must be given together");
  if (ctx.has_input(kPastKey) != ctx.has_input(kPastValue))
    ctx.fail("past_key and past_value must be given together");
  if (ctx.attr_int("do_rotary", 0) && (!ctx.has_input(kCos) || !ctx.has_input(kSin))) {
    ctx.fail("do_rotary needs the cos_cache and sin_cache inputs");
  }
  ir::DataType t = input_elem(ctx, kQuery);
  const Shape* q = input_shape(ctx, kQuery);
  require_rank(ctx, kQuery, 3, "query (batch, seq, hidden)");
  Dim batch, seq, head;
  if (q) {
    batch = (*q)[0];
    seq = (*q)[1];
    // Without key and value the query packs all three: (num_heads + 2 * kv_num_heads) heads.
    bool packed = !ctx.has_input(kKey);
    int64_t parts = packed ? heads + 2 * kv_heads : heads;
    head = attn::split_dim(ctx, kQuery, (*q)[2], parts, "hidden size",
                           packed ? "num_heads + 2 * kv_num_heads" : "num_heads");
  }
  if (const Shape* k = ctx.has_input(kKey) ? input_shape(ctx, kKey) : nullptr) {
    require_rank(ctx, kKey, 3, "key (batch, seq, kv_hidden)");
    head = unify_dims(ctx, head, attn::split_dim(ctx, kKey, (*k)[2], kv_heads, "hidden size", "kv_num_heads"),
                      "head size of query and key");
  }
  set_output(ctx, kOutput, t,
             q ? std::optional<Shape>(Shape{batch, seq, dim_mul(Dim::of(heads), head)}) : std::nullopt);

  // The cache holds max(past length, total_sequence_length) positions: a shared buffer keeps its size.
  Dim past = Dim::unknown();
  if (const Shape* p = ctx.has_input(kPastKey) ? input_shape(ctx, kPastKey) : nullptr) {
    require_rank(ctx, kPastKey, 4, "past_key (batch, kv_num_heads, past_seq, head_size)");
    unify_dims(ctx, (*p)[1], Dim::of(kv_heads), "past_key heads vs kv_num_heads");
    head = unify_dims(ctx, head, (*p)[3], "past_key head size");
    past = (*p)[2];
  }
  Dim present = Dim::unknown();
  auto total = constant_ints(ctx, kTotalSeqLen);
  if (total && total->size() == 1) {
    Dim t_dim = Dim::of((*total)[0]);
    present = ctx.has_input(kPastKey) ? attn::dim_max(past, t_dim) : t_dim;
  }
  set_output(ctx, kPresentKey, t, Shape{batch, Dim::of(kv_heads), present, head});
  set_output(ctx, kPresentValue, t, Shape{batch, Dim::of(kv_heads), present, head});
  set_output(ctx, kOutputQk, t, Shape{batch, Dim::of(heads), seq, present});
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_group_query_attention) {
  reg.add(
      OpSchema("GroupQueryAttention", 1, "com.microsoft")
          .category(Category::kAttention)
          .doc("Grouped-query attention for decoders: kv_num_heads key/value heads shared by groups of query "
               "heads, causal, with an updated key/value cache and optional rotary embedding.")
          .input("query", "T")
          .optional_input("key", "T")
          .optional_input("value", "T")
          .optional_input("past_key", "T")
          .optional_input("past_value", "T")
          .input("seqlens_k", "M")
          .input("total_sequence_length", "M")
          .optional_input("cos_cache", "T")
          .optional_input("sin_cache", "T")
          .optional_input("position_ids", "tensor(int64)")
          .optional_input("attention_bias", "T")
          .optional_input("head_sink", "T")
          .output("output", "T")
          .output("present_key", "T")
          .output("present_value", "T")
          .optional_output("output_qk", "T")
          .types("T", types::tensors({"float16", "bfloat16", "float"}))
          .types("M", {"tensor(int32)"})
          .attr("do_rotary", int64_t{0})
          .attr("kv_num_heads", ir::AttrType::kInt)
          .attr("local_window_size", int64_t{-1})
          .attr("num_heads", ir::AttrType::kInt)
          .attr("qk_output", int64_t{0})
          .attr("rotary_interleaved", int64_t{0})
          .attr_optional("scale", ir::AttrType::kFloat)
          .attr_optional("smooth_softmax", ir::AttrType::kInt)
          .attr("softcap", 0.0f)
          .infer(infer_gqa));
}
