// Sanitize's merging of equal small constants: exporters write one initializer per use of the same value
// (Unsqueeze's axes [0], Slice's axes [-1], a shape element), so nodes that compute the same thing read
// differently named inputs and common-subexpression elimination, which compares input names, misses
// them. Pointing every reader at the first of equal initializers lets it merge those nodes.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera::transforms {

// Initializers of `g` of at most `max_bytes` bytes (in memory, not graph inputs or outputs, not read
// inside a subgraph) equal in type, shape and bytes to an earlier one are read as that one instead;
// returns how many were redirected (and removed: nothing reads them any more). `details` gets one line each.
int merge_equal_constants(ir::Graph& g, std::vector<std::string>& details, size_t max_bytes = 4096);

}  // namespace tessera::transforms
