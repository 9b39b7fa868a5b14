// The type checker: structure, schemas and shape inference over a whole model, subgraphs and
// local functions included, producing the diagnostics list.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "check/diagnostic.h"
#include "ir/model.h"
#include "ir/type.h"

namespace tessera::check {

struct CheckOptions {
  // Also report names that are not valid C identifiers (for the code exporters).
  bool check_identifiers = false;
  // Stop collecting after this many diagnostics (a broken 50,000-node model should not print 50,000).
  size_t max_diagnostics = 1000;
};

struct CheckResult {
  Diagnostics diagnostics;
  // Inferred type of every value of the main graph that could be typed (graph inputs, initializers,
  // node outputs), by name.
  std::unordered_map<std::string, ir::Type> value_types;
};

CheckResult check_model(const ir::Model& model, const CheckOptions& options = {});

// True when `name` is a valid C identifier ([A-Za-z_][A-Za-z0-9_]*), the rule the exporters need.
bool is_c_identifier(std::string_view name);

}  // namespace tessera::check
