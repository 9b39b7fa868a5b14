// Attention (com.microsoft 1): BERT-style self-attention with the Q/K/V projection fused in, a mask and
// a stacked key/value cache "past"/"present" of shape (2, batch, heads, seq, head_size).
#include <fmt/format.h>

#include <array>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kInput, kWeights, kBias, kMaskIndex, kPast, kAttentionBias, kPastSequenceLength };
enum Out { kOutput, kPresent };

// Hidden sizes of Q, K and V: qkv_hidden_sizes when given, else a third each of the weights' columns.
std::optional<std::array<int64_t, 3>> qkv_sizes(const InferenceContext& ctx) {
  auto sizes = ctx.attr_ints("qkv_hidden_sizes");
  if (!sizes.empty()) {
    if (sizes.size() != 3) ctx.fail(fmt::format("qkv_hidden_sizes must hold 3 values, got {}", sizes.size()));
    if (sizes[0] != sizes[1]) {
      ctx.fail(fmt::format("qkv_hidden_sizes gives Q {} and K {}; they must be equal", sizes[0], sizes[1]));
    }
    return std::array<int64_t, 3>{sizes[0], sizes[1], sizes[2]};
  }
  const Shape* w = ctx.has_input(kWeights) ? input_shape(ctx, kWeights) : nullptr;
  if (w && w->size() == 2 && (*w)[1].is_static()) {
    int64_t cols = (*w)[1].value;
    if (cols % 3 != 0)
      ctx.fail(fmt::format("weights have {} columns, not divisible into Q, K and V thirds", cols));
    return std::array<int64_t, 3>{cols / 3, cols / 3, cols / 3};
  }
  return std::nullopt;
}

void infer_attention(InferenceContext& ctx) {
  int64_t heads = attn::required_positive_attr(ctx, "num_heads");
  ir::DataType t = input_elem(ctx, kInput);
  const Shape* x = input_shape(ctx, kInput);
  require_rank(ctx, kInput, 3, "input (batch, seq, input_hidden)");
  if (ctx.has_input(kWeights)) require_rank(ctx, kWeights, 2, "weights (input_hidden, q+k+v hidden)");
  const Shape* w = ctx.has_input(kWeights) ? input_shape(ctx, kWeights) : nullptr;
  if (x && w) unify_dims(ctx, (*x)[2], (*w)[0], "input hidden size vs weights rows");
  auto sizes = qkv_sizes(ctx);
  if (w && sizes && (*w)[1].is_static() && (*w)[1].value != (*sizes)[0] + (*sizes)[1] + (*sizes)[2]) {
    ctx.fail(fmt::format("weights have {} columns but qkv_hidden_sizes add up to {}", (*w)[1].value,
                         (*sizes)[0] + (*sizes)[1] + (*sizes)[2]));
  }
  const Shape* bias = ctx.has_input(kBias) ? input_shape(ctx, kBias) : nullptr;
  if (bias && sizes) {
    require_rank(ctx, kBias, 1, "bias");
    unify_dims(ctx, (*bias)[0], Dim::of((*sizes)[0] + (*sizes)[1] + (*sizes)[2]),
               "bias length vs Q+K+V hidden");
  }
  Dim head = Dim::unknown(), v_hidden = Dim::unknown();
  if (sizes) {
    head = attn::split_dim(ctx, kInput, Dim::of((*sizes)[0]), heads, "Q hidden size", "num_heads");
    attn::split_dim(ctx, kInput, Dim::of((*sizes)[2]), heads, "V hidden size", "num_heads");
    v_hidden = Dim::of((*sizes)[2]);
  }
  Dim batch = x ? (*x)[0] : Dim::unknown(), seq = x ? (*x)[1] : Dim::unknown();
  set_output(ctx, kOutput, t, x ? std::optional<Shape>(Shape{batch, seq, v_hidden}) : std::nullopt);

  const Shape* past = ctx.has_input(kPast) ? input_shape(ctx, kPast) : nullptr;
  if (past) {
    require_rank(ctx, kPast, 5, "past (2, batch, num_heads, past_seq, head_size)");
    unify_dims(ctx, (*past)[0], Dim::of(2), "past axis 0 stacks key and value");
    unify_dims(ctx, (*past)[2], Dim::of(heads), "past heads vs num_heads");
    head = unify_dims(ctx, (*past)[4], head, "past head size");
  }
  Dim total = seq;
  if (ctx.has_input(kPast)) {
    // A shared buffer is sized for the longest sequence and handed back as is.
    total = !past                                          ? Dim::unknown()
            : ctx.attr_int("past_present_share_buffer", 0) ? (*past)[3]
                                                           : dim_add((*past)[3], seq);
  }
  set_output(ctx, kPresent, t, Shape{Dim::of(2), batch, Dim::of(heads), total, head});
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_attention) {
  reg.add(
      OpSchema("Attention", 1, "com.microsoft")
          .category(Category::kAttention)
          .doc("Multi-head self-attention with the input projection fused: Q, K, V = input @ weights + bias, "
               "then softmax(Q K^T * scale + mask) V per head.")
          .input("input", "T")
          .input("weights", "T")
          .optional_input("bias", "T")
          .optional_input("mask_index", "M")
          .optional_input("past", "T")
          .optional_input("attention_bias", "T")
          .optional_input("past_sequence_length", "M")
          .output("output", "T")
          .optional_output("present", "T")
          .types("T", types::tensors({"float", "float16", "bfloat16"}))
          .types("M", {"tensor(int32)"})
          .attr("do_rotary", int64_t{0})
          .attr("mask_filter_value", -10000.0f)
          .attr("num_heads", ir::AttrType::kInt)
          .attr("past_present_share_buffer", int64_t{0})
          .attr_optional("qkv_hidden_sizes", ir::AttrType::kInts)
          .attr("rotary_embedding_dim", int64_t{0})
          .attr_optional("scale", ir::AttrType::kFloat)
          .attr("unidirectional", int64_t{0})
          .infer(infer_attention));
}
