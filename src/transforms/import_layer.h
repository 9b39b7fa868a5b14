// `tessera import-layer`: another model imported as a local function, usable as a layer (the seeds'
// "Import Model as Layer"). Its initializers become Constant nodes of the body (functions hold no
// initializers), its own local functions come along, and the model imports the function's domain.
#pragma once

#include <string>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct ImportLayerOptions {
  std::string name;              // the function's name, the op type of the nodes that call it
  std::string domain = "local";  // its domain
};

// As one undo step. Throws TransformError, the model untouched, for an empty or taken name, a local
// function of `other` that clashes with a different one of the model, or a model older than IR 8
// (the first with local functions).
Report import_layer(ir::History& h, const ir::Model& other, const ImportLayerOptions& options);

}  // namespace tessera::transforms
