// Sanitize's folding of single shape elements: Gather or Slice of a Shape whose selected dimensions are
// static becomes a constant even when other dimensions are symbolic. Exporters rebuild reshape targets
// one dimension at a time (Shape -> Gather(1) -> Unsqueeze -> Concat), and a symbolic batch size keeps the
// whole Shape from folding (fold_shape folds fully static shapes only), so without this every attention
// block of a dynamic-batch export keeps its shape arithmetic. Once an element is a constant, the engine's
// fold_constants folds what follows (Unsqueeze, Mul, Div of constants...).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/type.h"

namespace tessera::transforms {

// Replaces every such Gather / Slice of `g` by an int64 initializer; returns how many. `types` are the
// checker's value types of `g` (a value it has no type for is left alone). A graph output is never
// replaced. `details` gets one line per fold.
int fold_shape_elements(ir::Graph& g, const std::unordered_map<std::string, ir::Type>& types,
                        std::vector<std::string>& details);

}  // namespace tessera::transforms
