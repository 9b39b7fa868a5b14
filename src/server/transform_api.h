// The studio's Model menu: the library's model transformations (src/transforms) applied to an open
// document through its edit history, so that one undo reverts a whole transformation. The same
// functions as the `tessera` subcommands, with the same options (docs/studio-api.md, "Transformations").
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "server/document.h"
#include "server/transform_jobs.h"
#include "transforms/amp.h"

namespace tessera::server {

// A path an option names (the model "import_layer" imports) as a file the studio may read; throws
// HttpError (outside the root: 403, missing: 404) otherwise.
using PathResolver = std::function<std::filesystem::path(const std::string&)>;

// What a transformation may use besides its options: the files it may read, and its job (progress and
// cancel) when it runs as one (null in a request).
struct TransformContext {
  PathResolver resolve;
  JobControl* job = nullptr;
};

// Runs transformation `name` ("fp16", "bf16", "sanitize", "convert_tensors", "set_shapes",
// "function_create", "function_inline", "function_delete", "import_layer", "amp") with `options` on the
// document, inside the request (the app runs them as jobs: transform_work below). Returns the
// transformation's log: {"counts": [[what, n]...], "warnings": [...], "details": [...], "changed": bool};
// the edit's changes are left in `changes`. Bad options are HttpError 400 naming the field; a refusal of
// the transformation (TransformError: a block list naming a missing node...) is HttpError 422 with its
// message, the document unchanged.
json run_transform(Document& doc, const std::string& name, const json& options,
                   std::vector<ir::Change>& changes, const PathResolver& resolve);

// amp's random inputs: the value every element of an integer (or boolean) input named `name` gets instead
// of random 1-9 (false): 1 for masks (the name, in any case, holds "mask" or "attention"), 0 for segment
// ids ("token_type", "segment"; these win); -1 for any other name.
int random_input_constant(const std::string& name);

// The input set amp tunes on (options "inputs", "shapes", "seed"; see transform_work): each graph input
// from its .npy file (a file `ctx` may read) or random. HttpError 400 naming the input or option.
transforms::Feeds amp_feeds(const ir::Model& m, const json& options, const TransformContext& ctx);

// What an edit answers (studio.cpp: the document, its changes and diagnostics).
using EditAnswer = std::function<json(Document&, const std::vector<ir::Change>&)>;
// Opens a model a job made (an extraction) as a new, unsaved document named `name`; returns its JSON.
using AdoptModel = std::function<json(ir::Model, const std::string& name)>;

// The work of a job running transformation `name` on `doc`: the transformations of run_transform, plus
// "amp" (automatic mixed precision: options "inputs" {NAME: .npy file}, "shapes" {NAME: "1x128"} for
// random inputs of symbolic shape, "seed", "rtol", "atol", "headroom", "backend" cpu|cuda|auto,
// "max_runs", "check_sets"), which edit the document as one undo step when they succeed (the answer:
// {"answer": edit answer with "log"}), and "extract" ("subgraph" NODE:ATTR[/...], "function" DOMAIN:NAME,
// or "inputs" and "outputs" for a cut), whose model opens as a new document ({"document", "log"}).
// The work runs on a copy of the model taken when it starts; HttpError 404 at once for an unknown name.
TransformJobs::Work transform_work(std::shared_ptr<Document> doc, const std::string& name, json options,
                                   PathResolver resolve, EditAnswer answer, AdoptModel adopt);

}  // namespace tessera::server
