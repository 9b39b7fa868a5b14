// Checks shared by the normalization operators of src/ops/nn.
#pragma once

#include <string_view>

#include "ops/infer.h"

namespace tessera::ops::nn {

// Fails unless input i, when its shape is known, is 1-D with `size` values (a per-channel parameter).
void require_per_channel(const InferenceContext& ctx, size_t i, std::string_view name, const ir::Dim& size,
                         std::string_view what = "X's channel count");

// Fails unless input i broadcasts onto the trailing axes of `x` from `axis` on (LayerNormalization's Scale).
void require_trailing_broadcast(const InferenceContext& ctx, size_t i, std::string_view name,
                                const ir::Shape& x, int64_t axis);

}  // namespace tessera::ops::nn
