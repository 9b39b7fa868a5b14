// `tessera extract`: part of a model as a standalone model. A subgraph (If/Loop/Scan body, found through
// its parent nodes at any depth) or a local function's body, whose outer-scope values become graph
// inputs (outer initializers come along as initializers); or a cut of the main graph between named
// values, as onnx.utils.extract_model makes, also for models whose weights are in external data.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct ExtractOptions {
  // Exactly one of the three.
  std::string subgraph;  // "NODE:ATTR[/NODE:ATTR...]"; ATTR[k] picks element k of a graphs attribute
  std::string function;  // "DOMAIN:NAME" (or "NAME" for a function without a domain)
  std::vector<std::string> inputs, outputs;  // a cut of the main graph
};

// The extracted model, which type-checks. Throws TransformError naming what is wrong: a node or
// attribute the path does not find, a function the model lacks, a cut value the graph does not have, a
// cut that does not separate the graph (an output depends on a model input the cut does not list).
ir::Model extract(const ir::Model& m, const ExtractOptions& options, Report& report);

}  // namespace tessera::transforms
