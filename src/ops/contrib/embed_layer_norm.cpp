// EmbedLayerNormalization (com.microsoft 1): BERT's embedding block fused: word + position (+ segment)
// embeddings, layer-normalised, plus the mask reduced to one index per sequence.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kInputIds, kSegmentIds, kWordEmb, kPosEmb, kSegEmb, kGamma, kBeta, kMask, kPositionIds };
enum Out { kOutput, kMaskIndex, kEmbeddingSum };

void infer_embed_layer_norm(InferenceContext& ctx) {
  require_rank(ctx, kInputIds, 2, "input_ids (batch, seq)");
  for (size_t i : {kWordEmb, kPosEmb, kSegEmb}) {
    if (ctx.has_input(i)) require_rank(ctx, i, 2, attn::input_label(ctx, i));
  }
  if (ctx.has_input(kSegmentIds) != ctx.has_input(kSegEmb)) {
    ctx.fail("segment_ids and segment_embedding must be given together");
  }
  const Shape* ids = input_shape(ctx, kInputIds);
  Dim batch = ids ? (*ids)[0] : Dim::unknown(), seq = ids ? (*ids)[1] : Dim::unknown();
  for (size_t i : {kSegmentIds, kMask}) {
    const Shape* s = ctx.has_input(i) ? input_shape(ctx, i) : nullptr;
    if (!s || !ids) continue;
    attn::same_dim(ctx, kInputIds, *ids, 0, i, *s, 0, "batch size");
    attn::same_dim(ctx, kInputIds, *ids, 1, i, *s, 1, "sequence length");
  }
  // Every embedding table and the layer-norm parameters share the hidden size.
  Dim hidden = Dim::unknown();
  for (size_t i : {kWordEmb, kPosEmb, kSegEmb, kGamma, kBeta}) {
    const Shape* s = ctx.has_input(i) ? input_shape(ctx, i) : nullptr;
    if (!s || s->empty()) continue;
    hidden = unify_dims(ctx, hidden, s->back(), fmt::format("hidden size of {}", attn::input_label(ctx, i)));
  }
  ir::DataType t = input_elem(ctx, kWordEmb);
  Shape out{batch, seq, hidden};
  set_output(ctx, kOutput, t, out);
  set_output(ctx, kMaskIndex, ir::DataType::kInt32, Shape{batch});
  set_output(ctx, kEmbeddingSum, t, out);
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_embed_layer_norm) {
  reg.add(OpSchema("EmbedLayerNormalization", 1, "com.microsoft")
              .category(Category::kNormalization)
              .doc("Looks up word, position and optional segment embeddings, sums them and applies layer "
                   "normalisation; also turns the attention mask into a per-sequence mask index.")
              .input("input_ids", "T1")
              .optional_input("segment_ids", "T1")
              .input("word_embedding", "T")
              .input("position_embedding", "T")
              .optional_input("segment_embedding", "T")
              .input("gamma", "T")
              .input("beta", "T")
              .optional_input("mask", "T1")
              .optional_input("position_ids", "T1")
              .output("output", "T")
              .optional_output("mask_index", "T1")
              .optional_output("embedding_sum", "T")
              .types("T1", {"tensor(int32)"})
              .types("T", types::tensors({"float", "float16"}))
              .attr_optional("epsilon", ir::AttrType::kFloat)
              .attr_optional("mask_index_type", ir::AttrType::kInt)
              .infer(infer_embed_layer_norm));
}
