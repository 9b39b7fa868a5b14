// `tessera convert amp`: automatic mixed precision. As many nodes as possible in float16 while every
// output stays within atol + rtol * |reference| of the float32 model on the given inputs, checked by
// running Tessera's engine.
//
// Instead of onnxconverter-common's loop that tries one node at a time, it starts from the nodes known
// to be sensitive (reductions, exponentials and logarithms, normalisation, Softmax) kept float32, and
// bisects: when a set of float16 nodes breaks the tolerance, its halves are tried with the other half
// kept float32, down to the single nodes that must stay float32; then the sensitive nodes are bisected
// the same way to hand back those that are fine in float16. A model that converts whole costs one run;
// k nodes that must stay float32 among n cost about k * log2(n) runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/commands/history.h"
#include "runtime/session.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct AmpOptions {
  double rtol = 1e-2;
  double atol = 1e-3;
  rt::SessionOptions session;  // how the model runs (backend, threads, optimisation)
  bool keep_io_types = true;   // inputs and outputs stay float32, so the same feeds run both models
};

using Feeds = std::vector<std::pair<std::string, rt::Value>>;

// Converts the model `h` edits, as one undo step. `feeds` are the inputs tolerance is checked on (one
// set or several). The report lists each node kept float32 and the error it caused in float16. Throws
// TransformError when even the model with every candidate node kept float32 breaks the tolerance.
Report convert_amp(ir::History& h, const AmpOptions& options, const std::vector<Feeds>& feeds);

}  // namespace tessera::transforms
