// The studio's Model menu: the library's model transformations (src/transforms) applied to an open
// document through its edit history, so that one undo reverts a whole transformation. The same
// functions as the `tessera` subcommands, with the same options (docs/studio-api.md, "Transformations").
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "server/document.h"

namespace tessera::server {

// A path an option names (the model "import_layer" imports) as a file the studio may read; throws
// HttpError (outside the root: 403, missing: 404) otherwise.
using PathResolver = std::function<std::filesystem::path(const std::string&)>;

// Runs transformation `name` ("fp16", "bf16", "sanitize", "convert_tensors", "set_shapes",
// "function_create", "function_inline", "function_delete", "import_layer") with `options` on the
// document. Returns the
// transformation's log: {"counts": [[what, n]...], "warnings": [...], "details": [...], "changed": bool};
// the edit's changes are left in `changes`. Bad options are HttpError 400 naming the field; a refusal of
// the transformation (TransformError: a block list naming a missing node...) is HttpError 422 with its
// message, the document unchanged.
json run_transform(Document& doc, const std::string& name, const json& options,
                   std::vector<ir::Change>& changes, const PathResolver& resolve);

}  // namespace tessera::server
