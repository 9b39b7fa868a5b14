// RotaryEmbedding (ai.onnx 23): rotates pairs of features by position-dependent angles (RoPE), on
// 4-D (batch, heads, seq, head_size) or 3-D (batch, seq, heads*head_size) input.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

enum In { kX, kCos, kSin, kPositionIds };

// The caches hold half a rotary dimension per position: (max_position, rotary_dim/2) when position ids
// pick rows, (batch, seq, rotary_dim/2) when they are absent.
void check_cache(const InferenceContext& ctx, size_t i, const Dim& half_rotary) {
  const Shape* c = input_shape(ctx, i);
  if (!c) return;
  size_t want_rank = ctx.has_input(kPositionIds) ? 2 : 3;
  if (c->size() != want_rank) {
    ctx.fail_input(i, fmt::format("{} must be {}-D {}, got {}", attn::input_label(ctx, i), want_rank,
                                  want_rank == 2 ? "(max_position, rotary_dim/2) when position_ids is given"
                                                 : "(batch, seq, rotary_dim/2) without position_ids",
                                  ir::shape_to_string(*c)));
  }
  const Dim& last = c->back();
  if (half_rotary.is_static() && last.is_static() && last.value != half_rotary.value) {
    ctx.fail_input(
        i, fmt::format("{} {} has last dimension {}, expected rotary_dim/2 = {}", attn::input_label(ctx, i),
                       ir::shape_to_string(*c), last.value, half_rotary.value));
  }
}

void infer_rotary(InferenceContext& ctx) {
  propagate_type(ctx, kX, 0);
  const Shape* x = input_shape(ctx, kX);
  if (!x) return;
  if (x->size() != 3 && x->size() != 4) {
    ctx.fail_input(
        kX,
        fmt::format("input must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size), got {}",
                    ir::shape_to_string(*x)));
  }
  Dim head_size = x->back();
  if (x->size() == 3) {
    auto heads = attn::positive_attr(ctx, "num_heads");
    if (!heads) ctx.fail("a 3-D input needs the attribute num_heads");
    head_size = attn::split_dim(ctx, kX, x->back(), *heads, "hidden size", "num_heads");
  }
  Dim rotary = head_size;
  if (int64_t r = ctx.attr_int("rotary_embedding_dim", 0); r > 0) {
    if (r % 2 != 0) ctx.fail(fmt::format("rotary_embedding_dim {} must be even", r));
    if (head_size.is_static() && r > head_size.value) {
      ctx.fail(fmt::format("rotary_embedding_dim {} exceeds the head size {}", r, head_size.value));
    }
    rotary = Dim::of(r);
  }
  Dim half = rotary.is_static() ? Dim::of(rotary.value / 2) : Dim::unknown();
  check_cache(ctx, kCos, half);
  check_cache(ctx, kSin, half);
}

}  // namespace

TESSERA_REGISTER_OPS(attention_rotary_embedding) {
  reg.add(
      OpSchema("RotaryEmbedding", 23)
          .category(Category::kAttention)
          .doc("Applies rotary position embeddings: each pair of features of the first rotary_embedding_dim "
               "features of a head is rotated by an angle read from the cos/sin caches at its position.")
          .input("X", "T")
          .input("cos_cache", "T")
          .input("sin_cache", "T")
          .optional_input("position_ids", "M")
          .output("Y", "T")
          .types("T", types::tensors({"float", "float16", "bfloat16"}))
          .types("M", {"tensor(int64)"})
          .attr("interleaved", int64_t{0})
          .attr_optional("num_heads", tessera::ir::AttrType::kInt)
          .attr("rotary_embedding_dim", int64_t{0})
          .infer(infer_rotary));
}
