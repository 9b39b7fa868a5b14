// The FusedConv signature (com.microsoft 1: inputs X, W, B, Z, output Y and the convolution and
// activation attributes), shared by FusedConv itself and by the ops that compute it in another activation
// layout (com.tessera BlockedConv, NhwcConv), so that all three read the same attributes.
#pragma once

#include <string>
#include <vector>

#include "ops/schema.h"

namespace tessera::ops::contrib {

// A schema `name` of `domain` with FusedConv's inputs, output and attributes, element types `types`
// (tensor types, as types::tensors gives them) and no shape rule yet.
OpSchema fused_conv_schema(const char* name, const char* domain, std::string doc,
                           std::vector<std::string> types);

}  // namespace tessera::ops::contrib
