// Pieces shared by If, Loop and Scan.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ops/infer.h"

namespace tessera::ops {

// (since-version, tensor types) of every version of If and Loop, whose value types grew with the IR:
// tensors, then sequences (13), optionals (16), and the element types of each later IR version.
std::vector<std::pair<int, std::vector<std::string>>> if_loop_versions();

// The graph attribute `name`; nullptr when absent (the checker reports a missing required attribute).
const ir::Graph* graph_attr(const InferenceContext& ctx, std::string_view name);

// Fails unless input i, when its shape is known, holds exactly one element (a scalar or [1]).
void require_single_element(const InferenceContext& ctx, size_t i, std::string_view name);

}  // namespace tessera::ops
