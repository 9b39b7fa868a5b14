// Findings of the type checker: the studio's type-check list, `tessera check`'s output.
#pragma once

#include <string>
#include <vector>

namespace tessera::check {

enum class Severity { kError, kWarning, kInfo };
std::string_view severity_name(Severity s);

struct Diagnostic {
  Severity severity = Severity::kError;
  // Where: the graph path ("main", "main/if_1.then_branch", "function custom.Block"), then the node
  // (name and op type; empty for graph-level findings) and the input or output index (-1: none).
  std::string graph;
  std::string node;
  std::string op_type;
  int node_index = -1;  // position in its graph, which names nodes that have no name
  int input_index = -1;
  int output_index = -1;
  std::string message;  // a whole sentence naming what is wrong

  std::string to_string() const;  // "error: main: node 'conv_1' (Conv): mandatory input 1 ..."
};

struct Diagnostics {
  std::vector<Diagnostic> items;
  size_t count(Severity s) const;
  bool has_errors() const { return count(Severity::kError) > 0; }
};

}  // namespace tessera::check
