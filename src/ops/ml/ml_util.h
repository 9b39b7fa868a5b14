// Helpers shared by the ai.onnx.ml operators, whose inputs are a batch of feature rows: (N, C), or a
// single row (C) that counts as N = 1.
#pragma once

#include <optional>
#include <string_view>

#include "ops/infer.h"

namespace tessera::ops::ml {

// N of a feature input: dimension 0 of a 2-D input, 1 for a 1-D input, unknown otherwise.
ir::Dim batch_dim(const InferenceContext& ctx, size_t i);
// Fails unless input i, when its rank is known, is 1-D or 2-D.
void require_rows(const InferenceContext& ctx, size_t i);

// The label type a classifier emits: string when `strings_attr` is set, int64 otherwise (when
// `ints_attr` is set or neither is). Fails when both are set.
ir::DataType label_type(const InferenceContext& ctx, std::string_view ints_attr,
                        std::string_view strings_attr);
// Number of class labels in whichever label attribute is set; nullopt when neither is.
std::optional<int64_t> label_count(const InferenceContext& ctx, std::string_view ints_attr,
                                   std::string_view strings_attr);

// The element type that CastMap's cast_to names ("TO_FLOAT", "TO_STRING", "TO_INT64").
std::optional<ir::DataType> cast_to_type(std::string_view name);

}  // namespace tessera::ops::ml
