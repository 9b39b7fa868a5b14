// The values of a model's shape chains for given input sizes, for the planned-memory check
// (run_memory.h). Exporters compute reshape targets from a tensor's shape through Shape -> Gather ->
// Unsqueeze -> Concat chains; the session's optimiser folds those whose sizes are static, but a chain
// that starts from a free dimension (ViT's batch) stays, and shape inference does not carry values
// through it: every value the Reshape makes, and all that follows, has an unknown size.
#pragma once

#include "ir/model.h"

namespace tessera::cli {

// Replaces, in `m` (graph inputs typed with this run's sizes), each node computing a small value from
// sizes and constants alone by an initializer holding it: Shape and Size of a value whose shape
// inference knows, and nodes whose inputs are all such constants and whose outputs are small, computed
// by the CPU kernels. Repeats while a round makes more shapes known (each Reshape made static lets the
// Shape after it fold). Nodes reading a large tensor, with subgraphs or random outputs are left alone.
// Returns how many nodes were folded.
size_t fold_shape_values(ir::Model& m);

}  // namespace tessera::cli
