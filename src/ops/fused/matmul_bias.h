// Shape inference shared by the linear-layer ops com.tessera MatMulBias and MatMulBiasGelu: A [..., M, K]
// of rank 2 or more, B [K, N], bias [N] -> Y [..., M, N], A's element type.
#pragma once

#include "ops/infer_util.h"

namespace tessera::ops::fused {

void infer_matmul_bias(InferenceContext& ctx);

}  // namespace tessera::ops::fused
