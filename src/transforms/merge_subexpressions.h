// Sanitize's common-subexpression elimination in one pass: a node computing exactly what an earlier node
// computes (same operator, domain, attributes and inputs, after the earlier merges) is removed and its
// readers read the earlier node's outputs. The engine's rule (eliminate_common_subexpressions) compares
// each node with every earlier one and rewrites the readers of each merge over the whole graph, which is
// quadratic in the merges: on the 50,000-node benchmark graph, whose merged constants make thousands of
// Unsqueeze(batch, [0]) alike, it took minutes. This keeps its rules (no random operators, no nodes with
// subgraphs or with graph outputs) and hashes the nodes instead.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera::transforms {

// Returns how many nodes were removed; `details` gets one line each. Values read inside subgraphs are
// never merged away (their readers there would need renaming too).
int merge_common_subexpressions(ir::Graph& g, std::vector<std::string>& details);

}  // namespace tessera::transforms
