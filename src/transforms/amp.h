// `tessera convert amp`: automatic mixed precision. As many nodes as possible in float16 while every
// output stays within atol + rtol * |reference| of the float32 model on the given inputs, checked by
// running Tessera's engine.
//
// Instead of onnxconverter-common's loop that tries one node at a time, it searches over groups: from the
// model with every candidate node float32 (which must pass), it hands groups to float16 one at a time,
// keeping each hand-over whose run passes. The first groups are runs of the non-sensitive nodes in file
// order (layers), then each sensitive operator type (reductions, exponentials and logarithms,
// normalisation, Softmax, Div) as a whole; a group that fails is split in halves, queued after the
// groups already waiting (breadth first), down to single nodes. Each state kept was run, so the result
// is within tolerance; the search stops after `max_runs` runs, the groups not yet tried staying
// float32. Weights are converted once for all runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/commands/history.h"
#include "runtime/session.h"
#include "transforms/amp_suffix.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct AmpOptions {
  double rtol = 1e-2;
  double atol = 1e-3;
  rt::SessionOptions session;  // how the model runs (backend, threads, optimisation)
  bool keep_io_types = true;   // inputs and outputs stay float32, so the same feeds run both models
  int max_runs = 40;           // model runs the search may spend; then the untried nodes stay float32
  int initial_groups = 8;      // the non-sensitive nodes are first tried in this many runs of file order
  // A trial runs only from the latest of this many checkpoints (named main-graph nodes spread over the
  // graph) before which it equals the state last kept, fed that state's values there (amp_suffix.h);
  // 0: every trial runs the whole model. The decisions are the same either way.
  int checkpoints = 32;
};

// Converts the model `h` edits, as one undo step. `feeds` are the inputs tolerance is checked on (one
// set or several). The report lists each node kept float32 and the error it caused in float16. Throws
// TransformError when even the model with every candidate node kept float32 breaks the tolerance.
Report convert_amp(ir::History& h, const AmpOptions& options, const std::vector<Feeds>& feeds);

}  // namespace tessera::transforms
