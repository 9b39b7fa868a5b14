// Shape helpers shared by the attention-family operators (ai.onnx Attention, LinearAttention,
// RotaryEmbedding and the com.microsoft transformer ops): splitting a packed hidden size into heads,
// reading head-count attributes and growing key/value caches.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ops/infer.h"

namespace tessera::ops::attn {

// "input 1 ('key')": how messages name an input.
std::string input_label(const InferenceContext& ctx, size_t i);

// `dim` of input `i` divided by `parts`: e.g. a hidden size split over heads. Fails when both are known
// and do not divide ("hidden size 768 of input 0 ('query') is not divisible by num_heads 7"); unknown
// when the dimension is not static.
ir::Dim split_dim(const InferenceContext& ctx, size_t i, const ir::Dim& dim, int64_t parts,
                  std::string_view dim_what, std::string_view parts_what);

// An integer attribute that, when set, must be positive; nullopt when absent.
std::optional<int64_t> positive_attr(const InferenceContext& ctx, std::string_view name);
// Like positive_attr, but the attribute is required by the operator.
int64_t required_positive_attr(const InferenceContext& ctx, std::string_view name);

// Fails unless q_heads is a positive multiple of kv_heads (grouped-query attention).
void check_head_groups(const InferenceContext& ctx, int64_t q_heads, int64_t kv_heads,
                       std::string_view q_name, std::string_view kv_name);

// The larger of two dimensions when both are static; the known one when one is; else unknown.
ir::Dim dim_max(const ir::Dim& a, const ir::Dim& b);

// Checks that dimension `k` of two known shapes agree, naming both inputs.
ir::Dim same_dim(const InferenceContext& ctx, size_t a, const ir::Shape& sa, size_t ka, size_t b,
                 const ir::Shape& sb, size_t kb, std::string_view what);

// The element type of the first present input among `inputs` whose type is known.
ir::DataType first_elem(const InferenceContext& ctx, std::initializer_list<size_t> inputs);

}  // namespace tessera::ops::attn
