// Schema pieces and shape inference shared by RNN, GRU and LSTM, which differ in their gate count
// (1, 3, 4), in LSTM's extra cell-state input/output and peepholes, and in a few attributes.
#pragma once

#include "ops/infer.h"
#include "ops/schema.h"

namespace tessera::ops {

// Adds the inputs X, W, R, B, sequence_lens, initial_h and the attributes every recurrent op has
// (activation_alpha/beta, clip, hidden_size; `activations` and `direction` are added by the caller since
// their defaults differ), plus layout from opset 14 and the type constraints of `version`.
void add_recurrent_common(OpSchema& s, int version);

// Infers Y, Y_h (and Y_c for LSTM, output 2) from X [seq, batch, input] (layout 0) or
// [batch, seq, input] (layout 1), W [dirs, gates*hidden, input] and R [dirs, gates*hidden, hidden].
void infer_recurrent(InferenceContext& ctx, int gates);

}  // namespace tessera::ops
