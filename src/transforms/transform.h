// What every model transformation shares: its error type, its report, fresh names, and how its result
// enters a model's edit history as one undo step.
//
// A transformation computes its result on a copy of the model (tensors are shared buffers, so the copy
// costs the node and value lists, not the weights) and then commits the difference as edit commands
// (src/ir/commands) inside one batch: the studio's menus and the `tessera` subcommands call the same
// functions, and one undo reverts a whole transformation.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/commands/history.h"
#include "ir/model.h"

namespace tessera::transforms {

// Refused input (a block list naming a missing node, a cut that does not separate the graph...). The
// message names what is wrong and where; the model is left as it was.
class TransformError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a transformation did: counts for the short log, warnings always shown, details for --verbose.
struct Report {
  std::vector<std::pair<std::string, int64_t>> counts;  // in the order first counted
  std::vector<std::string> warnings;
  std::vector<std::string> details;

  void add(std::string_view what, int64_t n = 1);
  int64_t get(std::string_view what) const;  // 0 when never counted
};

// Every value, initializer and node name of a model (all graphs, subgraphs and function bodies), to
// make names that collide with none of them.
class NameTable {
 public:
  explicit NameTable(const ir::Model& m);
  explicit NameTable(const ir::Graph& g);
  // `base` when free, else base_1, base_2...; the name is taken from then on.
  std::string fresh(std::string_view base);
  bool taken(const std::string& name) const { return names_.count(name) != 0; }

 private:
  void add_graph(const ir::Graph& g);
  std::unordered_set<std::string> names_;
};

// Records `transformed`, a transformed copy of h.model(), as one undo step named `name`: the main graph
// replaced by one command, each function added, removed or replaced by one, opset imports set. Records
// nothing when nothing changed; returns whether something did.
bool commit(ir::History& h, const std::string& name, ir::Model transformed);

// The values `g` reads (node inputs, graph outputs, nested graphs) that neither it nor a graph nested
// in it defines: what it takes from enclosing scopes, in order of first use.
std::vector<std::string> outer_values(const ir::Graph& g);

// The element type a float32 type becomes: tensor(float) -> tensor(to), also inside sequences and
// optionals; other types unchanged. Sets *changed when it changed something.
ir::Type retype_float(const ir::Type& t, ir::DataType to, bool* changed = nullptr);

}  // namespace tessera::transforms
