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

struct ErrorGrowth {
  std::unordered_map<std::string, double> by_node;   // main-graph node name -> growth (>= 0)
  std::unordered_map<std::string, double> relative;  // value -> relative error in the float16 run
};

// Runs `original` and `low` (a float16 conversion of it keeping the value names) on `feeds`. Throws what
// the session throws.
ErrorGrowth estimate_error_growth(const ir::Model& original, const ir::Model& low,
                                  const rt::SessionOptions& options, const Feeds& feeds);

}  // namespace tessera::transforms
