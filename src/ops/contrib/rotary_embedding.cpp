// RotaryEmbedding (com.microsoft 1): ONNX Runtime's RoPE, on 3-D (batch, seq, hidden) or 4-D
// (batch, heads, seq, head_size) input with position_ids choosing rows of the cos/sin caches.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kInput, kPositionIds, kCos, kSin };

void infer_rotary(InferenceContext& ctx) {
  propagate_type(ctx, kInput, 0);
  const Shape* x = input_shape(ctx, kInput);
  if (!x) return;
  if (x->size() != 3 && x->size() != 4) {
    ctx.fail_input(
        kInput, fmt::format("input must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size), "
                            "got {}",
                            ir::shape_to_string(*x)));
  }
  // With 3-D input the head size follows from num_heads when set, else from the cache width.
  Dim head = x->size() == 4 ? x->back() : Dim::unknown();
  if (x->size() == 3 && ctx.attr_int("num_heads", 0) > 0) {
    head = attn::split_dim(ctx, kInput, x->back(), ctx.attr_int("num_heads", 0), "hidden size", "num_heads");
  }
  int64_t rotary = ctx.attr_int("rotary_embedding_dim", 0);
  if (rotary > 0 && head.is_static() && rotary > head.value) {
    ctx.fail(fmt::format("rotary_embedding_dim {} exceeds the head size {}", rotary, head.value));
  }
  if (rotary > 0 && x->size() == 3 && ctx.attr_int("num_heads", 0) <= 0) {
    ctx.fail("rotary_embedding_dim on a 3-D input needs num_heads to find the head size");
  }
  for (size_t i : {kCos, kSin}) {
    const Shape* c = input_shape(ctx, i);
    if (!c) continue;
    if (c->size() != 2) {
      ctx.fail_input(i, fmt::format("{} must be 2-D (max_position, rotary_dim/2), got {}",
                                    attn::input_label(ctx, i), ir::shape_to_string(*c)));
    }
    Dim want = rotary > 0 ? Dim::of(rotary / 2) : head.is_static() ? Dim::of(head.value / 2) : Dim::unknown();
    unify_dims(ctx, (*c)[1], want,
               fmt::format("{} width must be half the rotary dimension", attn::input_label(ctx, i)));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_rotary_embedding) {
  reg.add(
      OpSchema("RotaryEmbedding", 1, "com.microsoft")
          .category(Category::kAttention)
          .doc(
              "Rotary position embedding: rotates feature pairs of each head by angles read from the cos/sin "
              "caches at each token's position id.")
          .input("input", "T")
          .input("position_ids", "M")
          .input("cos_cache", "T")
          .input("sin_cache", "T")
          .output("output", "T")
          .types("T", types::tensors({"float", "float16", "bfloat16"}))
          .types("M", {"tensor(int64)"})
          .attr("interleaved", int64_t{0})
          .attr("is_packed_batching", int64_t{0})
          .attr("num_heads", int64_t{0})
          .attr("rotary_embedding_dim", int64_t{0})
          .attr("scale", 1.0f)
          .infer(infer_rotary));
}
