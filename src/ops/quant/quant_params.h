// The scale and zero point of QuantizeLinear/DequantizeLinear against the tensor they (de)quantize.
#pragma once

#include <string>
#include <vector>

#include "ops/infer.h"

namespace tessera::ops {

// Checks inputs 1 (scale) and 2 (zero point, optional) against input 0 for the granularity the scale's
// shape implies: a scalar (or one element) is per-tensor; 1-D is per-axis along attribute 'axis' (when
// `per_axis` is allowed, opset 13+); the rank of x with attribute 'block_size' > 0 is blocked (when
// `blocked` is allowed, opset 21+), each scale covering block_size elements along 'axis'.
void check_quant_params(const InferenceContext& ctx, bool per_axis, bool blocked);

// The quantized element types of QuantizeLinear / DequantizeLinear in opset `v`, each version adding
// the narrow types of its IR; DequantizeLinear also reads int32 (e.g. quantized biases).
std::vector<std::string> quantized_types(int v, bool with_int32);

}  // namespace tessera::ops
