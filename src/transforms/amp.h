// `tessera convert amp`: automatic mixed precision. As many nodes as possible in float16 while every
// output stays within atol + rtol * |reference| of the float32 model on the given inputs, checked by
// running Tessera's engine.
//
// Instead of onnxconverter-common's loop that tries one node at a time, it ranks the nodes by an estimate
// and searches over groups. Run 1: the whole model in float16 (done if it passes); run 2: every candidate
// float32 (must pass). Then two instrumented runs (amp_estimate.h: the float32 model and the whole model
// in float16, every value fetched) estimate how much relative error each node adds in float16; the
// candidates are ranked by it (at equal estimate, operators that only move data first, the known-sensitive
// ones last, then file order). The longest prefix of the ranking that passes is found by interpolating
// the squared error over the running sum of squared estimates (bisecting where that stalls); the rest are
// tried on top of it as groups of neighbours (file order), a failing group split breadth first in as many
// parts as it was times over the tolerance (2 to 8) while the run budget can still try every part and
// every group queued. So no group goes untried while runs are left: a node stays float32 because its own
// run, or its group's, broke the tolerance. Each state kept was run, so the result is within tolerance.
// Candidates: named nodes of the main graph, If/Loop/Scan bodies and local function bodies (typed from
// their calls). Weights are converted once for all runs.
#pragma once

#include <functional>
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
  // The share of the tolerance left unused on the tuning inputs, for inputs the search did not see: a
  // state is kept when its worst error there is within (1 - headroom) of the tolerance. (Tuned to 1.0x,
  // the 4-layer encoder's result reached 1.22x on other inputs.)
  double headroom = 0.2;
  double limit() const { return 1.0 - headroom; }
  rt::SessionOptions session;  // how the model runs (backend, threads, optimisation)
  bool keep_io_types = true;   // inputs and outputs stay float32, so the same feeds run both models
  // The search's budget in whole-model runs (the two instrumented runs not counted): a trial that runs
  // only from a checkpoint counts the share of the model's nodes it ran.
  int max_runs = 40;
  // A trial runs only from the latest of this many checkpoints (named main-graph nodes spread over the
  // graph) before which it equals the state last kept, fed that state's values there (amp_suffix.h);
  // 0: every trial runs the whole model. The decisions are the same either way.
  int checkpoints = 32;
  // Called before each trial run with the share of the run budget spent (0 to 1), for a progress bar.
  // It may throw to stop the search (the studio's Cancel): the model `h` edits is then left as it was.
  std::function<void(double)> progress;
};

// Other input sets for the search to hold the tolerance on besides the given ones (one extra set held
// the 4-layer encoder's result within tolerance on unseen inputs where the given set alone did not):
// each input's elements shuffled (the same values in another order: token ids in other positions, an
// image's pixels moved), except inputs whose values are all 0 or 1 (attention masks, segment ids),
// which keep their layout. `seed` makes them reproducible.
std::vector<Feeds> shuffled_feeds(const Feeds& feeds, int sets, uint64_t seed);

// Converts the model `h` edits, as one undo step. `feeds` are the inputs tolerance is checked on (one
// set or several). The report lists each node kept float32 and the error it caused in float16. Throws
// TransformError when even the model with every candidate node kept float32 breaks the tolerance.
Report convert_amp(ir::History& h, const AmpOptions& options, const std::vector<Feeds>& feeds);

}  // namespace tessera::transforms
