// What an edit changed, for whoever shows the model (the studio redraws from these) and whoever keeps
// results derived from it (incremental diagnostics). Commands report them themselves: no diffing.
#pragma once

#include <string_view>
#include <vector>

#include "ir/commands/graph_path.h"

namespace tessera::ir {

struct Change {
  enum class Kind {
    kNodeAdded,            // `node` now exists in the graph at `path`
    kNodeRemoved,          // `node` no longer exists there
    kNodeChanged,          // its name, attributes, inputs or outputs (or a subgraph below it) changed
    kGraphIoChanged,       // the graph's inputs or outputs
    kInitializersChanged,  // the graph's initializers
    kValueInfoChanged,     // the types recorded for the graph's values (value_info)
    kModelChanged,         // opset imports, functions or metadata
  };
  Kind kind;
  GraphPath path;  // the graph; main for kModelChanged
  NodeId node = 0;

  bool operator==(const Change& o) const = default;
};

// "node_added", "graph_io_changed"...: the spelling of the studio's API.
std::string_view change_kind_name(Change::Kind k);

}  // namespace tessera::ir
