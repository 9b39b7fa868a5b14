// Attention (ai.onnx 23+): scaled dot-product attention over 3-D (batch, seq, heads*head_size) or 4-D
// (batch, heads, seq, head_size) query/key/value, with grouped-query heads, a mask, a key/value cache
// and an optional copy of the attention scores.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

enum In { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpadSeqlen };
enum Out { kY, kPresentKey, kPresentValue, kQkOutput };

// The four sizes that fix every output: per-head views of Q, K and V in the 4-D layout.
struct Heads {
  Dim batch, q_heads, kv_heads, q_seq, kv_seq, head_size, v_head_size;
  bool packed = false;  // 3-D inputs
};

// Reads Q/K/V in either layout, checking that they agree; nullopt when a rank is unknown.
std::optional<Heads> read_heads(const InferenceContext& ctx) {
  const Shape* q = input_shape(ctx, kQ);
  const Shape* k = input_shape(ctx, kK);
  const Shape* v = input_shape(ctx, kV);
  for (size_t i : {kQ, kK, kV}) {
    const Shape* s = input_shape(ctx, i);
    if (s && s->size() != 3 && s->size() != 4) {
      ctx.fail_input(
          i, fmt::format("{} must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size), got {}",
                         attn::input_label(ctx, i), ir::shape_to_string(*s)));
    }
  }
  if (!q || !k || !v) return std::nullopt;
  if (q->size() != k->size() || q->size() != v->size()) {
    ctx.fail(fmt::format("Q {}, K {} and V {} must all be 3-D or all be 4-D", ir::shape_to_string(*q),
                         ir::shape_to_string(*k), ir::shape_to_string(*v)));
  }
  Heads h;
  h.batch = attn::same_dim(ctx, kQ, *q, 0, kK, *k, 0, "batch size");
  h.batch = attn::same_dim(ctx, kQ, *q, 0, kV, *v, 0, "batch size");
  if (q->size() == 4) {
    h.q_heads = (*q)[1];
    h.kv_heads = attn::same_dim(ctx, kK, *k, 1, kV, *v, 1, "number of key/value heads");
    h.q_seq = (*q)[2];
    h.kv_seq = attn::same_dim(ctx, kK, *k, 2, kV, *v, 2, "key/value sequence length");
    h.head_size = attn::same_dim(ctx, kQ, *q, 3, kK, *k, 3, "head size of Q and K");
    h.v_head_size = (*v)[3];
    if (h.q_heads.is_static() && h.kv_heads.is_static()) {
      attn::check_head_groups(ctx, h.q_heads.value, h.kv_heads.value, "query heads", "key/value heads");
    }
    return h;
  }
  // 3-D: the head counts come from the attributes, which the layout needs.
  h.packed = true;
  auto qn = attn::positive_attr(ctx, "q_num_heads");
  auto kvn = attn::positive_attr(ctx, "kv_num_heads");
  if (!qn || !kvn) ctx.fail("3-D Q, K and V need the attributes q_num_heads and kv_num_heads");
  attn::check_head_groups(ctx, *qn, *kvn, "q_num_heads", "kv_num_heads");
  h.q_heads = Dim::of(*qn);
  h.kv_heads = Dim::of(*kvn);
  h.q_seq = (*q)[1];
  h.kv_seq = attn::same_dim(ctx, kK, *k, 1, kV, *v, 1, "key/value sequence length");
  Dim qd = attn::split_dim(ctx, kQ, (*q)[2], *qn, "hidden size", "q_num_heads");
  Dim kd = attn::split_dim(ctx, kK, (*k)[2], *kvn, "hidden size", "kv_num_heads");
  if (qd.is_static() && kd.is_static() && qd.value != kd.value) {
    ctx.fail(fmt::format(
        "head size of Q ({} / q_num_heads {} = {}) differs from that of K ({} / kv_num_heads {} = {})",
        (*q)[2].value, *qn, qd.value, (*k)[2].value, *kvn, kd.value));
  }
  h.head_size = qd.is_static() ? qd : kd;
  h.v_head_size = attn::split_dim(ctx, kV, (*v)[2], *kvn, "hidden size", "kv_num_heads");
  return h;
}

// A cache input must be (batch, kv_heads, past_seq, size); returns its past_seq.
Dim read_past(const InferenceContext& ctx, size_t i, const Heads& h, const Dim& size) {
  if (!ctx.has_input(i)) return Dim::of(0);
  const Shape* p = input_shape(ctx, i);
  if (!p) return Dim::unknown();
  require_rank(ctx, i, 4, attn::input_label(ctx, i));
  auto check = [&](size_t k, const Dim& want, std::string_view what) {
    if (want.is_static() && (*p)[k].is_static() && want.value != (*p)[k].value) {
      ctx.fail_input(i, fmt::format("{} {} has {} {}, expected {}", attn::input_label(ctx, i),
                                    ir::shape_to_string(*p), what, (*p)[k].value, want.value));
    }
  };
  check(0, h.batch, "batch size");
  check(1, h.kv_heads, "key/value heads");
  check(3, size, "head size");
  return (*p)[2];
}

void check_mask(const InferenceContext& ctx) {
  if (!ctx.has_input(kMask)) return;
  const Shape* m = input_shape(ctx, kMask);
  if (m && m->size() > 4) {
    ctx.fail_input(kMask,
                   fmt::format("attn_mask must have rank at most 4 (broadcastable to batch, heads, q_seq, "
                               "total_seq), got {}",
                               ir::shape_to_string(*m)));
  }
}

void infer_attention(InferenceContext& ctx) {
  check_mask(ctx);
  int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.fail(fmt::format("qk_matmul_output_mode must be 0, 1, 2 or 3, got {}", mode));
  if (ctx.has_input(kPastKey) != ctx.has_input(kPastValue)) {
    ctx.fail("past_key and past_value must be given together");
  }
  ir::DataType qt = input_elem(ctx, kQ), kt = input_elem(ctx, kK), vt = input_elem(ctx, kV);
  auto h = read_heads(ctx);
  if (!h) {
    set_output(ctx, kY, qt, std::nullopt);
    set_output(ctx, kPresentKey, kt, std::nullopt);
    set_output(ctx, kPresentValue, vt, std::nullopt);
    set_output(ctx, kQkOutput, qt, std::nullopt);
    return;
  }
  Dim past = read_past(ctx, kPastKey, *h, h->head_size);
  Dim past_v = read_past(ctx, kPastValue, *h, h->v_head_size);
  past = unify_dims(ctx, past, past_v, "past_key and past_value sequence lengths differ");
  Dim total = dim_add(past, h->kv_seq);

  if (h->packed) {
    set_output(ctx, kY, qt, Shape{h->batch, h->q_seq, dim_mul(h->q_heads, h->v_head_size)});
  } else {
    set_output(ctx, kY, qt, Shape{h->batch, h->q_heads, h->q_seq, h->v_head_size});
  }
  set_output(ctx, kPresentKey, kt, Shape{h->batch, h->kv_heads, total, h->head_size});
  set_output(ctx, kPresentValue, vt, Shape{h->batch, h->kv_heads, total, h->v_head_size});
  set_output(ctx, kQkOutput, qt, Shape{h->batch, h->q_heads, h->q_seq, total});
}

const std::vector<std::string> kFloats = types::tensors({"bfloat16", "float16", "float", "double"});

OpSchema attention_schema(int version) {
  OpSchema s("Attention", version);
  s.category(Category::kAttention)
      .doc(
          "Scaled dot-product attention softmax(Q K^T * scale + mask) V, in multi-head, grouped-query or "
          "multi-query form, optionally causal and with a key/value cache.")
      .input("Q", "T1")
      .input("K", "T1")
      .input("V", "T2")
      .optional_input("attn_mask", "U")
      .optional_input("past_key", "T1")
      .optional_input("past_value", "T2");
  // Opset 24 lets a padded key/value cache say how many of its positions are real, per batch entry.
  if (version >= 24) s.optional_input("nonpad_kv_seqlen", "tensor(int64)");
  s.output("Y", "T1")
      .optional_output("present_key", "T1")
      .optional_output("present_value", "T2")
      .optional_output("qk_matmul_output", "T1")
      .types("T1", kFloats)
      .types("T2", kFloats)
      .types("U", types::concat({types::kNumericBf16, {"tensor(bool)"}}))
      .attr("is_causal", int64_t{0})
      .attr_optional("kv_num_heads", ir::AttrType::kInt)
      .attr_optional("q_num_heads", ir::AttrType::kInt)
      .attr("qk_matmul_output_mode", int64_t{0})
      .attr_optional("scale", ir::AttrType::kFloat)
      .attr("softcap", 0.0f)
      .attr_optional("softmax_precision", ir::AttrType::kInt);
  if (version >= 25) {
    // Sliding-window attention; -1 leaves a side unbounded. The conformance suite's local-window cases
    // import opset 25 and use these.
    s.attr("left_window_size", int64_t{-1}).attr("right_window_size", int64_t{-1});
  }
  return s.infer(infer_attention);
}

}  // namespace

TESSERA_REGISTER_OPS(attention_attention) {
  for (int version : {23, 24, 25}) reg.add(attention_schema(version));
}
