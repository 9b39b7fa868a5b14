// Small helpers for the operators that take or give sequences of tensors.
#pragma once

#include "ops/infer.h"

namespace tessera::ops {

// The element type of sequence input i; nullptr when its type is unknown. Fails when input i is known
// not to be a sequence.
const ir::Type* sequence_elem(const InferenceContext& ctx, size_t i, std::string_view name);
// Fails unless the optional position input i, when present with a known shape, is a scalar (or a
// single-element 1-D tensor, which models use too).
void require_scalar_position(const InferenceContext& ctx, size_t i);

// Every sequence op of opset 11 (and SequenceMap) constrains its sequences and tensors to these.
std::vector<std::string> sequence_types();

}  // namespace tessera::ops
