// Replaces calls of model-local functions by their bodies, so that the executor (and the other passes)
// only ever see operators that have kernels. Runs before every other pass.
#pragma once

#include "ir/model.h"

namespace tessera::passes {

// Inlines every call (nested calls too, in subgraphs too); returns how many calls were replaced.
// Throws std::runtime_error on a recursive function.
int inline_functions(ir::Model& model);

}  // namespace tessera::passes
