// What the transformation subcommands (convert, sanitize, set-shapes, extract) share: MODEL, -o OUT,
// --in-place and --verbose; loading; saving atomically (never over the input unless --in-place, and
// with external data past protobuf's 2 GiB limit); and the short log.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ir/model.h"
#include "transforms/transform.h"

namespace tessera::cli {

struct TransformIo {
  std::string model;
  std::string output;
  bool in_place = false;
  bool verbose = false;
};

// Adds MODEL, --output/-o, --in-place (unless `allow_in_place` is false: extraction makes a new model)
// and --verbose to `cmd`.
std::shared_ptr<TransformIo> add_transform_io(CLI::App* cmd, bool allow_in_place = true);

// Runs one transformation: checks the paths, loads MODEL, calls `transform` (which edits the model
// through its own history, or builds a new one) and saves the result where -o says. Errors, from a bad
// path to a TransformError, are printed as "tessera NAME: ..." and set `status`; the input is never
// changed on failure.
void run_transform(const std::string& name, const TransformIo& io, int& status,
                   const std::function<transforms::Report(ir::Model&)>& transform);

void print_report(const transforms::Report& r, bool verbose);

}  // namespace tessera::cli
