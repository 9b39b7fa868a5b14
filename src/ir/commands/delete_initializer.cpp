#include "ir/commands/delete_initializer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "ir/commands/ir_json.h"
#include "ir/commands/scope.h"
#include "ir/commands/value_commands.h"
#include "ir/commands/wiring_commands.h"

namespace tessera::ir {

DeleteInitializer::DeleteInitializer(GraphPath path, std::string name)
    : GraphCommand(std::move(path)), name_(std::move(name)) {}

// Disconnects, last input first, so that dropping a trailing input never moves one still to come.
void DeleteInitializer::collect(const Graph& g, const GraphPath& p, BatchCommand& batch) const {
  for (const Node& n : g.nodes) {
    for (size_t k = n.inputs.size(); k-- > 0;) {
      if (n.inputs[k] == name_) batch.add(std::make_unique<Disconnect>(p, n.id, k));
    }
    for (const Attribute& a : n.attributes) {
      for (size_t i = 0; i < a.graphs.size(); ++i) {
        const Graph& sub = *a.graphs[i];
        if (!defines_value(sub, name_)) collect(sub, p.sub(n.id, a.name, i), batch);
      }
    }
  }
}

// Graph outputs that name the initializer, in `g` and in the subgraphs that see it ("output 0 of graph
// main").
void DeleteInitializer::outputs_naming(const Graph& g, std::vector<std::string>& found) const {
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    if (g.outputs[k].name == name_) found.push_back(fmt::format("output {} of graph {}", k, graph_label(g)));
  }
  for (const Node& n : g.nodes) {
    for (const Attribute& a : n.attributes) {
      for (const auto& sub : a.graphs) {
        if (!defines_value(*sub, name_)) outputs_naming(*sub, found);
      }
    }
  }
}

void DeleteInitializer::apply(Model& m) {
  const Graph& g = graph(m);
  if (!g.find_initializer(name_)) {
    throw CommandError(fmt::format("initializer '{}' does not exist in graph {}", name_, graph_label(g)));
  }
  // A graph output naming it cannot be disconnected as a node input is (an output has no empty form, and
  // dropping it would change what the graph, or the If/Loop around a subgraph, returns): refused, naming
  // each such output, before anything changes.
  std::vector<std::string> outputs;
  if (!g.find_input(name_)) outputs_naming(g, outputs);
  if (!outputs.empty()) {
    throw CommandError(
        fmt::format("initializer '{}' is returned by {}: remove that output or give it another value first",
                    name_, fmt::join(outputs, ", ")));
  }
  // Recomputed on redo from the same state, so it finds the same inputs.
  auto steps = std::make_unique<BatchCommand>(description());
  if (!g.find_input(name_)) collect(g, path_, *steps);
  steps->add(std::make_unique<RemoveInitializer>(path_, name_));
  steps->apply(m);
  steps_ = std::move(steps);
}

void DeleteInitializer::undo(Model& m) {
  steps_->undo(m);
}

std::string DeleteInitializer::description() const {
  return fmt::format("Delete initializer '{}'", name_);
}

nlohmann::json DeleteInitializer::to_json() const {
  nlohmann::json j{{"type", "delete_initializer"}, {"name", name_}};
  if (path_ != GraphPath::main_graph()) j["path"] = graph_path_to_json(path_);
  return j;
}

void DeleteInitializer::changes(const Model& m, bool undone, std::vector<Change>& out) const {
  if (steps_) steps_->changes(m, undone, out);
}

}  // namespace tessera::ir
