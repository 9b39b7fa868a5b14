// Removing redundant Casts after a precision conversion, across subgraph boundaries too.
//
// The float16 conversion gives each value at most one Cast per direction per graph, but a graph cannot
// see what its neighbours do: a branch of If that computes in float32 casts its result to float16 for
// the If, and a float32 reader after the If casts it straight back; a model's own Cast can become one
// from float16 to float16. This pass finds, in the main graph and every If/Loop/Scan body below it:
//
//   - a Cast whose input already has its target type (its readers read the input);
//   - a Cast to T of the output of a Cast (in the same graph or an enclosing one) whose input is T, both
//     float types (its readers read that input: the round trip through the other type is dropped);
//   - a control-flow output that every body makes with a Cast from T and that the parent only casts
//     back to T: the bodies hand on T and the parent's Casts go (If's outputs, the scan outputs of
//     Loop and Scan);
//   - a loop-carried value (Loop or Scan state) whose initial value is a Cast from T, which the body
//     reads only through Casts back to T and makes with a Cast from T, and which the parent reads only
//     through Casts to T: it is carried in T, the loop reading the first Cast's input; no Cast is added.
//
// Casts left with no reader go too. Dropping a round trip through float16 keeps more precision, never
// less. Local function bodies are left alone: their types depend on each call.
#pragma once

#include "ir/model.h"
#include "transforms/transform.h"

namespace tessera::transforms {

// Rewrites `m` in place (it must type-check); returns how many Casts were removed, also counted in
// report as "redundant Casts removed" with one detail line per Cast.
int remove_redundant_casts(ir::Model& m, Report& report);

}  // namespace tessera::transforms
