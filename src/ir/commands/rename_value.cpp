#include "ir/commands/rename_value.h"

#include <fmt/format.h>

#include "ir/commands/scope.h"

namespace tessera::ir {

namespace {
void rename_in(std::string& s, const std::string& from, const std::string& to) {
  if (s == from) s = to;
}
void rename_in(std::vector<ValueInfo>& list, const std::string& from, const std::string& to) {
  for (ValueInfo& v : list) rename_in(v.name, from, to);
}
}  // namespace

void rename_value_in_scope(Graph& g, const std::string& from, const std::string& to) {
  rename_in(g.inputs, from, to);
  rename_in(g.outputs, from, to);
  rename_in(g.value_info, from, to);
  for (Tensor& t : g.initializers) rename_in(t.name, from, to);
  for (SparseTensor& t : g.sparse_initializers) rename_in(t.values.name, from, to);
  for (Node& n : g.nodes) {
    for (std::string& s : n.inputs) rename_in(s, from, to);
    for (std::string& s : n.outputs) rename_in(s, from, to);
  }
  for_each_direct_subgraph(g, [&](Graph& sub) {
    if (!defines_value(sub, from)) rename_value_in_scope(sub, from, to);
  });
}

RenameValue::RenameValue(GraphPath path, std::string from, std::string to)
    : GraphCommand(std::move(path)), from_(std::move(from)), to_(std::move(to)) {}

void RenameValue::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Graph& g = *scopes.back();
  if (from_.empty() || to_.empty()) throw CommandError("value names cannot be empty");
  if (from_ == to_) throw CommandError(fmt::format("value '{}' already has that name", from_));
  if (!mentions_value(g, from_)) {
    throw CommandError(fmt::format("value '{}' does not exist in graph {}", from_, graph_label(g)));
  }
  if (const Graph* outer = defines_value(g, from_) ? nullptr : outer_definition(scopes, from_)) {
    throw CommandError(fmt::format("value '{}' belongs to the enclosing graph {}; rename it there", from_,
                                   graph_label(*outer)));
  }
  if (subtree_mentions(g, to_)) {
    throw CommandError(fmt::format("a value named '{}' already exists in graph {}", to_, graph_label(g)));
  }
  if (const Graph* outer = outer_definition(scopes, to_)) {
    throw CommandError(
        fmt::format("a value named '{}' already exists in graph {}", to_, graph_label(*outer)));
  }
  rename_value_in_scope(g, from_, to_);
}

// `to` appeared nowhere before apply, so renaming it back restores every place exactly, and graphs
// that shadowed `from` contain no `to` to touch.
void RenameValue::undo(Model& m) {
  rename_value_in_scope(graph(m), to_, from_);
}

std::string RenameValue::description() const {
  return fmt::format("Rename value '{}' to '{}'", from_, to_);
}

}  // namespace tessera::ir
