// Sanitize's dead-node removal in one backward pass: a node none of whose outputs is read (by a later
// node, a subgraph or the graph outputs) goes, unless its operator has no known schema (a custom operator
// may have effects outside the graph), as the engine's eliminate_dead_nodes decides. That rule removes one
// node at a time, each removal a pass over the graph: quadratic when folding leaves thousands of dead
// Shape and Gather nodes, as on the 50,000-node benchmark graph.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"

namespace tessera::transforms {

// Removes the dead nodes of `g` (a graph of `m`, for the operators' opset versions); returns how many.
int remove_dead_nodes(const ir::Model& m, ir::Graph& g, std::vector<std::string>& details);

}  // namespace tessera::transforms
