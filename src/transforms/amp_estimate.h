// convert amp's per-node sensitivity estimate, from two instrumented runs: the float32 model and its
// float16 conversion, each run once with every float value of the main graph fetched. For each value
// the error of the float16 run relative to the value's magnitude (root mean square of the difference
// over root mean square of the float32 value); for each node, how much that relative error grows
// through it: the largest relative error of its float outputs less the largest of its inputs' (graph
// inputs and initializers count as exact, so rounding a node's weights is its own). A node that only
// moves float16 values around adds nothing; one that rounds its weights, accumulates or cancels adds
// its share. The search hands nodes to float16 in the order of this estimate.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/model.h"
#include "runtime/session.h"
#include "transforms/amp_suffix.h"

namespace tessera::transforms {

// The nodes of Loop, Scan and If bodies, at any depth, are measured too: those nodes hand their bodies'
// float values out as extra outputs, level by level up to the main graph (a Loop or Scan stacked over
// its iterations, an If both branches', the one that did not run an empty tensor) and each body node
// gets its own growth, a loop-carried input counting the error of its initial value and of what the body
// hands on. Where the model cannot run so (a body value that changes shape between iterations cannot be
// stacked), body nodes take their main-graph node's estimate. Local functions are inlined for the two runs
// (as the session would), so a function body's node gets the most it adds in any of its calls.
struct ErrorGrowth {
  std::unordered_map<std::string, double> by_node;   // node name (main graph, bodies) -> growth (>= 0)
  std::unordered_map<std::string, double> relative;  // value -> relative error in the float16 run
  bool bodies_measured = false;                      // whether the bodies' values were fetched
};

// Runs `original` and `low` (a float16 conversion of it keeping the value names) on `feeds`. Throws what
// the session throws.
ErrorGrowth estimate_error_growth(const ir::Model& original, const ir::Model& low,
                                  const rt::SessionOptions& options, const Feeds& feeds);

}  // namespace tessera::transforms
