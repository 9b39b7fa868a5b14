// The layout level's channels-last pass for the GPU (layout_nhwc.cpp): chains of 2-D convolutions,
// pooling and the ops between them move to the com.tessera NHWC ops of ops/nhwc/nhwc.h.
#pragma once

#include <vector>

#include "ir/model.h"
#include "passes/pipeline.h"

namespace tessera::passes {

inline constexpr const char* kNhwcLayoutPass = "to_nhwc_layout";

// Rewrites the main graph of `model`; each node moved is logged as a Rewrite of kNhwcLayoutPass.
void to_nhwc_layout(ir::Model& model, const Target& target, std::vector<Rewrite>& log);

}  // namespace tessera::passes
