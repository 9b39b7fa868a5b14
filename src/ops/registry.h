// The operator registry: every schema of every version, looked up by (domain, name, opset version).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ir/model.h"
#include "ops/schema.h"

namespace tessera::ops {

class OpRegistry {
 public:
  // The registry of all built-in operators, filled on first use.
  static const OpRegistry& global();

  void add(OpSchema schema);

  // The schema that an import of `opset_version` of `domain` binds `name` to: the highest since-version
  // not above it. nullptr when the operator is unknown or newer than the import.
  const OpSchema* find(std::string_view domain, std::string_view name, int opset_version) const;
  // Every version of one operator, oldest first; empty when unknown.
  std::vector<const OpSchema*> versions(std::string_view domain, std::string_view name) const;
  // Every schema, ordered by domain, name, version.
  std::vector<const OpSchema*> all() const;
  // Highest opset version known for a domain (its newest since-version).
  int latest_version(std::string_view domain) const;

 private:
  // domain -> name -> versions (sorted). Nested maps with transparent comparison let lookups use
  // string_views straight from the node, with no string built per lookup.
  using Versions = std::vector<OpSchema>;
  std::map<std::string, std::map<std::string, Versions, std::less<>>, std::less<>> ops_;
  const Versions* lookup(std::string_view domain, std::string_view name) const;
};

// Each op file defines one registration function through this macro; the build collects them all
// (CMake scans src/ops for TESSERA_REGISTER_OPS) into register_all_ops().
#define TESSERA_REGISTER_OPS(tag) void tessera_register_ops_##tag(::tessera::ops::OpRegistry& reg)

void register_all_ops(OpRegistry& reg);  // generated

}  // namespace tessera::ops
