// Shape checks shared by NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: both take an [N, C, d1..dk]
// input, [N, d1..dk] class indices and an optional [C] weight per class.
#pragma once

#include "ops/infer.h"

namespace tessera::ops {

// Validates the three inputs and the 'reduction' attribute, then sets output 0: the per-element loss
// shaped like the target for reduction "none", a scalar otherwise. `input_name` and `target_name` are
// the op's names for inputs 0 and 1, used in messages.
void infer_class_loss(InferenceContext& ctx, std::string_view input_name, std::string_view target_name);

}  // namespace tessera::ops
