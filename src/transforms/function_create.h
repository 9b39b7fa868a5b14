// `tessera function create`: a connected group of main-graph nodes made into a local function and
// replaced by one call (the seeds' "Group" into a template). Several groups with the same structure
// (one per --prefix, e.g. each encoder layer) become one function with a call each; attributes that
// differ between the groups become attribute parameters of the function, set by each call.
#pragma once

#include <string>
#include <vector>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct FunctionCreateOptions {
  std::string name;
  std::string domain = "local";
  std::vector<std::string> nodes;     // one group: these node names
  std::vector<std::string> prefixes;  // or one group per prefix: the nodes whose names start with it
};

// As one undo step. Values a group reads from outside become the function's inputs (initializers too,
// so each call passes its own weights), values read outside it its outputs. Throws TransformError,
// the model untouched, for a missing node, an empty group, a group that is not one block (a node
// outside it both reads from it and feeds it), groups of different structure, or a taken name.
Report create_function(ir::History& h, const FunctionCreateOptions& options);

}  // namespace tessera::transforms
