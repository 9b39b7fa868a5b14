// `tessera function create`: a connected group of main-graph nodes made into a local function and
// replaced by one call (the seeds' "Group" into a template). Several groups with the same structure
// (one per --prefix or --scope match, or found by --find-repeats: e.g. each encoder layer) become one
// function with a call each; attributes that
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
  // Or one group per distinct text an ECMAScript expression matches at the start of node names
  // ('/encoder/layer\.[0-9]+/attention/': each layer's attention block).
  std::string scope;
  // Or groups found without names: the longest run of contiguous blocks of the main graph (file order)
  // with the same operators that also pass the structure check (wiring, attribute kinds), the blocks
  // covering the most nodes; e.g. each layer of a stack. Attributes that differ become parameters.
  bool find_repeats = false;
};

// As one undo step. Values a group reads from outside become the function's inputs (initializers too,
// so each call passes its own weights), values read outside it its outputs. Throws TransformError,
// the model untouched, for a missing node, an empty group, a group that is not one block (a node
// outside it both reads from it and feeds it), groups of different structure, or a taken name.
Report create_function(ir::History& h, const FunctionCreateOptions& options);

}  // namespace tessera::transforms
