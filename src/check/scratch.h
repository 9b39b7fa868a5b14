// Buffers the check of one node needs; see Checker::scratch_.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/type.h"

namespace tessera::check {

// Type-parameter binding for one node: per type parameter, the type bound to it.
struct TypeBinding {
  struct Bound {
    std::string_view param;  // points into the schema
    ir::Type type;           // without shape
    size_t input;            // the input that bound it, for messages
  };
  std::vector<Bound> bound;
  const ir::Type* find(std::string_view param) const;
};

struct NodeScratch {
  std::vector<std::optional<ir::Type>> outputs;
  std::vector<std::optional<std::vector<ir::Dim>>> shape_values;
  std::vector<const ir::Type*> in_types;
  std::vector<const ir::Graph*> visited;
  TypeBinding binding;
};

}  // namespace tessera::check
